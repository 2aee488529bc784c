import FleetAuthCore
public import FleetAuthJWT
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Real RSA-2048 keys for the servers tests start, made once and kept between runs.
///
/// Every token server a test starts makes a key per token family, and the suite starts a hundred of them: in a
/// debug build, where BoringSSL's C code is not optimized, making those keys was a quarter of the suite's CPU time.
/// ``generator`` hands each request a key from a pool kept in `fleetauth-test-keys-UID` under the temporary
/// directory (one PEM file per key, the directory readable by its owner only). Once a process has handed out every
/// key of the pool, it makes a new one and adds it. No key is handed out twice in one process, so two servers of
/// one test never share a key; each comes with the identity asked for and a new key ID, as
/// ``ServiceAccountKey/generate(projectID:name:)`` makes them.
///
/// Only tests use this: the keys are written to disk unencrypted, and reused from one run to the next.
public enum TestKeys {
    /// A ``KeyGenerator`` for servers under test (`TokenServer`, `LocalStack`).
    public static let generator = KeyGenerator { projectID, name throws(ServiceAccountKeyError) in
        try await key(projectID: projectID, name: name)
    }

    /// A key for service account `name` in project `projectID`, whose RSA key no other call of this process got.
    public static func key(projectID: String, name: String) async throws(ServiceAccountKeyError) -> ServiceAccountKey {
        if let kept = pool.take() {
            return try ServiceAccountKey(projectID: projectID, name: name, privateKeyPEM: kept)
        }
        let made = try await ServiceAccountKey.generateDetached(projectID: projectID, name: name)
        if let pem = made.jsonObject["private_key"]?.stringValue { pool.keep(pem) }
        return made
    }

    /// ``key(projectID:name:)`` for synchronous code, such as a fixture's `static let`: when the pool has no key
    /// left, the new one is made on the calling thread.
    public static func keyNow(projectID: String, name: String) throws(ServiceAccountKeyError) -> ServiceAccountKey {
        if let kept = pool.take() {
            return try ServiceAccountKey(projectID: projectID, name: name, privateKeyPEM: kept)
        }
        let made = try ServiceAccountKey.generate(projectID: projectID, name: name)
        if let pem = made.jsonObject["private_key"]?.stringValue { pool.keep(pem) }
        return made
    }

    private static let pool = Pool(
        directory: FileManager.default.temporaryDirectory.appendingPathComponent("fleetauth-test-keys-\(getuid())").path
    )

    /// The kept keys, each handed out at most once per process.
    private final class Pool: Sendable {
        let directory: String
        /// The kept keys' files not handed out yet; nil until first read.
        private let unused = NIOLockedValueBox<[String]?>(nil)

        init(directory: String) {
            self.directory = directory
        }

        /// A kept key's PEM no other call got; nil when none is left (or none can be read).
        func take() -> String? {
            while let path = next() {
                if let pem = try? String(contentsOfFile: path, encoding: .utf8), pem.contains("PRIVATE KEY") {
                    return pem
                }
            }
            return nil
        }

        private func next() -> String? {
            unused.withLockedValue { unused in
                if unused == nil {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                    unused = names.filter { $0.hasSuffix(".pem") }.sorted().reversed().map { directory + "/" + $0 }
                }
                return unused?.popLast()
            }
        }

        /// Adds a key made now to the directory (written under a temporary name, then renamed: never half a file).
        func keep(_ pem: String) {
            let manager = FileManager.default
            guard
                (try? manager.createDirectory(
                    atPath: directory,
                    withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700]
                )) != nil
            else { return }
            let name = UUID().uuidString
            let partial = "\(directory)/.\(name).partial"
            guard manager.createFile(atPath: partial, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600])
            else { return }
            if rename(partial, "\(directory)/\(name).pem") != 0 { try? manager.removeItem(atPath: partial) }
        }
    }
}
