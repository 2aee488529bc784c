import CLibcrypto
import CryptoExtras
import Foundation

/// Where RS256 signatures are computed.
///
/// RSASSA-PKCS1-v1_5 is deterministic: every correct implementation gives the same bytes for the same key and
/// input, so the choice is one of speed only. swift-crypto (BoringSSL) is always there. On Linux, OpenSSL 3's
/// `libcrypto.so.3`, loaded at run time, signs RSA-2048 about twice as fast on CPUs with AVX-512 IFMA (OpenSSL has a
/// 52-bit-limb Montgomery multiplication for them; BoringSSL does not), and no faster without it. By default a
/// process uses libcrypto when it loads and the CPU has IFMA, else swift-crypto; `FLEETAUTH_RSA_BACKEND` set to
/// `libcrypto` or `swift-crypto` decides instead (`libcrypto` still falls back when the library cannot be loaded).
public enum RSABackend: String, Sendable, CaseIterable {
    case swiftCrypto = "swift-crypto"
    case libcrypto

    /// The backend this process signs with.
    public static let current: RSABackend = {
        let requested = ProcessInfo.processInfo.environment["FLEETAUTH_RSA_BACKEND"]
        if requested == RSABackend.swiftCrypto.rawValue { return .swiftCrypto }
        guard requested == RSABackend.libcrypto.rawValue || cpuHasIFMA else { return .swiftCrypto }
        return Libcrypto.load() == nil ? .libcrypto : .swiftCrypto
    }()

    /// Whether the CPU reports AVX-512 IFMA (Linux: `/proc/cpuinfo`).
    public static let cpuHasIFMA: Bool = {
        #if os(Linux)
            guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return false }
            return info.split(separator: "\n").contains { line in
                line.hasPrefix("flags") && line.split(separator: " ").contains("avx512ifma")
            }
        #else
            return false
        #endif
    }()
}

/// OpenSSL 3's libcrypto through the `CLibcrypto` loader.
public enum Libcrypto {
    /// Loads `libcrypto.so.3` once; nil on success, else why it could not be used.
    @discardableResult
    public static func load() -> String? { loadResult }

    private static let loadResult: String? = {
        var error = [CChar](repeating: 0, count: 256)
        guard clibcrypto_load("libcrypto.so.3", &error, error.count) == 0 else {
            return String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }()

    /// The library's version text, once loaded.
    public static var version: String? {
        guard load() == nil, let text = clibcrypto_version() else { return nil }
        return String(cString: text)
    }

    /// An RSA private key held by libcrypto.
    public final class PrivateKey: @unchecked Sendable {
        // An EVP_PKEY: immutable once read, and libcrypto allows concurrent signing with one key.
        private let pointer: UnsafeMutableRawPointer

        /// The private key of `key`, or nil when libcrypto is not loaded or refuses it.
        public convenience init?(_ key: ServiceAccountKey) { self.init(key.privateKey) }

        init?(_ key: _RSA.Signing.PrivateKey) {
            guard load() == nil else { return nil }
            let der = [UInt8](key.derRepresentation)
            guard let pointer = der.withUnsafeBufferPointer({ clibcrypto_private_key($0.baseAddress, $0.count) })
            else { return nil }
            self.pointer = pointer
        }

        deinit { clibcrypto_free_key(pointer) }

        /// RSASSA-PKCS1-v1_5 with SHA-256 over `message`, or nil if libcrypto failed.
        public func signSHA256(_ message: [UInt8]) -> [UInt8]? {
            var signature = [UInt8](repeating: 0, count: 1024)
            var length = signature.count
            let result = message.withUnsafeBufferPointer { input in
                signature.withUnsafeMutableBufferPointer { output in
                    clibcrypto_sign_sha256(pointer, input.baseAddress, input.count, output.baseAddress, &length)
                }
            }
            guard result == 0 else { return nil }
            return Array(signature.prefix(length))
        }
    }

    /// The libcrypto form of each key signed with so far (keys are few: one per family and rotation).
    static func cachedKey(for key: _RSA.Signing.PrivateKey) -> PrivateKey? {
        let der = key.derRepresentation
        cacheLock.lock()
        defer { cacheLock.unlock() }
        if let cached = cache[der] { return cached }
        guard let created = PrivateKey(key) else { return nil }
        if cache.count >= 64 { cache.removeAll() }
        cache[der] = created
        return created
    }

    private static let cacheLock = NSLock()
    nonisolated(unsafe) private static var cache: [Data: PrivateKey] = [:]
}
