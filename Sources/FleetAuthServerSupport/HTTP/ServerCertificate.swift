package import FleetAuthCore
import FleetAuthServerCore
import Foundation
package import Logging
import NIOCertificateReloading
import NIOConcurrencyHelpers
package import NIOCore
package import NIOSSL
package import ServiceLifecycle
import UnixSignals

/// A server's TLS certificate chain and private key, read from PEM files and read again on SIGHUP or when either file
/// changes: every new connection's handshake uses the current pair, connections already open keep theirs. A pair
/// that does not load (a half-written file, a key that does not match) is logged and the previous one kept.
///
/// One instance serves every listener of a process (REST, gRPC); ``watcher(interval:clock:logger:)`` is the service that
/// reloads it.
package final class ServerCertificate: CertificateReloader {
    /// The PEM file with the certificate chain, leaf first.
    package let certificatePath: String
    /// The PEM file with the private key.
    package let keyPath: String
    private struct Loaded {
        var chain: [NIOSSLCertificate]
        var key: NIOSSLPrivateKey
        var stamp: [Date?]
    }
    private let loaded: NIOLockedValueBox<Loaded>

    /// Reads the pair; a file that cannot be read or parsed, or a key that does not match the leaf, is a
    /// ``ServerCertificateError`` naming the file.
    package init(certificatePath: String, keyPath: String) throws(ServerCertificateError) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        loaded = NIOLockedValueBox(try Self.load(certificatePath: certificatePath, keyPath: keyPath))
    }

    package var sslContextConfigurationOverride: NIOSSLContextConfigurationOverride {
        let current = loaded.withLockedValue { $0 }
        var override = NIOSSLContextConfigurationOverride()
        override.certificateChain = current.chain.map { .certificate($0) }
        override.privateKey = .privateKey(current.key)
        return override
    }

    /// The current leaf certificate.
    package var leaf: NIOSSLCertificate { loaded.withLockedValue { $0.chain[0] } }

    /// The TLS 1.2 cipher suites every listener offers: ECDHE key exchange (forward secrecy) with AES-GCM or
    /// ChaCha20-Poly1305 only, the "intermediate" profile operators' scanners expect
    /// (<https://wiki.mozilla.org/Security/Server_Side_TLS>). No static-RSA key exchange and no CBC suites;
    /// TLS 1.3, offered too, has only AEAD suites with forward secrecy.
    package static let cipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// A server configuration that presents the current pair at every handshake: TLS 1.2 with ``cipherSuites``, or
    /// TLS 1.3.
    package func serverConfiguration(applicationProtocols: [String] = []) throws -> TLSConfiguration {
        var configuration = try TLSConfiguration.makeServerConfiguration(certificateReloader: self)
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = Self.cipherSuites
        if !applicationProtocols.isEmpty { configuration.applicationProtocols = applicationProtocols }
        return configuration
    }

    /// What a listener that builds its own pipeline (gRPC) runs on each accepted connection to add TLS with this
    /// pair, as ``serverConfiguration(applicationProtocols:)`` says.
    package func connectionInitializer(applicationProtocols: [String]) throws -> @Sendable (any Channel) throws -> Void
    {
        let context = try NIOSSLContext(configuration: serverConfiguration(applicationProtocols: applicationProtocols))
        return { channel in try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context)) }
    }

    /// Reads the files again if `force` or either changed since the last read; returns whether a new pair is in use.
    @discardableResult
    package func reload(force: Bool = false) throws(ServerCertificateError) -> Bool {
        let stamp = Self.stamp(certificatePath, keyPath)
        if !force, loaded.withLockedValue({ $0.stamp }) == stamp { return false }
        let new = try Self.load(certificatePath: certificatePath, keyPath: keyPath)
        loaded.withLockedValue { $0 = new }
        return true
    }

    /// The service that reloads the pair on SIGHUP and whenever a file's modification time changes (looked at every
    /// `interval` of `clock`: the system's in servers, a manual one in tests); a failed reload is logged as an error
    /// and the previous pair kept.
    package func watcher(interval: Duration = .seconds(2), clock: any WallClock = .system, logger: Logger)
        -> some Service
    {
        CertificateWatcher(certificate: self, interval: interval, clock: clock, logger: logger)
    }

    private static func stamp(_ paths: String...) -> [Date?] {
        paths.map { (try? FileManager.default.attributesOfItem(atPath: $0))?[.modificationDate] as? Date }
    }

    private static func load(certificatePath: String, keyPath: String) throws(ServerCertificateError) -> Loaded {
        let stamp = stamp(certificatePath, keyPath)
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw ServerCertificateError("\(certificatePath): cannot read a PEM certificate chain (\(error)).")
        }
        guard !chain.isEmpty else { throw ServerCertificateError("\(certificatePath): no certificate in the file.") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw ServerCertificateError("\(keyPath): cannot read a PEM private key (\(error)).")
        }
        // A key that is not the leaf's would fail every handshake: refuse it now.
        do {
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) },
                privateKey: .privateKey(key)
            )
            configuration.minimumTLSVersion = .tlsv12
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ServerCertificateError("\(keyPath) is not the private key of the certificate in \(certificatePath).")
        }
        return Loaded(chain: chain, key: key, stamp: stamp)
    }
}

/// A certificate or key file that cannot serve: which file, and why.
package struct ServerCertificateError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

private struct CertificateWatcher: Service {
    let certificate: ServerCertificate
    let interval: Duration
    let clock: any WallClock
    let logger: Logger

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
                    reload(force: true, reason: "SIGHUP")
                }
            }
            group.addTask {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    guard (try? await cancelWhenGracefulShutdown { try await clock.sleep(for: interval) }) != nil
                    else { return }
                    reload(force: false, reason: "the files changed")
                }
            }
        }
    }

    private func reload(force: Bool, reason: String) {
        do {
            if try certificate.reload(force: force) {
                logger.notice(
                    "TLS certificate reloaded",
                    metadata: .fleetauth([
                        "reason": .string(reason), "certificate": .string(certificate.certificatePath),
                    ])
                )
            }
        } catch {
            logger.error(
                "TLS certificate not reloaded; the previous one stays in use",
                metadata: .fleetauth(["error": .string(error.description)])
            )
        }
    }
}
