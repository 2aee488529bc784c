import FleetAuthCore
import Foundation
package import Logging
import NIOConcurrencyHelpers

/// One JSON object per line on standard error, with the field names Google Cloud Logging reads from a container's
/// output (`severity`, `message`, `time`, `logging.googleapis.com/trace`), so Cloud Run and GKE show levels and
/// group a request's lines; other log collectors (Loki, Datadog, `jq`) read it as plain JSON.
///
/// Metadata becomes fields of the object (`fleetauth.kid`, …). A `trace_id` (from tracing) is written as
/// `logging.googleapis.com/trace`, prefixed `projects/PROJECT/traces/` when ``project`` is known.
package struct JSONLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let project: String?
    private let write: @Sendable (String) -> Void

    /// - Parameters:
    ///   - label: the logger's label, written as `logger`.
    ///   - project: the Google Cloud project for trace names, if known.
    ///   - write: where each line goes (standard error by default).
    package init(
        label: String,
        project: String? = nil,
        metadataProvider: Logger.MetadataProvider? = nil,
        write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardError
    ) {
        self.label = label
        self.project = project
        self.metadataProvider = metadataProvider
        self.write = write
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Cloud Logging's severity for a swift-log level.
    package static func severity(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "DEBUG"
        case .info: "INFO"
        case .notice: "NOTICE"
        case .warning: "WARNING"
        case .error: "ERROR"
        case .critical: "CRITICAL"
        }
    }

    package func log(event: LogEvent) {
        var fields = self.metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { $1 } }
        if let extra = event.metadata { fields.merge(extra) { $1 } }
        if let error = event.error { fields["error"] = .string(String(describing: error)) }
        var object: JSONObject = [
            "severity": .string(Self.severity(event.level)),
            "message": .string(event.message.description),
            "time": .string(RFC3339.format(Date())),
            "logger": .string(label),
        ]
        if case .string(let trace)? = fields.removeValue(forKey: "trace_id") {
            object["logging.googleapis.com/trace"] = .string(project.map { "projects/\($0)/traces/\(trace)" } ?? trace)
        }
        if case .string(let span)? = fields.removeValue(forKey: "span_id") {
            object["logging.googleapis.com/spanId"] = .string(span)
        }
        if event.level >= .warning {
            object["logging.googleapis.com/sourceLocation"] = [
                "file": .string(event.file), "line": .string(String(event.line)), "function": .string(event.function),
            ]
        }
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) where object[key] == nil {
            object[key] = Self.json(value)
        }
        write(JSONValue.object(object).jsonText)
    }

    private static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let value): .string(value.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let values):
            .object(
                values.sorted { $0.key < $1.key }.reduce(into: JSONObject()) { object, member in
                    object[member.key] = json(member.value)
                }
            )
        }
    }

    private static let lock = NIOLock()

    /// Writes a line to standard error, whole (lines of concurrent loggers never interleave).
    package static let standardError: @Sendable (String) -> Void = { line in
        let bytes = Array((line + "\n").utf8)
        lock.withLock {
            bytes.withUnsafeBufferPointer { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Foundation.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
    }
}

/// How a server command writes its log: swift-log's text lines, or ``JSONLogHandler``'s objects.
package enum LogFormat: String, CaseIterable, Sendable {
    case text
    case json

    private static let current = NIOLockedValueBox(LogFormat.text)

    /// The format chosen at start (text until ``bootstrap()``).
    package static var active: LogFormat { current.withLockedValue { $0 } }

    /// Makes this the process's log format: for JSON, every logger writes ``JSONLogHandler`` lines; with a metadata
    /// provider (tracing's), every line carries its metadata (the trace and span IDs). Call once, before the first
    /// logger is made.
    package func bootstrap(metadataProvider: Logger.MetadataProvider? = nil) {
        Self.current.withLockedValue { $0 = self }
        switch (self, metadataProvider) {
        case (.json, _):
            // Cloud Logging links a line to its trace by `projects/PROJECT/traces/ID`: the project from the
            // environment Google's runtimes set.
            let project = ProcessInfo.processInfo.environment["GOOGLE_CLOUD_PROJECT"].flatMap { $0.isEmpty ? nil : $0 }
            LoggingSystem.bootstrap(
                { label, provider in JSONLogHandler(label: label, project: project, metadataProvider: provider) },
                metadataProvider: metadataProvider
            )
        case (.text, let provider?):
            LoggingSystem.bootstrap(StreamLogHandler.standardError, metadataProvider: provider)
        case (.text, nil):
            break
        }
    }

    /// The failure a server command ends with, as an ERROR object on standard error.
    package static func fail(_ message: String) { report(message, severity: "ERROR") }

    /// A warning for the operator, as a WARNING object on standard error.
    package static func warn(_ message: String) { report(message, severity: "WARNING") }

    private static func report(_ message: String, severity: String) {
        let object: JSONObject = [
            "severity": .string(severity), "message": .string(message), "time": .string(RFC3339.format(Date())),
            "logger": "fleetauth",
        ]
        JSONLogHandler.standardError(JSONValue.object(object).jsonText)
    }

    /// A line for the operator on standard output (the addresses a server listens on): as is in text; in JSON, an
    /// INFO object like every log line, so a collector parses every line of the process.
    package static func announce(_ line: String) {
        if active == .json {
            let object: JSONObject = [
                "severity": "INFO", "message": .string(line), "time": .string(RFC3339.format(Date())),
                "logger": "fleetauth",
            ]
            print(JSONValue.object(object).jsonText)
        } else {
            print(line)
        }
        fflush(nil)
    }
}
