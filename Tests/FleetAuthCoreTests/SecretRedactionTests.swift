import FleetAuthCore
import Testing

@Suite("Secrets are redacted from upstream text and URIs")
struct SecretRedactionTests {
    @Test(
        "tokens are replaced, their names and the rest of the message kept",
        arguments: [
            ("request with Bearer ya29.a0AfH6SMBx-yz was refused", "Bearer [REDACTED]"),
            ("authorization: bearer abc.def.ghi", "bearer [REDACTED]"),
            ("token ya29.c.Kp8B-abc_123 expired", "token [REDACTED] expired"),
            (#"{"access_token":"ya29.zzz","expires_in":3599}"#, #""access_token":"[REDACTED]""#),
            ("grant_type=jwt-bearer&assertion=eyJhbGci.eyJpc3Mi.c2ln", "assertion=[REDACTED]"),
            ("got eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJl back", "got [REDACTED] back"),
        ]
    )
    func tokens(_ text: String, _ expected: String) {
        let redacted = SecretRedaction.redacted(text)
        #expect(redacted.contains(expected), "\(redacted)")
        for secret in ["ya29.a0", "ya29.c", "ya29.zzz", "abc.def.ghi", "eyJpc3Mi", "c2lnbmF0dXJl"] {
            #expect(!redacted.contains(secret), "\(redacted)")
        }
    }

    @Test("a PIN attribute in any spelling is redacted; pin-source (a file) and other attributes are kept")
    func pins() {
        let text = "pkcs11:object=k?module-path=/m.so;PIN-VALUE=1234&pin-source=file:/run/pin&x-pin%2Dvalue=99"
        let redacted = SecretRedaction.redacted(text)
        #expect(!redacted.contains("1234") && !redacted.contains("=99"), "\(redacted)")
        #expect(redacted.contains("pin-source=file:/run/pin") && redacted.contains("module-path=/m.so"))
        #expect(SecretRedaction.redacted("nothing secret here: 200 OK") == "nothing secret here: 200 OK")
    }
}
