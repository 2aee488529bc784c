import FleetAuthCore
import FleetAuthServerCore
import FleetAuthTesting
import FleetTokenServer
import Foundation
import Testing

extension TokenServerStoreConformanceTests {
    static let issuer = "https://op.example.com"

    @Test(
        "identities: a user added with its identity in one transaction, links unique, matched exactly, removed with the user",
        arguments: TokenServerStoreDriver.all
    )
    func identities(_ driver: TokenServerStoreDriver) async throws {
        let store = try await driver.open().store
        let danaID = ExternalIdentity(issuer: Self.issuer, subject: "sub-1")
        try await store.addUser(Self.dana, passwordHash: "h", createdAt: Self.t0, identity: danaID)
        #expect(
            try await store.linkedUser(issuer: Self.issuer, subject: "sub-1", matchingUnqualified: false) == Self.dana
        )
        // Exact matches only: another issuer, a trailing slash, another case, a NUL.
        for (issuer, subject) in [
            ("https://other.example.com", "sub-1"), (Self.issuer + "/", "sub-1"), (Self.issuer, "SUB-1"),
            (Self.issuer, "sub-1\u{0}"),
        ] {
            #expect(try await store.linkedUser(issuer: issuer, subject: subject, matchingUnqualified: true) == nil)
        }
        // A taken name or a linked identity writes nothing.
        await expectCode(StoreError.alreadyExists("")) {
            try await store.addUser(
                Self.dana,
                passwordHash: "h",
                createdAt: Self.t0,
                identity: ExternalIdentity(issuer: Self.issuer, subject: "sub-2")
            )
        }
        #expect(try await store.linkedUser(issuer: Self.issuer, subject: "sub-2", matchingUnqualified: false) == nil)
        let dave = AppUser(username: "dave", role: .driver)
        await expectCode(StoreError.alreadyExists("")) {
            try await store.addUser(dave, passwordHash: "h", createdAt: Self.t0, identity: danaID)
        }
        #expect(try await store.credentials(for: "dave") == nil)
        // Links to existing users; an unqualified link matches only when the server has one issuer, and loses to a
        // qualified one.
        try await store.addUser(dave, passwordHash: "h", createdAt: Self.t0)
        try await store.linkIdentity(ExternalIdentity(issuer: "", subject: "sub-1"), to: "dave")
        try await store.linkIdentity(ExternalIdentity(issuer: "", subject: "sub-3"), to: "dave")
        #expect(
            try await store.linkedUser(issuer: Self.issuer, subject: "sub-1", matchingUnqualified: true) == Self.dana
        )
        #expect(try await store.linkedUser(issuer: Self.issuer, subject: "sub-3", matchingUnqualified: true) == dave)
        #expect(try await store.linkedUser(issuer: Self.issuer, subject: "sub-3", matchingUnqualified: false) == nil)
        await expectCode(StoreError.alreadyExists("")) {
            try await store.linkIdentity(danaID, to: "dave")
        }
        await expectCode(StoreError.notFound("")) {
            try await store.linkIdentity(ExternalIdentity(issuer: Self.issuer, subject: "sub-9"), to: "nobody")
        }
        #expect(
            try await store.identities() == [
                "dana": [danaID],
                "dave": [
                    ExternalIdentity(issuer: "", subject: "sub-1"), ExternalIdentity(issuer: "", subject: "sub-3"),
                ],
            ]
        )
        try await store.removeUser("dana")
        #expect(try await store.linkedUser(issuer: Self.issuer, subject: "sub-1", matchingUnqualified: false) == nil)
        // The identity is free again.
        try await store.linkIdentity(danaID, to: "dave")
        #expect(try await store.linkedUser(issuer: Self.issuer, subject: "sub-1", matchingUnqualified: false) == dave)
    }
}
