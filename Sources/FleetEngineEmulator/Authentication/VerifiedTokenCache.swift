import FleetAuthCore
import FleetAuthJWT
import Foundation

/// Tokens that passed full verification, so the same token on the next location update costs a lookup instead
/// of an RSA verification. Apps reuse one token for up to an hour, so nearly every request hits.
///
/// Safety rules:
/// - only **valid** tokens are stored, so a flood of forged tokens cannot grow the cache
///   (rule D3 of FleetAuthJWT's *Verification rules* article);
/// - the key is the exact token string, which strict base64url makes a unique spelling of the token;
/// - an entry is used only while `now < exp` (every other time rule can only get easier as time passes:
///   `iat` and `nbf` move further into the past, `exp` comes closer);
/// - the cache is emptied whenever the trusted keys change, so a removed key stops working at once;
/// - it holds at most ``capacity`` entries; when full, expired entries go first, then the oldest half.
final class VerifiedTokenCache: @unchecked Sendable {
    struct Entry {
        let token: VerifiedToken
        let expiresAt: Int64
        let insertedAt: UInt64
    }

    let capacity: Int
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var counter: UInt64 = 0

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// The cached verification of `token`, if it is still unexpired at `now`.
    func lookup(_ token: String, now: Int64) -> VerifiedToken? {
        lock.withLock {
            guard let entry = entries[token] else { return nil }
            guard now < entry.expiresAt else {
                entries[token] = nil
                return nil
            }
            return entry.token
        }
    }

    /// Stores a token that has just passed verification.
    func insert(_ token: String, verified: VerifiedToken, now: Int64) {
        lock.withLock {
            if entries.count >= capacity {
                entries = entries.filter { $0.value.expiresAt > now }
                if entries.count >= capacity {
                    let cutoff = entries.values.map(\.insertedAt).sorted()[entries.count / 2]
                    entries = entries.filter { $0.value.insertedAt > cutoff }
                }
            }
            counter += 1
            entries[token] = Entry(token: verified, expiresAt: verified.claims.expiresAt, insertedAt: counter)
        }
    }

    /// Forgets every token (the trusted keys changed).
    func removeAll() {
        lock.withLock { entries.removeAll(keepingCapacity: true) }
    }

    var count: Int { lock.withLock { entries.count } }
}
