import FleetAuthCore
import FleetAuthServerTesting
import FleetAuthTesting
import Foundation
import Logging
import NIOSSL
import ServiceLifecycle
import Testing

@testable import FleetAuthServerSupport

/// The certificate watcher polls the files on the injected clock: a replaced pair is served after one interval of
/// that clock, never because real time passed.
@Suite("Certificate watcher")
struct CertificateWatcherTests {
    /// A self-signed certificate and its key, written by `openssl` into `folder` as `name.pem` and `name.key`.
    static func pair(_ name: String, in folder: URL) throws -> (certificate: String, key: String) {
        let certificate = folder.appendingPathComponent("\(name).pem").path
        let key = folder.appendingPathComponent("\(name).key").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(SoftHSM.openssl, "openssl is needed"))
        process.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=\(name)", "-days", "1",
            "-keyout", key, "-out", certificate,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return (certificate, key)
    }

    /// Writes `source`'s bytes over `destination`: a new modification time, as an operator's copy gives.
    static func copy(_ source: String, to destination: String) throws {
        try Data(contentsOf: URL(fileURLWithPath: source)).write(to: URL(fileURLWithPath: destination))
    }

    @Test("a replaced pair is read after one interval of the injected clock; a broken one keeps the old")
    func pollsOnTheInjectedClock() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("watcher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try Self.pair("first", in: folder)
        let second = try Self.pair("second", in: folder)
        let served = (
            certificate: folder.appendingPathComponent("served.pem").path,
            key: folder.appendingPathComponent("served.key").path
        )
        try Self.copy(first.certificate, to: served.certificate)
        try Self.copy(first.key, to: served.key)
        let certificate = try ServerCertificate(certificatePath: served.certificate, keyPath: served.key)
        let firstLeaf = certificate.leaf

        let clock = ManualClock()
        let recorder = LogRecorder()
        let watcher = certificate.watcher(
            interval: .seconds(2),
            clock: clock,
            logger: .recording(to: recorder)
        )
        let running = Task { try await watcher.run() }
        defer { running.cancel() }

        // Replace both files; nothing changes until the watcher's clock reaches its next look.
        try Self.copy(second.certificate, to: served.certificate)
        try Self.copy(second.key, to: served.key)
        try await Waiting.until("the watcher sleeping on the manual clock") { clock.sleeperCount == 1 }
        #expect(certificate.leaf == firstLeaf)
        clock.advance(by: .seconds(2))
        try await Waiting.until("the reload logged") {
            recorder.lines.contains { $0.contains("TLS certificate reloaded") }
        }
        #expect(certificate.leaf != firstLeaf)
        let secondLeaf = certificate.leaf

        // A key that is not the certificate's: logged, and the served pair stays.
        try Self.copy(first.key, to: served.key)
        try await Waiting.until("the watcher sleeping again") { clock.sleeperCount == 1 }
        clock.advance(by: .seconds(2))
        try await Waiting.until("the failed reload logged") {
            recorder.lines.contains { $0.contains("TLS certificate not reloaded") }
        }
        #expect(certificate.leaf == secondLeaf)
    }
}
