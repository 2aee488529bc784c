import HummingbirdBcrypt
import NIOPosix

/// bcrypt hashing and checking of app-user passwords, on NIO's thread pool (never on the event loops or Swift's
/// cooperative pool, which a 250 ms hash would stall).
///
/// Checking a password for an unknown user costs the same as for a known one: it is checked against a dummy hash
/// of the same cost, so response times do not tell which usernames exist.
public struct PasswordHasher: Sendable {
    /// The bcrypt cost of new hashes (work factor 2^cost).
    public let cost: UInt8
    private let dummyHash: String

    public init(cost: UInt8 = 12) {
        self.cost = cost
        self.dummyHash = Bcrypt.hash("fleetauth-dummy-password", cost: cost)
    }

    /// A bcrypt hash of `password`.
    public func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`; with no hash (an unknown user), false after the same work.
    public func verify(_ password: String, against hash: String?) async throws -> Bool {
        // A password no user can have (a control character: bcrypt would stop reading at a NUL) is checked against
        // the dummy hash, so it costs what any other wrong password costs, and never matches.
        let refused = AppUser.hasControlCharacters(password)
        let checked = (refused ? nil : hash) ?? dummyHash
        let matches = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: checked) }
        return hash != nil && !refused && matches
    }
}
