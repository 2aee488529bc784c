import FleetAuthJWT
import Foundation
import Testing

/// OpenSSL's libcrypto and swift-crypto must give the same RS256 signatures byte for byte (RSASSA-PKCS1-v1_5 is
/// deterministic), so which one signs is a question of speed only.
@Suite("RSA signing backends")
struct RSABackendTests {
    /// Where Debian and Ubuntu keep OpenSSL 3: when it is there, libcrypto must load (no silent skip).
    static let libcryptoInstalled = [
        "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "/usr/lib/aarch64-linux-gnu/libcrypto.so.3",
    ].contains { FileManager.default.fileExists(atPath: $0) }

    @Test(
        "libcrypto signs exactly as swift-crypto, for several keys and inputs",
        .enabled(if: libcryptoInstalled, "OpenSSL 3's libcrypto.so.3 is not installed here")
    )
    func sameSignatures() throws {
        #expect(Libcrypto.load() == nil, "\(Libcrypto.load() ?? "")")
        #expect(Libcrypto.version?.hasPrefix("OpenSSL 3") == true)
        var random = SystemRandomNumberGenerator()
        for key in [Fixtures.driverKey, Fixtures.consumerKey, Fixtures.strangerKey] {
            let signer = LocalKeySigner(key: key)
            for length in [0, 1, 55, 56, 64, 772, 10_000] {
                let input = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                let viaLibcrypto = try #require(Libcrypto.PrivateKey(key)?.signSHA256(input))
                let viaSwiftCrypto = try signer.signSynchronously(input, backend: .swiftCrypto)
                #expect(viaLibcrypto == viaSwiftCrypto, "key \(key.clientEmail), \(length) bytes")
                #expect(viaLibcrypto.count == 256)
                #expect(try signer.signSynchronously(input, backend: .libcrypto) == viaSwiftCrypto)
            }
        }
    }

    @Test(
        "a signature through libcrypto equals the one through swift-crypto, whichever backend the process chose",
        .enabled(if: libcryptoInstalled, "OpenSSL 3's libcrypto.so.3 is not installed here")
    )
    func mintedTokens() async throws {
        let signer = LocalKeySigner(key: Fixtures.driverKey)
        let input = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ2MSJ9".utf8)
        let signature = try signer.signSynchronously(input, backend: .libcrypto)
        #expect(signature == (try signer.signSynchronously(input, backend: .swiftCrypto)))
        // The process-wide choice is one of the two, and its signatures are the same bytes.
        #expect(RSABackend.allCases.contains(RSABackend.current))
        #expect(try signer.signSynchronously(input) == signature)
    }
}
