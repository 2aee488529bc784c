import FleetAuthCore
import FleetAuthJWT
import Foundation
import NIOConcurrencyHelpers

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
final class VerifiedTokenCache: Sendable {
    struct Entry {
        let token: VerifiedToken
        let expiresAt: Int64
        let insertedAt: UInt64
    }

    let capacity: Int
    private struct State {
        var entries: [String: Entry] = [:]
        var counter: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// The cached verification of `token`, if it is still unexpired at `now`.
    func lookup(_ token: String, now: Int64) -> VerifiedToken? {
        state.withLockedValue { state in
            guard let entry = state.entries[token] else { return nil }
            guard now < entry.expiresAt else {
                state.entries[token] = nil
                return nil
            }
            return entry.token
        }
    }

    /// Stores a token that has just passed verification.
    func insert(_ token: String, verified: VerifiedToken, now: Int64) {
        state.withLockedValue { state in
            if state.entries.count >= capacity {
                state.entries = state.entries.filter { $0.value.expiresAt > now }
                if state.entries.count >= capacity {
                    let cutoff = state.entries.values.map(\.insertedAt).sorted()[state.entries.count / 2]
                    state.entries = state.entries.filter { $0.value.insertedAt > cutoff }
                }
            }
            state.counter += 1
            state.entries[token] = Entry(
                token: verified,
                expiresAt: verified.claims.expiresAt,
                insertedAt: state.counter
            )
        }
    }

    /// Forgets every token (the trusted keys changed).
    func removeAll() {
        state.withLockedValue { $0.entries.removeAll(keepingCapacity: true) }
    }

    var count: Int { state.withLockedValue { $0.entries.count } }
}
