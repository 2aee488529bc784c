import FleetAuthCore
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetTokenServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// A lockout of one client address (20 failures: a password spray from behind the same NAT or proxy as everyone
/// else) must not refuse a known user's right password from a device that user logged in from before.
@Suite("Token server: device tokens keep an address lockout from locking out known users")
struct DeviceTokenTests {
    static let t0 = Date(epochSeconds: 1_800_000_000)

    static func service() async throws -> (LoginService, ManualClock) {
        let store = try SQLiteTokenServerStore(inMemory: ())
        let hasher = PasswordHasher(cost: 4)
        for name in ["dana", "eve"] {
            try await store.addUser(
                AppUser(username: name, role: .driver),
                passwordHash: try await hasher.hash("pw-\(name)"),
                createdAt: t0
            )
        }
        let clock = ManualClock(date: t0)
        return (LoginService(users: store, sessions: store, hasher: hasher, clock: clock), clock)
    }

    static func status(_ attempt: () async throws -> Session) async -> String {
        do {
            _ = try await attempt()
            return "ok"
        } catch let error as GoogleAPIError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    @Test(
        "after a spray locks the address: dana's right password with her device token logs in; without it, with another's, or a made-up one: 429"
    )
    func sprayDoesNotLockKnownDevice() async throws {
        let (service, _) = try await Self.service()
        let address = "203.0.113.7"
        let first = try await service.login(username: "dana", password: "pw-dana", address: address)
        let dana = try #require(first.deviceToken)
        let eve = try #require(
            try await service.login(username: "eve", password: "pw-eve", address: address).deviceToken
        )
        // A password spray from the same address: one guess each for many names, until the address is locked.
        for index in 0..<20 {
            _ = await Self.status { try await service.login(username: "user\(index)", password: "x", address: address) }
        }
        #expect(
            await Self.status { try await service.login(username: "dana", password: "pw-dana", address: address) }
                == "RESOURCE_EXHAUSTED"
        )
        let again = await Self.status {
            try await service.login(username: "dana", password: "pw-dana", address: address, deviceToken: dana)
        }
        #expect(again == "ok")
        // Bound to its user, and only tokens this server issued count.
        #expect(
            await Self.status {
                try await service.login(username: "dana", password: "pw-dana", address: address, deviceToken: eve)
            } == "RESOURCE_EXHAUSTED"
        )
        #expect(
            await Self.status {
                try await service.login(username: "dana", password: "pw-dana", address: address, deviceToken: "made-up")
            } == "RESOURCE_EXHAUSTED"
        )
        // The spray goes on being refused: its names have no device tokens.
        #expect(
            await Self.status { try await service.login(username: "user99", password: "x", address: address) }
                == "RESOURCE_EXHAUSTED"
        )
    }

    @Test("a device token does not lift the per-user limit: five wrong passwords with it lock dana, and it expires")
    func perUserLimitStays() async throws {
        let (service, clock) = try await Self.service()
        let device = try #require(
            try await service.login(username: "dana", password: "pw-dana", address: "198.51.100.1").deviceToken
        )
        for _ in 0..<5 {
            #expect(
                await Self.status {
                    try await service.login(
                        username: "dana",
                        password: "wrong",
                        address: "198.51.100.2",
                        deviceToken: device
                    )
                } == "UNAUTHENTICATED"
            )
        }
        #expect(
            await Self.status {
                try await service.login(
                    username: "dana",
                    password: "pw-dana",
                    address: "198.51.100.2",
                    deviceToken: device
                )
            } == "RESOURCE_EXHAUSTED"
        )
        // Past its lifetime (and the lockout), the token is no longer honoured; a login then issues a new one.
        clock.advance(by: LoginService.deviceTokenLifetime + .seconds(1))
        let later = try await service.login(
            username: "dana",
            password: "pw-dana",
            address: "198.51.100.2",
            deviceToken: device
        )
        #expect(later.deviceToken != nil && later.deviceToken != device)
    }
}

@Suite("Token server: the device token over HTTP", .temporaryResources)
struct DeviceTokenHTTPTests {
    @Test(
        "a password login answers deviceToken and sets it as an HttpOnly, Secure, SameSite=Strict cookie for /v1/sessions only"
    )
    func cookie() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let (status, body, headers) = try await client.json(
                .post,
                "/v1/sessions",
                body: #"{"username":"dana","password":"correct horse battery"}"#
            )
            #expect(status == .created)
            let device = try #require(body["deviceToken"]?.stringValue)
            let cookie = try #require(headers[.setCookie])
            #expect(cookie.hasPrefix("fleetauth_device=\(device);"), "\(cookie)")
            for attribute in ["Path=/v1/sessions", "HttpOnly", "Secure", "SameSite=Strict", "Max-Age=7776000"] {
                #expect(cookie.contains(attribute), "\(cookie)")
            }
            // Sent back (in the body, as an app does): the same token, no new one.
            let (again, second, _) = try await client.json(
                .post,
                "/v1/sessions",
                body: #"{"username":"dana","password":"correct horse battery","deviceToken":"\#(device)"}"#
            )
            #expect(again == .created)
            #expect(second["deviceToken"]?.stringValue == device)
            // It is not a session.
            #expect(try await client.json(.get, "/token/driver/v1", bearer: device).0 == .unauthorized)
            let (wrongType, _, _) = try await client.json(
                .post,
                "/v1/sessions",
                body: #"{"username":"dana","password":"correct horse battery","deviceToken":7}"#
            )
            #expect(wrongType == .badRequest)
        }
    }
}
