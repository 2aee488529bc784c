import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import Foundation
import Testing

/// The PKCS#11 signer against a real module: SoftHSM2 (skipped with a reason where it is not installed; CI installs
/// it and requires these tests). Every test uses its own object label in the process's one token.
@Suite(
    "PKCS#11 signer (SoftHSM2)",
    .enabled(
        if: SoftHSM.isAvailable || SoftHSM.isRequired,
        "SoftHSM2 is not installed (apt-get install softhsm2 opensc)"
    )
)
struct PKCS11SignerTests {
    static let email = "pkcs11-driver@demo-project.iam.gserviceaccount.com"

    func token() async throws -> SoftHSM.Token { try await SoftHSM.sharedToken() }

    /// A new RSA-2048 key labelled `label` in the token, and a signer for it.
    func newSigner(_ label: String, keyID: String? = nil) async throws -> PKCS11Signer {
        let uri = try PKCS11URI(try await token().uri(object: label))
        _ = try await PKCS11Signer.generateKeyPair(uri: uri)
        return try await PKCS11Signer(uri: uri, serviceAccountEmail: Self.email, keyID: keyID)
    }

    @Test("a key generated in the token signs tokens that verify under its public key; kid is its RFC 7638 thumbprint")
    func signs() async throws {
        let signer = try await newSigner("signs")
        #expect(signer.publicKey.keySizeInBits == 2048)
        #expect(signer.keyID == signer.publicKey.jwkThumbprint)
        let minter = try FleetEngineTokenMinter(signer: signer)
        let now = Date()
        let token = try await minter.mint(.driver(vehicleID: "v1"), now: now)
        var trust = TrustStore()
        trust.add(try RSAVerificationKey(jwk: signer.publicKey.jwk), issuer: Self.email)
        let verifier = FleetEngineTokenVerifier(trustStore: trust)
        let verified = try verifier.verify(token.jwt, now: now)
        #expect(verified.claims.issuer == Self.email)
        #expect(try CompactJWS(token.jwt).keyID == signer.keyID)
    }

    @Test("--key-id names the kid Google assigned at upload")
    func givenKeyID() async throws {
        let signer = try await newSigner("given-kid", keyID: "0123456789abcdef")
        let token = try await FleetEngineTokenMinter(signer: signer).mint(.server)
        #expect(token.keyID == "0123456789abcdef")
        #expect(try CompactJWS(token.jwt).keyID == "0123456789abcdef")
    }

    @Test("100 concurrent signatures over the session pool all verify")
    func concurrent() async throws {
        let signer = try await newSigner("concurrent")
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let input = Array("message \(index)".utf8)
                    let signature = try await signer.sign(input)
                    return signer.publicKey.isValidRS256Signature(signature, for: input)
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 100)
        #expect(results.allSatisfy { $0 })
    }

    @Test("a generated private key is sensitive and never extractable")
    func notExtractable() async throws {
        let signer = try await newSigner("sealed")
        #expect(signer.keyNeverLeavesToken)
    }

    @Test("a second key pair under the same label is refused and the first kept")
    func noOverwrite() async throws {
        let signer = try await newSigner("once")
        let uri = try PKCS11URI(try await token().uri(object: "once"))
        let error = await #expect(throws: SigningError.self) { try await PKCS11Signer.generateKeyPair(uri: uri) }
        #expect(error?.message.contains("already exists") == true)
        let again = try await PKCS11Signer(uri: uri, serviceAccountEmail: Self.email)
        #expect(again.keyID == signer.keyID)
    }

    @Test("a self-signed certificate signed inside the token carries the key and verifies with it")
    func certificate() async throws {
        let signer = try await newSigner("certificate")
        let certificate = try await signer.certificate(notBefore: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(certificate.pemRepresentation.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        // The certificate's public key is the token's (its SubjectPublicKeyInfo appears verbatim), and the
        // signature over the TBS part verifies under it.
        let der = certificate.derRepresentation
        let spki = signer.publicKey.subjectPublicKeyInfoDER
        #expect(der.indices.contains { der[$0...].starts(with: spki) })
        let signature = Array(der.suffix(256))
        // TBSCertificate: the first element of the outer SEQUENCE (4-byte long-form header).
        let tbsLength = Int(der[6]) << 8 | Int(der[7])
        let tbs = Array(der[4..<(8 + tbsLength)])
        #expect(signer.publicKey.isValidRS256Signature(signature, for: tbs))
        if let openssl = SoftHSM.openssl {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("cert-\(UUID().uuidString).pem")
            try Data(certificate.pemRepresentation.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            try SoftHSM.run(
                openssl,
                ["verify", "-check_ss_sig", "-no_check_time", "-CAfile", file.path, file.path],
                environment: [:]
            )
        }
    }

    @Test("a wrong PIN is refused at start, naming the refusal, never the PIN")
    func wrongPIN() async throws {
        let uri = try PKCS11URI(try await token().uri(object: "any", pin: "9999", token: SoftHSM.pinCheckLabel))
        let error = await #expect(throws: SigningError.self) {
            try await PKCS11Signer(uri: uri, serviceAccountEmail: Self.email)
        }
        #expect(error?.code == .unauthenticated)
        #expect(error?.message.contains("CKR_PIN_INCORRECT") == true)
        #expect(error?.message.contains("9999") == false)
    }

    @Test("a missing object, a missing token and a module that does not load are configuration errors")
    func missing() async throws {
        let token = try await token()
        for (text, problem) in [
            (token.uri(object: "no-such-key"), "No private key matches"),
            ("pkcs11:token=no-such-token;object=k?module-path=\(token.modulePath)&pin-value=1234", "No token"),
            ("pkcs11:token=t;object=k?module-path=/nonexistent/libnothing.so", "does not exist"),
            ("pkcs11:token=t;object=k?module-path=/etc/hostname", "did not load"),
        ] {
            let error = await #expect(throws: SigningError.self) {
                try await PKCS11Signer(uri: PKCS11URI(text), serviceAccountEmail: Self.email)
            }
            #expect(error?.code == .configuration)
            #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
        }
    }

    @Test(
        "a key that is not RSA-2048 is refused",
        .enabled(if: SoftHSM.pkcs11Tool != nil || SoftHSM.isRequired, "pkcs11-tool (opensc) is not installed")
    )
    func wrongKeyType() async throws {
        let token = try await token()
        for (label, problem) in [("ec-key", "not an RSA key"), ("rsa1024-key", "1024 bits")] {
            let error = await #expect(throws: SigningError.self) {
                try await PKCS11Signer(uri: PKCS11URI(token.uri(object: label)), serviceAccountEmail: Self.email)
            }
            #expect(error?.code == .configuration)
            #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
        }
    }
}
