import FleetAuthServerSupport
import Testing

@Suite("Request text: Bearer credentials and path parameters")
struct RequestTextTests {
    @Test("a Bearer credential: the scheme in any case and one space, then the credential without blanks around it")
    func bearer() {
        for (header, credential) in [
            ("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER abc", "abc"), ("bEaReR \t abc \t", "abc"),
            ("Bearer a b", "a b"), ("Bearer é", "é"), ("Bearer  \t ", ""),
        ] {
            #expect(RequestText.bearerCredential(header) == credential, "\(header)")
        }
        for header in [
            nil, "", "Bearer", "Bearer ", "Bearerabc", "Bearer\tabc", "Basic abc", " Bearer abc", "Bearér x",
        ] {
            #expect(RequestText.bearerCredential(header) == nil, "\(header ?? "no header")")
        }
    }

    @Test("a path parameter is percent-decoded once; invalid percent-encoding is nil")
    func percentDecoded() {
        #expect(RequestText.percentDecoded("v1") == "v1")
        #expect(RequestText.percentDecoded("%76%31") == "v1")
        #expect(RequestText.percentDecoded("a%2520b") == "a%20b")
        #expect(RequestText.percentDecoded("caf%C3%A9") == "café")
        #expect(RequestText.percentDecoded("a%2") == nil)
        #expect(RequestText.percentDecoded("%zz") == nil)
    }
}
