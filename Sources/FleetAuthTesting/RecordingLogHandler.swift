// The log recorder needs swift-log, which only the Server trait brings (see Package.swift).
#if Server
    import Foundation
    public import Logging

    /// Every log line (message and metadata) an application writes, for hygiene checks.
    public final class LogRecorder: @unchecked Sendable {
        public init() {}
        private let lock = NSLock()
        private var stored: [String] = []
        public var lines: [String] { lock.withLock { stored } }
        public func append(_ line: String) { lock.withLock { stored.append(line) } }
    }

    public struct RecordingLogHandler: LogHandler {
        public let recorder: LogRecorder
        public var metadata: Logger.Metadata = [:]
        public var logLevel: Logger.Level = .trace

        public init(recorder: LogRecorder) {
            self.recorder = recorder
        }

        public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        public func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            recorder.append("\(event.level) \(event.message) \(merged)")
        }
    }

    extension Logger {
        /// A logger at trace level whose every line goes to `recorder`.
        public static func recording(to recorder: LogRecorder, label: String = "test") -> Logger {
            var logger = Logger(label: label) { _ in RecordingLogHandler(recorder: recorder) }
            logger.logLevel = .trace
            return logger
        }
    }
#endif
