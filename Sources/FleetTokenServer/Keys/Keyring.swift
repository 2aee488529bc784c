public import FleetAuthCore
public import FleetAuthJWT
public import FleetAuthServerCore
package import FleetAuthServerSupport
import Foundation
package import Logging
import NIOConcurrencyHelpers

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
public final class Keyring: Sendable {
    /// One key of a family.
    public struct Entry: Sendable {
        public let record: SigningKeyRecord
        /// The key file's key; nil for a keyless family (IAM, PKCS#11).
        public let key: ServiceAccountKey?
        /// Mints the family's tokens; nil for a keyless family whose signer this process was not given.
        public let minter: FleetEngineTokenMinter?
        /// The service account the key belongs to.
        public let email: String
        /// The account's project (Fleet Engine provider).
        public let project: String
        /// The public key this server publishes in its JWK set; nil where Google publishes it (IAM) or it is not
        /// known here.
        public let publishedKey: RSAVerificationKey?
        /// Where Google publishes the account's keys (IAM families), instead of this server.
        public let googleKeySetURL: String?
    }

    /// How long a retired key stays published: the longest token lifetime plus a minute of clock skew.
    public let publicationWindow: Duration
    /// How often the keyring rereads the store to notice rotations made by another process.
    public let refreshInterval: Duration = .seconds(1)
    private let store: any SigningKeyStore
    private let keyDirectory: String
    private let keyEncryptionKey: KeyEncryptionKey?
    private let lifetime: Int64
    let clock: any WallClock
    private let project: String
    private let keyless: [TokenFamily: KeylessSigner]
    /// The entries as last read from the store, and when.
    private struct State {
        var entries: [Entry] = []
        var lastRefresh: Date = .distantPast
    }

    private let state = NIOLockedValueBox(State())
    /// How each family's last signature went: nil (absent) when it has not signed yet, `.some(nil)` when it
    /// worked, `.some(message)` when it failed.
    let signingHealth = NIOLockedValueBox([TokenFamily: String?]())

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
    ///   - keyFiles: existing service-account key files for some families, read at every start; a server starting
    ///     (`reconcile`) makes each the family's signing key when it is not already (the previous key stays
    ///     published until its tokens expire).
    ///   - keyEncryptionKey: when given, new keys (and `keyFiles`) are sealed under it into the store.
    ///   - keyless: the families that sign through IAM or a PKCS#11 token: no private key of theirs is created or
    ///     kept; their signer becomes the family's signing key (retiring a previous key, which stays published
    ///     until its tokens expire).
    ///   - tokenLifetime: `exp − iat` of the tokens the keys sign, in seconds.
    ///   - clock: the clock for key creation, retirement and publication times.
    ///   - keyGenerator: how a missing family's key is made (by default a new RSA-2048 key).
    ///   - reconcile: whether to make each family's signing key match `keyless` (a server starting); false for a
    ///     tool that only reads or rotates the keys (`fleetauth keys rotate`), which then leaves keyless families
    ///     as they are.
    public init(
        store: any SigningKeyStore,
        keyDirectory: String,
        project: String,
        keyFiles: [TokenFamily: String] = [:],
        keyEncryptionKey: KeyEncryptionKey? = nil,
        keyless: [TokenFamily: KeylessSigner] = [:],
        tokenLifetime: Int64 = 3600,
        clock: any WallClock = .system,
        keyGenerator: KeyGenerator = .fresh,
        reconcile: Bool = true
    ) async throws {
        self.store = store
        self.keyDirectory = keyDirectory
        self.keyEncryptionKey = keyEncryptionKey
        self.lifetime = tokenLifetime
        self.publicationWindow = .seconds(tokenLifetime + 60)
        self.clock = clock
        self.project = project
        self.keyless = keyless
        let records = try await store.signingKeys()
        for family in TokenFamily.allCases {
            let current = records.last { $0.family == family && $0.retiredAt == nil }
            if let signer = keyless[family] {
                let record = SigningKeyRecord(
                    kid: signer.recordKeyID,
                    family: family,
                    material: .external(kind: signer.kind, email: signer.serviceAccountEmail),
                    createdAt: now
                )
                if current == nil {
                    _ = try await store.addFirstSigningKey(record)
                } else if current?.kid != record.kid || current?.material != record.material {
                    try await store.addSigningKey(record)
                }
                continue
            }
            // The operator's key file is read at every start (an unreadable one stops the server) and becomes the
            // family's signing key when it is not already, as a rotation would.
            let given = try keyFiles[family].map { try ServiceAccountKey(contentsOf: $0) }
            // A family that signed keylessly and no longer does gets a key of its own again.
            let replacesKeyless = reconcile && current?.material.isExternal == true
            let replacedByFile = reconcile && given != nil && current != nil && current?.kid != given?.privateKeyID
            guard current == nil || replacesKeyless || replacedByFile else { continue }
            let key =
                if let given {
                    given
                } else {
                    try await keyGenerator(projectID: project, name: family.accountName)
                }
            let material = try keep(key, family: family, file: keyFiles[family])
            let record = SigningKeyRecord(kid: key.privateKeyID, family: family, material: material, createdAt: now)
            if current != nil {
                try await store.addSigningKey(record)
                continue
            }
            let added = try await store.addFirstSigningKey(record)
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
        try PrivateFiles.directory(keyDirectory)
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
        case .external(let kind, let email):
            throw KeyEncryptionKeyError(
                .cannotUnseal,
                "Signing key \(record.kid) of \(email) is held by \(kind == "iam" ? "Google (IAM)" : "a PKCS#11 token"), "
                    + "not by FleetAuth."
            )
        case .sealed(let sealed):
            guard let keyEncryptionKey else {
                throw KeyEncryptionKeyError(
                    .cannotUnseal,
                    "Signing key \(record.kid) is sealed in the database: give the key-encryption key "
                        + "(--key-encryption-key-file FILE or \(KeyEncryptionKey.environmentVariable))."
                )
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
        guard state.withLockedValue({ now.timeIntervalSince($0.lastRefresh) >= refreshInterval.timeInterval }) else {
            return
        }
        try await refresh()
    }

    /// Rereads the key records, loading new keys and dropping removed ones.
    public func refresh() async throws {
        let now = clock.currentDate
        let records = try await store.signingKeys()
        let known = state.withLockedValue { Dictionary(uniqueKeysWithValues: $0.entries.map { ($0.record.kid, $0) }) }
        var fresh: [Entry] = []
        for record in records {
            if let entry = known[record.kid], entry.record == record {
                fresh.append(entry)
                continue
            }
            if case .external(let kind, let email) = record.material {
                fresh.append(try keylessEntry(record, kind: kind, email: email))
                continue
            }
            let key = try Self.key(of: record, keyEncryptionKey: keyEncryptionKey)
            let minter = try FleetEngineTokenMinter(
                signer: LocalKeySigner(key: key),
                configuration: .init(lifetime: lifetime)
            )
            fresh.append(
                Entry(
                    record: record,
                    key: key,
                    minter: minter,
                    email: key.clientEmail,
                    project: key.projectID,
                    publishedKey: key.verificationKey,
                    googleKeySetURL: nil
                )
            )
        }
        state.withLockedValue { $0 = State(entries: fresh, lastRefresh: now) }
    }

    /// The entry of a keyless family's record: its signer's minter when this process was given that signer.
    private func keylessEntry(_ record: SigningKeyRecord, kind: String, email: String) throws -> Entry {
        let signer = keyless[record.family].flatMap { $0.recordKeyID == record.kid ? $0 : nil }
        let minter = try signer.map {
            try FleetEngineTokenMinter(signer: $0.signer, configuration: .init(lifetime: lifetime))
        }
        var published: RSAVerificationKey?
        var googleKeysURL: String? = kind == "iam" ? KeylessSigner.googleKeysURL : nil
        switch signer?.publication {
        case .tokenServer(let key): published = key
        case .google(let keysURL): googleKeysURL = keysURL
        case nil: break
        }
        return Entry(
            record: record,
            key: nil,
            minter: minter,
            email: email,
            project: Self.project(ofServiceAccount: email) ?? project,
            publishedKey: published,
            googleKeySetURL: googleKeysURL.map { "\($0)/service_accounts/v1/metadata/jwk/\(email)" }
        )
    }

    /// The project of `NAME@PROJECT.iam.gserviceaccount.com`.
    static func project(ofServiceAccount email: String) -> String? {
        let suffix = ".iam.gserviceaccount.com"
        guard email.hasSuffix(suffix), let at = email.firstIndex(of: "@") else { return nil }
        let project = email[email.index(after: at)...].dropLast(suffix.count)
        return project.isEmpty ? nil : String(project)
    }

    /// The minter of `family`'s tokens; `UNAVAILABLE` when the family signs keylessly through a signer this
    /// process was not given.
    public func minter(for family: TokenFamily) throws(GoogleAPIError) -> (FleetEngineTokenMinter, Entry) {
        let entry = try signingKey(for: family)
        guard let minter = entry.minter else {
            throw .unavailable(
                "The \(family) family signs through a signer this instance was not configured with "
                    + "(\(entry.record.material.storedPath ?? entry.record.kid))."
            )
        }
        return (minter, entry)
    }

    /// The key that signs `family`'s tokens.
    public func signingKey(for family: TokenFamily) throws(GoogleAPIError) -> Entry {
        let entry = state.withLockedValue {
            $0.entries.last { $0.record.family == family && $0.record.retiredAt == nil }
        }
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
        let keys = state.withLockedValue {
            $0.entries.filter {
                $0.email == email && $0.publishedKey != nil && ($0.record.retiredAt.map { now < $0 + window } ?? true)
            }
        }
        return keys.isEmpty ? nil : keys.compactMap(\.publishedKey)
    }

    /// Adds a new key to `family`'s account and makes it the signing key; the old one is retired now.
    @discardableResult
    public func rotate(_ family: TokenFamily) async throws -> SigningKeyRecord {
        try await refresh()
        let current = try signingKey(for: family)
        guard let currentKey = current.key else {
            let place =
                current.googleKeySetURL != nil
                ? "Google's IAM (rotate it there: gcloud iam service-accounts keys create/delete)"
                : "a PKCS#11 token (create a new key there, upload its certificate, and restart with its --key-id)"
            throw GoogleAPIError.failedPrecondition(
                "The \(family) family signs as \(current.email) with a key held by \(place); FleetAuth holds no key "
                    + "of it to rotate."
            )
        }
        let key = try await currentKey.newKeyDetached()
        let record = SigningKeyRecord(
            kid: key.privateKeyID,
            family: family,
            material: try keep(key, family: family),
            createdAt: now
        )
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
    package func pruner(interval: Duration = .seconds(60), logger: Logger = .silent(label: "fleetauth.keyring"))
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
            guard let entry = try? signingKey(for: family) else { return nil }
            return (family, entry.email, entry.project)
        }
    }

    /// The JWK set URL of each family's account on a server reachable at `baseURL`.
    /// IAM families' keys are Google's: their URL is under Google's keys URL (``KeylessSigner/googleKeysURL``).
    public func keySetURLs(baseURL: String) -> [(family: TokenFamily, email: String, project: String, url: String)] {
        TokenFamily.allCases.compactMap { family in
            guard let entry = try? signingKey(for: family) else { return nil }
            let url = entry.googleKeySetURL ?? "\(baseURL)/service_accounts/v1/metadata/jwk/\(entry.email)"
            return (family, entry.email, entry.project, url)
        }
    }

    /// What a Fleet Engine emulator needs to trust this server's accounts: each family's account with its roles,
    /// keys by JWK set URL on a server reachable at `baseURL` (so rotations reach it without a restart).
    public func trustConfiguration(baseURL: String) -> TrustConfiguration {
        TrustConfiguration(
            serviceAccounts: keySetURLs(baseURL: baseURL).map { entry in
                .init(
                    account: TrustedServiceAccount(
                        email: entry.email,
                        project: entry.project,
                        roles: entry.family.roles
                    ),
                    keySource: .jwksURL(entry.url)
                )
            }
        )
    }
}
