import FleetAuthCore
public import FleetAuthJWT
public import Foundation

/// The signing keys of every token family, with rotation.
///
/// Each family has one service account; its newest key signs. Rotation adds a key to the same account and makes it
/// the signing key; the previous key is *retired*: it signs nothing more but stays published (JWKS) until every
/// token it signed has expired (``publicationWindow`` after retirement), then it is removed. Keys are files under
/// the data directory (mode 0600, or the operator's own key files); the store records which key belongs to which
/// family and when each was retired, so `fleetauth keys rotate` on the same data directory reaches a running server
/// within ``refreshInterval``.
public final class Keyring: @unchecked Sendable {
    /// One key of a family.
    public struct Entry: Sendable {
        public let record: TokenServerStore.KeyRecord
        public let key: ServiceAccountKey
        public let minter: FleetEngineTokenMinter
    }

    /// How long a retired key stays published: the longest token lifetime plus a minute of clock skew.
    public let publicationWindow: Int64
    /// How often the keyring rereads the store to notice rotations made by another process.
    public let refreshInterval: Int64 = 1
    private let store: TokenServerStore
    private let keyDirectory: String
    private let lifetime: Int64
    private let lock = NSLock()
    private var entries: [Entry] = []
    private var lastRefresh: Int64 = .min

    /// Opens the keyring of `store`, creating the missing families' keys: from `keyFiles` when given, otherwise
    /// generated as `fleetauth-<family>@<project>.iam.gserviceaccount.com` in `keyDirectory`.
    public init(
        store: TokenServerStore,
        keyDirectory: String,
        project: String,
        keyFiles: [TokenFamily: String] = [:],
        tokenLifetime: Int64 = 3600,
        now: Date = Date()
    ) async throws {
        self.store = store
        self.keyDirectory = keyDirectory
        self.lifetime = tokenLifetime
        self.publicationWindow = tokenLifetime + 60
        try FileManager.default.createDirectory(atPath: keyDirectory, withIntermediateDirectories: true)
        let existing = Set(try await store.keyRecords().map(\.family))
        for family in TokenFamily.allCases where !existing.contains(family) {
            let key: ServiceAccountKey
            let path: String
            if let file = keyFiles[family] {
                key = try ServiceAccountKey(contentsOf: file)
                path = file
            } else {
                key = try ServiceAccountKey.generate(projectID: project, name: family.accountName)
                path = Self.path(in: keyDirectory, family: family, kid: key.privateKeyID)
                try key.write(to: path)
            }
            try await store.addSigningKey(
                .init(
                    kid: key.privateKeyID, family: family, keyPath: path,
                    createdAt: Int64(now.timeIntervalSince1970)))
        }
        try await refresh(now: Int64(now.timeIntervalSince1970))
    }

    static func path(in directory: String, family: TokenFamily, kid: String) -> String {
        "\(directory)/\(family.rawValue)-\(kid.prefix(12)).json"
    }

    /// Rereads the store if ``refreshInterval`` has passed since the last read.
    public func refreshIfStale(now: Int64) async throws {
        guard lock.withLock({ now - lastRefresh >= refreshInterval }) else { return }
        try await refresh(now: now)
    }

    /// Rereads the key records, loading new keys and dropping removed ones.
    public func refresh(now: Int64) async throws {
        let records = try await store.keyRecords()
        let known = lock.withLock { Dictionary(uniqueKeysWithValues: entries.map { ($0.record.kid, $0) }) }
        var fresh: [Entry] = []
        for record in records {
            if let entry = known[record.kid], entry.record == record {
                fresh.append(entry)
                continue
            }
            let key = try ServiceAccountKey(contentsOf: record.keyPath)
            let minter = try FleetEngineTokenMinter(
                signer: LocalKeySigner(key: key), configuration: .init(lifetime: lifetime))
            fresh.append(Entry(record: record, key: key, minter: minter))
        }
        lock.withLock {
            entries = fresh
            lastRefresh = now
        }
    }

    /// The key that signs `family`'s tokens.
    public func signingKey(for family: TokenFamily) throws(TokenServerError) -> Entry {
        let entry = lock.withLock { entries.last { $0.record.family == family && $0.record.retiredAt == nil } }
        guard let entry else {
            throw .internalError("No signing key for the \(family) family.")
        }
        return entry
    }

    /// Every family's account: email, project and roles (for trust files).
    public var accounts: [(family: TokenFamily, email: String, project: String)] {
        TokenFamily.allCases.compactMap { family in
            guard let key = try? signingKey(for: family).key else { return nil }
            return (family, key.clientEmail, key.projectID)
        }
    }

    /// The keys published for `email` at `now`: the signing key and every retired key still inside the window.
    /// `nil` when no family has that email.
    public func publishedKeys(email: String, now: Int64) -> [RSAVerificationKey]? {
        let keys = lock.withLock {
            entries.filter {
                $0.key.clientEmail == email && ($0.record.retiredAt.map { now < $0 + publicationWindow } ?? true)
            }
        }
        return keys.isEmpty ? nil : keys.map(\.key.verificationKey)
    }

    /// Adds a new key to `family`'s account and makes it the signing key; the old one is retired at `now`.
    @discardableResult
    public func rotate(_ family: TokenFamily, now: Date = Date()) async throws -> TokenServerStore.KeyRecord {
        let seconds = Int64(now.timeIntervalSince1970)
        try await refresh(now: seconds)
        let current = try signingKey(for: family)
        let key = try current.key.newKey()
        let path = Self.path(in: keyDirectory, family: family, kid: key.privateKeyID)
        try key.write(to: path)
        let record = TokenServerStore.KeyRecord(
            kid: key.privateKeyID, family: family, keyPath: path, createdAt: seconds, retiredAt: nil)
        try await store.addSigningKey(record)
        try await refresh(now: seconds)
        return record
    }

    /// Removes the keys whose tokens have all expired (retired at least ``publicationWindow`` ago), deleting the
    /// key files the keyring created. Returns their key IDs.
    @discardableResult
    public func prune(now: Date = Date()) async throws -> [String] {
        let seconds = Int64(now.timeIntervalSince1970)
        let removed = try await store.removeKeys(retiredAtOrBefore: seconds - publicationWindow)
        for record in removed where record.keyPath.hasPrefix(keyDirectory + "/") {
            try? FileManager.default.removeItem(atPath: record.keyPath)
        }
        try await refresh(now: seconds)
        return removed.map(\.kid)
    }

    /// The JWK set URL of each family's account on a server reachable at `baseURL`.
    public func keySetURLs(baseURL: String) -> [(family: TokenFamily, email: String, project: String, url: String)] {
        accounts.map {
            ($0.family, $0.email, $0.project, "\(baseURL)/service_accounts/v1/metadata/jwk/\($0.email)")
        }
    }

    /// A trust file for `fleetauth emulator --trust` that trusts this server's accounts by JWK set URL, with the
    /// roles of their families.
    public func emulatorTrustFile(baseURL: String) -> String {
        let accounts = keySetURLs(baseURL: baseURL).map { entry -> JSONValue in
            .object([
                "email": .string(entry.email), "project": .string(entry.project),
                "roles": .array(entry.family.roles.map { .string($0.id) }), "jwksURL": .string(entry.url),
            ])
        }
        return JSONValue.object(["serviceAccounts": .array(accounts)]).prettyText() + "\n"
    }
}
