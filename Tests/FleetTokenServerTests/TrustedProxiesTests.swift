import FleetAuthCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetTokenServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Behind a load balancer every TCP peer is the balancer: the throttle must count the client it forwards for, and
/// believe no other peer's headers.
@Suite("Token server: the client behind trusted proxies", .temporaryResources)
struct TrustedProxiesTests {
    static func headers(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return fields
    }

    @Test("the client is read from the right past trusted proxies; an untrusted peer's headers are never read")
    func client() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "2001:db8::/32", "192.0.2.1"])
        let forwarded = Self.headers([("X-Forwarded-For", "1.1.1.1, 203.0.113.7, 10.0.0.5")])
        // The address the client wrote itself (1.1.1.1) is left of the one the first trusted proxy saw.
        #expect(proxies.client(peer: "10.1.2.3", headers: forwarded) == "203.0.113.7")
        #expect(proxies.client(peer: "198.51.100.9", headers: forwarded) == "198.51.100.9")
        #expect(TrustedProxies.none.client(peer: "10.1.2.3", headers: forwarded) == "10.1.2.3")
        #expect(proxies.client(peer: "192.0.2.1", headers: forwarded) == "203.0.113.7")
        // RFC 7239's Forwarded wins over X-Forwarded-For; ports and brackets are taken off.
        let both = Self.headers([
            ("Forwarded", #"for=198.51.100.17;proto=https, for="[2001:db8:cafe::17]:4711""#),
            ("X-Forwarded-For", "203.0.113.7"),
        ])
        #expect(proxies.client(peer: "2001:db8::1", headers: both) == "198.51.100.17")
        let portOnly = Self.headers([("Forwarded", "for=198.51.100.17:8080")])
        #expect(proxies.client(peer: "10.0.0.1", headers: portOnly) == "198.51.100.17")
        // Every hop trusted: the leftmost is the client. No header: the proxy itself.
        #expect(
            proxies.client(peer: "10.0.0.1", headers: Self.headers([("X-Forwarded-For", "10.9.9.9")])) == "10.9.9.9"
        )
        #expect(proxies.client(peer: "10.0.0.1", headers: [:]) == "10.0.0.1")
        for bad in ["10.0.0.0/33", "example.com", "10.0.0/8", "::/129", ""] {
            #expect(throws: TrustedProxiesError.self, "\(bad)") { try TrustedProxies([bad]) }
        }
    }

    /// A live token server on loopback that trusts `proxies`; its peer is always 127.0.0.1, the "load balancer".
    static func withServer(
        trusting proxies: [String],
        _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let directory = try TestResources.required().temporaryDirectory("ts-proxy")
        let store = try SQLiteTokenServerStore(path: directory + "/" + TokenServer.databaseFileName)
        let server = try await TokenServer(
            configuration: .init(dataDirectory: directory, bcryptCost: 4, trustedProxies: try TrustedProxies(proxies)),
            store: store,
            clock: ManualClock(),
            keyGenerator: TestKeys.generator
        )
        try await server.users.addUser(AppUser(username: "dana", role: .driver), password: TokenServerFixture.password)
        try await Application(router: server.router).test(.live) { client in try await body(client) }
    }

    static func login(_ client: any TestClientProtocol, _ user: String, _ password: String, from address: String)
        async throws -> HTTPResponse.Status
    {
        try await client.execute(
            uri: "/v1/sessions",
            method: .post,
            headers: Self.headers([("Content-Type", "application/json"), ("X-Forwarded-For", address)]),
            body: ByteBuffer(string: #"{"username":"\#(user)","password":"\#(password)"}"#)
        ) { $0.status }
    }

    @Test("behind a trusted proxy, one client's 21 bad logins lock that client out, not every user")
    func oneClientLockedOut() async throws {
        try await Self.withServer(trusting: ["127.0.0.1"]) { client in
            // 21 wrong passwords, each for another name, from one client: past the per-address limit (20).
            for index in 0..<21 { _ = try await Self.login(client, "guess\(index)", "wrong", from: "203.0.113.66") }
            #expect(try await Self.login(client, "guess99", "wrong", from: "203.0.113.66") == .tooManyRequests)
            // Dana, elsewhere, logs in with her password.
            #expect(try await Self.login(client, "dana", TokenServerFixture.password, from: "198.51.100.5") == .created)
        }
        // Without the option, every client is the balancer: the same bad logins lock Dana out too, and the
        // forwarded address a client writes changes nothing.
        try await Self.withServer(trusting: []) { client in
            for index in 0..<21 { _ = try await Self.login(client, "guess\(index)", "wrong", from: "203.0.113.66") }
            #expect(
                try await Self.login(client, "dana", TokenServerFixture.password, from: "198.51.100.5")
                    == .tooManyRequests
            )
        }
    }
}
