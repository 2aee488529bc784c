public import FleetAuthClient
public import FleetAuthCore
import Foundation

/// A fake token endpoint for token-provider tests: counts fetches, answers with JWT-shaped tokens (unsigned: a
/// provider reads `iat` and `exp`, it never verifies), can hold fetches in flight until released, and can fail on
/// demand. It stands in for the app's backend, which tests cannot reach.
///
/// Every fetch it starts, holds and answers is an ``Event`` in ``events``, so a test waits for "the fetch is
/// held" or "three fetches have started" with ``waitUntil(fetches:held:)`` instead of polling.
public final class CountingTokenFetcher: TokenFetcher, @unchecked Sendable {
    /// What the next fetches answer.
    public enum Answer: Sendable {
        /// A token with this lifetime (`exp − iat`), issued at the fetcher's `issuedAt`.
        case token(lifetime: Int64)
        /// A token with a stated lifetime shorter or longer than its JWT says.
        case tokenWithStatedLifetime(jwtLifetime: Int64, stated: Duration)
        /// A given JWT, exactly.
        case jwt(String)
        /// A failure.
        case failure(FleetTokenError)
    }

    /// What happened to a fetch.
    public enum Event: Sendable, Hashable {
        /// Fetch `n` began (the first is 1).
        case started(Int)
        /// Fetch `n` is held in flight until ``CountingTokenFetcher/release()``.
        case held(Int)
        /// Fetch `n` answered or failed.
        case answered(Int)
    }

    /// Every fetch event, in order.
    public let events = EventRecorder<Event>()
    private let lock = NSLock()
    private var count = 0
    private var answers: [Answer] = []
    private var defaultAnswer: Answer
    private var holding = false
    private var held: [CheckedContinuation<Void, Never>] = []
    private var serial = 0
    /// `iat` of the tokens made (epoch seconds).
    public var issuedAt: Int64

    /// - Parameters:
    ///   - lifetime: the lifetime of tokens when no other answer is queued.
    ///   - issuedAt: their `iat`.
    public init(lifetime: Int64 = 3600, issuedAt: Int64 = 1_800_000_000) {
        self.defaultAnswer = .token(lifetime: lifetime)
        self.issuedAt = issuedAt
    }

    /// How many fetches have started.
    public var fetchCount: Int { lock.withLock { count } }
    /// How many fetches are held in flight.
    public var heldCount: Int { lock.withLock { held.count } }

    /// Queues answers for the next fetches (then the default answer again).
    public func enqueue(_ answers: Answer...) { lock.withLock { self.answers += answers } }

    /// Holds every fetch from now on in flight until ``release()``.
    public func hold() { lock.withLock { holding = true } }

    /// Lets held fetches (and later ones) go on.
    public func release() {
        let waiting = lock.withLock {
            holding = false
            defer { held = [] }
            return held
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once at least `fetches` fetches have started and at least `held` are held in flight.
    public func waitUntil(fetches: Int = 0, held: Int = 0) async {
        await events.wait { events in
            var started = 0
            var holding = Set<Int>()
            for event in events {
                switch event {
                case .started: started += 1
                case .held(let number): holding.insert(number)
                case .answered(let number): holding.remove(number)
                }
            }
            return started >= fetches && holding.count >= held
        }
    }

    public func fetchToken(for context: AuthorizationContext) async throws -> FetchedToken {
        let (mustHold, number) = lock.withLock {
            count += 1
            return (holding, count)
        }
        events.record(.started(number))
        defer { events.record(.answered(number)) }
        if mustHold {
            await withCheckedContinuation { continuation in
                let resumeNow = lock.withLock {
                    if holding { held.append(continuation) }
                    return !holding
                }
                if resumeNow {
                    continuation.resume()
                } else {
                    events.record(.held(number))
                }
            }
        }
        let (answer, tokenSerial, iat) = lock.withLock {
            serial += 1
            return (answers.isEmpty ? defaultAnswer : answers.removeFirst(), serial, issuedAt)
        }
        switch answer {
        case .token(let lifetime):
            return FetchedToken(jwt: Self.jwt(context: context, issuedAt: iat, lifetime: lifetime, serial: tokenSerial))
        case .tokenWithStatedLifetime(let lifetime, let stated):
            return FetchedToken(
                jwt: Self.jwt(context: context, issuedAt: iat, lifetime: lifetime, serial: tokenSerial),
                statedLifetime: stated
            )
        case .jwt(let jwt):
            return FetchedToken(jwt: jwt)
        case .failure(let error):
            throw error
        }
    }

    /// An unsigned JWT-shaped token: `{"alg":"RS256","typ":"JWT"}` header, claims with `iat`, `exp`, the serial
    /// number as `jti`, and a fixed fake signature.
    public static func jwt(context: AuthorizationContext, issuedAt: Int64, lifetime: Int64, serial: Int) -> String {
        var authorization = JSONObject()
        if let vehicle = context.vehicleID { authorization["vehicleid"] = .string(vehicle) }
        if let trip = context.tripID { authorization["tripid"] = .string(trip) }
        let payload: JSONObject = [
            "iss": "fake@demo-project.iam.gserviceaccount.com", "iat": .integer(issuedAt),
            "exp": .integer(issuedAt + lifetime), "jti": .string("token-\(serial)"),
            "authorization": .object(authorization),
        ]
        let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
        return header + "." + Base64URL.encode(payload.jsonBytes) + "." + Base64URL.encode(Array("fake".utf8))
    }
}
