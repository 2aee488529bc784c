public import FleetAuthCore
public import FleetAuthJWT
public import FleetAuthServerSupport
import Foundation
public import Logging

/// The signing keys of every token family, with rotation.
///
/// Each family has one service account; its newest key signs. Rotation adds a key to the same account and makes it
/// the signing key; the previous key is *retired*: it signs nothing more but stays published (JWKS) until every
/// token it signed has expired (``publicationWindow`` after retirement), then it is removed.
///
/// Where the private keys are:
/// - without a key-encryption key, files under the data directory (mode 0600, or the operator's own key files) —
///   one machine;
/// - with a ``KeyEncryptionKey``, in the store itself, sealed with AES-GCM under it (the operator's key files too)
///   — so every instance on one database signs with the same keys, and the database alone signs nothing.
///
/// The store records which key belongs to which family and when each was retired; every instance rereads it at
/// most ``refreshInterval`` after its last read, when it signs or publishes, so a rotation made anywhere (another
/// instance, `fleetauth keys rotate`) is used and published everywhere within about a second. Instances that start
/// together agree on one first key per family (``SigningKeyStore/addFirstSigningKey(_:)``), and each retired key
/// is pruned by exactly one of them.
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
    private let keyEncryptionKey: KeyEncryptionKey?
    private let lifetime: Int64
    private let clock: any WallClock
    private let lock = NSLock()
    private var entries: [Entry] = []
    private var lastRefresh: Date = .distantPast

    /// Opens the keyring of `store`, creating the missing families' keys: from `keyFiles` when given, otherwise
    /// generated as `fleetauth-<family>@<project>.iam.gserviceaccount.com`.
    ///
    /// Every stored key is opened here, so a key-encryption key that does not open them (or its absence when they
    /// are sealed) is an error now, not at the first token.
    ///
    /// - Parameters:
    ///   - store: the key records.
    ///   - keyDirectory: where generated keys are written when there is no key-encryption key.
    ///   - project: the Google Cloud project (Fleet Engine provider) of generated keys.
    ///   - keyFiles: existing service-account key files for some families.
    ///   - keyEncryptionKey: when given, new keys (and `keyFiles`) are sealed under it into the store.
    ///   - tokenLifetime: `exp − iat` of the tokens the keys sign, in seconds.
    ///   - clock: the clock for key creation, retirement and publication times.
    public init(
        store: any SigningKeyStore,
        keyDirectory: String,
        project: String,
        keyFiles: [TokenFamily: String] = [:],
        keyEncryptionKey: KeyEncryptionKey? = nil,
        tokenLifetime: Int64 = 3600,
        clock: any WallClock = .system
    ) async throws {
        self.store = store
        self.keyDirectory = keyDirectory
        self.keyEncryptionKey = keyEncryptionKey
        self.lifetime = tokenLifetime
        self.publicationWindow = .seconds(tokenLifetime + 60)
        self.clock = clock
        let existing = Set(try await store.signingKeys().map(\.family))
        for family in TokenFamily.allCases where !existing.contains(family) {
            let key =
                if let file = keyFiles[family] {
                    try ServiceAccountKey(contentsOf: file)
                } else {
                    try ServiceAccountKey.generate(projectID: project, name: family.accountName)
                }
            let material = try keep(key, family: family, file: keyFiles[family])
            let added = try await store.addFirstSigningKey(
                SigningKeyRecord(kid: key.privateKeyID, family: family, material: material, createdAt: now))
            // Another instance created this family's key first: ours was never used.
            if !added, keyFiles[family] == nil, let path = material.path {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
        try await refresh()
    }

    /// Where a new key goes: sealed for the store with a key-encryption key; otherwise `file` (the operator's) or a
    /// new file in the key directory.
    private func keep(_ key: ServiceAccountKey, family: TokenFamily, file: String? = nil) throws -> SigningKeyMaterial {
        if let keyEncryptionKey {
            let json = Array(JSONValue.object(key.jsonObject).jsonText.utf8)
            return .sealed(try keyEncryptionKey.seal(json, keyID: key.privateKeyID))
        }
        if let file { return .file(path: file) }
        try FileManager.default.createDirectory(atPath: keyDirectory, withIntermediateDirectories: true)
        let path = Self.path(in: keyDirectory, family: family, kid: key.privateKeyID)
        try key.write(to: path)
        return .file(path: path)
    }

    /// The key a record names: its file read, or its sealed JSON opened with `keyEncryptionKey`.
    public static func key(of record: SigningKeyRecord, keyEncryptionKey: KeyEncryptionKey?) throws
        -> ServiceAccountKey
    {
        switch record.material {
        case .file(let path):
            return try ServiceAccountKey(contentsOf: path)
        case .sealed(let sealed):
            guard let keyEncryptionKey else {
                throw KeyEncryptionKeyError(
                    "Signing key \(record.kid) is sealed in the database: give the key-encryption key "
                        + "(--key-encryption-key-file FILE or \(KeyEncryptionKey.environmentVariable)).")
            }
            let json = try keyEncryptionKey.unseal(sealed, keyID: record.kid)
            return try ServiceAccountKey(json: json, source: "sealed signing key \(record.kid)")
        }
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
            let key = try Self.key(of: record, keyEncryptionKey: keyEncryptionKey)
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
        let record = SigningKeyRecord(
            kid: key.privateKeyID, family: family, material: try keep(key, family: family), createdAt: now)
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
        for record in removed {
            if let path = record.material.path, path.hasPrefix(keyDirectory + "/") {
                try? FileManager.default.removeItem(atPath: path)
            }
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
