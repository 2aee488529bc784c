import HummingbirdBcrypt
import NIOConcurrencyHelpers
import NIOPosix

/// bcrypt hashing and checking of app-user passwords, on NIO's thread pool (never on the event loops or Swift's
/// cooperative pool, which a 250 ms hash would stall).
///
/// A wrong password costs the same work whoever the username names, so response times do not tell which usernames
/// exist: an unknown user's password is checked against a dummy hash of the highest cost the stored hashes have
/// (``LoginService`` tells which), and a user whose hash has a lower cost (stored before the cost was raised, and not
/// re-hashed yet because the user has not logged in since) is checked again against dummy hashes of its cost until
/// the work is the same: 2^(d−c) checks at cost c do the work of one at cost d.
public struct PasswordHasher: Sendable {
    /// The bcrypt cost of new hashes (work factor 2^cost).
    public let cost: UInt8
    /// The dummy hash of each cost used so far.
    private let dummyHashes: NIOLockedValueBox<[UInt8: String]>
    /// The work of every check so far, in units of one bcrypt round (a check at cost c is 2^c): what an observer of
    /// response times measures, for tests.
    private let work = NIOLockedValueBox<UInt64>(0)

    /// A hasher for new hashes of `cost`. Its dummy hashes are made when first needed, on NIO's thread pool: a server
    /// makes the one of its own cost as it starts (``prepareDummy(cost:)``), before its first login, and a command
    /// that only adds users never makes one.
    public init(cost: UInt8 = 12) {
        self.cost = cost
        self.dummyHashes = NIOLockedValueBox([:])
    }

    /// The work of every check so far (a check at cost c counts 2^c).
    package var workDone: UInt64 { work.withLockedValue { $0 } }

    private func count(checks: Int, cost: UInt8) {
        work.withLockedValue { $0 += UInt64(checks) << UInt64(cost) }
    }

    private static func dummyHash(cost: UInt8) -> String { Bcrypt.hash("fleetauth-dummy-password", cost: cost) }

    /// The bcrypt cost of `hash` (`$2a$`, `$2b$` or `$2y$`, then two digits), or nil if it is not a bcrypt hash.
    public static func cost(of hash: String) -> UInt8? {
        let bytes = Array(hash.utf8.prefix(7))
        guard bytes.count == 7, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
            [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]),
            bytes[3] == UInt8(ascii: "$"), bytes[6] == UInt8(ascii: "$"),
            let cost = UInt8(String(decoding: bytes[4..<6], as: UTF8.self)), (4...31).contains(cost)
        else { return nil }
        return cost
    }

    /// A bcrypt hash of `password`.
    public func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Makes the dummy hash of `cost` ready, so the first unknown user checked at that cost costs no more than the
    /// next.
    public func prepareDummy(cost: UInt8) async throws { _ = try await dummyHash(cost: cost) }

    private func dummyHash(cost: UInt8) async throws -> String {
        if let hash = dummyHashes.withLockedValue({ $0[cost] }) { return hash }
        let hash = try await NIOThreadPool.singleton.runIfActive { Self.dummyHash(cost: cost) }
        return dummyHashes.withLockedValue { hashes in
            if let existing = hashes[cost] { return existing }
            hashes[cost] = hash
            return hash
        }
    }

    /// Whether `password` matches `hash`; with no hash (an unknown user), false after the same work: a check
    /// against a dummy hash of `dummyCost` (by default ``cost``). A wrong password for a hash of a lower cost than
    /// `dummyCost` is checked against dummy hashes of that cost until the work equals one check at `dummyCost`.
    public func verify(_ password: String, against hash: String?, dummyCost: UInt8? = nil) async throws -> Bool {
        // A password no user can have (a control character: bcrypt would stop reading at a NUL) is checked against
        // a dummy hash of the stored hash's cost, so it costs what any other wrong password costs, and never matches.
        let refused = AppUser.hasControlCharacters(password)
        let target = dummyCost ?? cost
        let hashCost = hash.flatMap(Self.cost(of:))
        let checked: String
        if let hash, !refused {
            checked = hash
        } else {
            checked = try await dummyHash(cost: hashCost ?? target)
        }
        let matches = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: checked) }
        count(checks: 1, cost: Self.cost(of: checked) ?? target)
        let accepted = hash != nil && !refused && matches
        if !accepted, let hashCost, hashCost < target {
            let padding = try await dummyHash(cost: hashCost)
            let extra = (1 << Int(min(target - hashCost, 8))) - 1
            try await NIOThreadPool.singleton.runIfActive {
                for _ in 0..<extra { _ = Bcrypt.verify(password, hash: padding) }
            }
            count(checks: extra, cost: hashCost)
        }
        return accepted
    }
}
