import FleetAuthCore
import FleetAuthJWT
import Foundation
import Testing

@Suite("PKCS#11 URIs (RFC 7512)")
struct PKCS11URITests {
    @Test("the attributes FleetAuth uses, percent-decoded once")
    func parses() throws {
        let uri = try PKCS11URI(
            "pkcs11:token=fleet%20hsm;object=driver;id=%01%02%ff;type=private;serial=42?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/run/secrets/pin"
        )
        #expect(uri.token == "fleet hsm")
        #expect(uri.object == "driver")
        #expect(uri.id == [0x01, 0x02, 0xff])
        #expect(uri.type == "private")
        #expect(uri.serial == "42")
        #expect(uri.modulePath == "/usr/lib/softhsm/libsofthsm2.so")
        #expect(uri.pinSource == "file:/run/secrets/pin")
        #expect(uri.pinValue == nil)
    }

    @Test("the PIN comes from pin-value or the first line of the pin-source file")
    func pin() throws {
        #expect(try PKCS11URI("pkcs11:object=k?module-path=/m.so&pin-value=12%2634").pin() == "12&34")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pin-\(UUID().uuidString)")
        try Data("4321\nignored\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try PKCS11URI("pkcs11:object=k?module-path=/m.so&pin-source=file:\(file.path)").pin() == "4321")
        #expect(try PKCS11URI("pkcs11:object=k?module-path=/m.so&pin-source=\(file.path)").pin() == "4321")
        #expect(try PKCS11URI("pkcs11:object=k?module-path=/m.so").pin() == nil)
        #expect(throws: SigningError.self) { try PKCS11URI("pkcs11:object=k?module-path=/m.so&pin-source=/nope").pin() }
    }

    @Test("its description never shows the PIN")
    func redacted() throws {
        let uri = try PKCS11URI("pkcs11:token=t;object=k?module-path=/m.so&pin-value=secret-pin")
        #expect(!uri.description.contains("secret-pin"))
        #expect(uri.description.contains("pin-value=REDACTED"))
        let error = #expect(throws: SigningError.self) {
            try PKCS11URI("pkcs11:token=t;objekt=k?module-path=/m.so&pin-value=secret-pin")
        }
        #expect(error?.message.contains("secret-pin") == false)
    }

    @Test(
        "a PIN in any spelling never reaches an error message",
        arguments: [
            "pkcs11:object=k?module-path=/m.so&PIN-VALUE=s3cr3t-pin",
            "pkcs11:object=k?module-path=/m.so&Pin-Value=s3cr3t-pin",
            "pkcs11:object=k?module-path=/m.so&pin%2Dvalue=s3cr3t-pin",
            "pkcs11:object=k?module-path=/m.so&pin%252Dvalue=s3cr3t-pin",
            "pkcs11:object=k?module-path=/m.so;pin-value=s3cr3t-pin",
            "pkcs11:object=k;pin-value=s3cr3t-pin?module-path=/m.so",
            "pkcs11:object=k?module-path=/m.so&so-pin=s3cr3t-pin",
            "PKCS11:object=k?module-path=/m.so&pin-value=s3cr3t-pin",
        ]
    )
    func pinNeverShown(_ text: String) {
        let error = #expect(throws: SigningError.self) { try PKCS11URI(text) }
        #expect(error?.message.contains("s3cr3t-pin") == false, "\(error?.message ?? "")")
        #expect(SecretRedaction.redacted(text).contains("s3cr3t-pin") == false)
    }

    @Test(
        "malformed URIs are configuration errors naming the problem",
        arguments: [
            ("token=t;object=k?module-path=/m.so", "must start with"),
            ("pkcs11:token=t;object=k", "module-path"),
            ("pkcs11:token=t?module-path=/m.so", "object=LABEL or id="),
            ("pkcs11:token=t;objekt=k?module-path=/m.so", "unknown path attribute \"objekt\""),
            ("pkcs11:object=k?module-path=/m.so&pin=1", "unknown query attribute \"pin\""),
            ("pkcs11:object=k;type=public?module-path=/m.so", "type=private"),
            ("pkcs11:object=k?module-path=/m.so&pin-value=1&pin-source=/p", "both pin-value and pin-source"),
            ("pkcs11:object=%zz?module-path=/m.so", "percent-encoding"),
            ("pkcs11:object=k;object=j?module-path=/m.so", "repeats object"),
            ("pkcs11:object=k;slot-id=x?module-path=/m.so", "slot-id"),
        ]
    )
    func malformed(_ text: String, _ problem: String) {
        let error = #expect(throws: SigningError.self) { try PKCS11URI(text) }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
    }

    @Test("vendor attributes (x-) are allowed")
    func vendor() throws {
        #expect(try PKCS11URI("pkcs11:object=k;x-vendor=1?module-path=/m.so&x-opt=2").object == "k")
    }
}
