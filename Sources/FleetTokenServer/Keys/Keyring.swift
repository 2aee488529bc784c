public import FleetAuthCore
public import FleetAuthJWT
public import FleetAuthServerSupport
import Foundation
public import Logging

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
        public let record: SigningKeyRecord
        public let key: ServiceAccountKey
        public let minter: FleetEngineTokenMinter
    }

    /// How long a retired key stays published: the longest token lifetime plus a minute of clock skew.
    public let publicationWindow: Duration
    /// How often the keyring rereads the store to notice rotations made by another process.
    public let refreshInterval: Duration = .seconds(1)
    private let store: any SigningKeyStore
    private let keyDirectory: String
    private let lifetime: Int64
    private let clock: any WallClock
    private let lock = NSLock()
    private var entries: [Entry] = []
    private var lastRefresh: Date = .distantPast

    /// Opens the keyring of `store`, creating the missing families' keys: from `keyFiles` when given, otherwise
    /// generated as `fleetauth-<family>@<project>.iam.gserviceaccount.com` in `keyDirectory`.
    ///
    /// - Parameters:
    ///   - store: the key records.
    ///   - keyDirectory: where generated keys are written.
    ///   - project: the Google Cloud project (Fleet Engine provider) of generated keys.
    ///   - keyFiles: existing service-account key files for some families.
    ///   - tokenLifetime: `exp − iat` of the tokens the keys sign, in seconds.
    ///   - clock: the clock for key creation, retirement and publication times.
    public init(
        store: any SigningKeyStore,
        keyDirectory: String,
        project: String,
        keyFiles: [TokenFamily: String] = [:],
        tokenLifetime: Int64 = 3600,
        clock: any WallClock = .system
    ) async throws {
        self.store = store
        self.keyDirectory = keyDirectory
        self.lifetime = tokenLifetime
        self.publicationWindow = .seconds(tokenLifetime + 60)
        self.clock = clock
        try FileManager.default.createDirectory(atPath: keyDirectory, withIntermediateDirectories: true)
        let existing = Set(try await store.signingKeys().map(\.family))
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
                SigningKeyRecord(kid: key.privateKeyID, family: family, keyPath: path, createdAt: now))
        }
        try await refresh()
    }

    private var now: Date { Date(epochSeconds: clock.currentEpochSeconds) }

    static func path(in directory: String, family: TokenFamily, kid: String) -> String {
        "\(directory)/\(family.rawValue)-\(kid.prefix(12)).json"
    }

    /// Rereads the store if ``refreshInterval`` has passed since the last read.
    public func refreshIfStale() async throws {
        let now = clock.currentDate
        guard lock.withLock({ now.timeIntervalSince(lastRefresh) >= refreshInterval.timeInterval }) else { return }
        try await refresh()
    }

    /// Rereads the key records, loading new keys and dropping removed ones.
    public func refresh() async throws {
        let now = clock.currentDate
        let records = try await store.signingKeys()
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
            throw .internal("No signing key for the \(family) family.")
        }
        return entry
    }

    /// The keys published for `email` now: the signing key and every retired key still inside the window.
    /// `nil` when no family has that email.
    public func publishedKeys(email: String) -> [RSAVerificationKey]? {
        let now = clock.currentDate
        let window = publicationWindow.timeInterval
        let keys = lock.withLock {
            entries.filter {
                $0.key.clientEmail == email && ($0.record.retiredAt.map { now < $0 + window } ?? true)
            }
        }
        return keys.isEmpty ? nil : keys.map(\.key.verificationKey)
    }

    /// Adds a new key to `family`'s account and makes it the signing key; the old one is retired now.
    @discardableResult
    public func rotate(_ family: TokenFamily) async throws -> SigningKeyRecord {
        try await refresh()
        let current = try signingKey(for: family)
        let key = try current.key.newKey()
        let path = Self.path(in: keyDirectory, family: family, kid: key.privateKeyID)
        try key.write(to: path)
        let record = SigningKeyRecord(kid: key.privateKeyID, family: family, keyPath: path, createdAt: now)
        try await store.addSigningKey(record)
        try await refresh()
        return record
    }

    /// Removes the keys whose tokens have all expired (retired at least ``publicationWindow`` ago), deleting the
    /// key files the keyring created. Returns their key IDs.
    @discardableResult
    public func prune() async throws -> [String] {
        let cutoff = now.addingTimeInterval(-publicationWindow.timeInterval)
        let removed = try await store.removeSigningKeys(retiredAtOrBefore: cutoff)
        for record in removed where record.keyPath.hasPrefix(keyDirectory + "/") {
            try? FileManager.default.removeItem(atPath: record.keyPath)
        }
        try await refresh()
        return removed.map(\.kid)
    }

    /// A service that runs ``prune()`` every `interval`, logging (and surviving) failures.
    public func pruner(interval: Duration = .seconds(60), logger: Logger = .silent(label: "fleetauth.keyring"))
        -> PeriodicTask
    {
        PeriodicTask(name: "key pruning", interval: interval, clock: clock, logger: logger) { [self] in
            let removed = try await prune()
            if !removed.isEmpty {
                logger.info("pruned retired signing keys", metadata: .fleetauth(["kids": .string("\(removed)")]))
            }
        }
    }

    /// Every family's account: email, project and roles.
    public var accounts: [(family: TokenFamily, email: String, project: String)] {
        TokenFamily.allCases.compactMap { family in
            guard let key = try? signingKey(for: family).key else { return nil }
            return (family, key.clientEmail, key.projectID)
        }
    }

    /// The JWK set URL of each family's account on a server reachable at `baseURL`.
    public func keySetURLs(baseURL: String) -> [(family: TokenFamily, email: String, project: String, url: String)] {
        accounts.map {
            ($0.family, $0.email, $0.project, "\(baseURL)/service_accounts/v1/metadata/jwk/\($0.email)")
        }
    }

    /// What a Fleet Engine emulator needs to trust this server's accounts: each family's account with its roles,
    /// keys by JWK set URL on a server reachable at `baseURL` (so rotations reach it without a restart).
    public func trustConfiguration(baseURL: String) -> TrustConfiguration {
        TrustConfiguration(
            serviceAccounts: keySetURLs(baseURL: baseURL).map { entry in
                .init(
                    account: TrustedServiceAccount(
                        email: entry.email, project: entry.project, roles: entry.family.roles),
                    keySource: .jwksURL(entry.url))
            })
    }
}
