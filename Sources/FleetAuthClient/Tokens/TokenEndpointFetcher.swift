public import FleetAuthCore
public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Fetches tokens from the app's token endpoint with URLSession: Google's sample backends, FleetAuth's token
/// server, or anything answering JSON with a JWT.
///
/// ```swift
/// let fetcher = TokenEndpointFetcher(
///     urlTemplate: "https://backend.example.com/token/driver/{vehicleId}",
///     headers: { ["Authorization": "Bearer \(session.token)"] })
/// let provider = CachingTokenProvider(fetcher: fetcher)
/// ```
public struct TokenEndpointFetcher: TokenFetcher {
    /// How the answer states when the token expires.
    public enum Expiry: Sendable, Hashable {
        /// Detect it: the first present key of ``ResponseKeys/expiry`` is read as absolute epoch milliseconds,
        /// absolute epoch seconds or seconds from issue — whichever agrees with the JWT's own `exp` and `iat`
        /// (within a minute); failing that, by magnitude (above 10¹¹ milliseconds, above 10⁹ seconds, else
        /// relative), which the conventions' nine orders of magnitude keep apart. So Google's ODRD
        /// (`expirationTimestamp`, absolute ms), LMFS (`expiration_timestamp_ms`) and JavaScript-style
        /// (`expiresInSeconds`, relative) answers all work. The provider never lets a stated lifetime exceed the
        /// JWT's.
        case automatic
        /// Absolute Unix epoch milliseconds (every Google sample backend).
        case absoluteMilliseconds
        /// Absolute Unix epoch seconds.
        case absoluteSeconds
        /// Seconds from issue (the JavaScript SDK's `expiresInSeconds`).
        case relativeSeconds
        /// Ignore the answer's expiry; use the JWT's `exp − iat`.
        case fromJWT
    }

    /// Which JSON members hold the token and its expiry; the first present one is used.
    public struct ResponseKeys: Sendable, Hashable {
        public var token: [String]
        public var expiry: [String]

        /// `jwt` or `token`; `expirationTimestamp`, `expiration_timestamp_ms` or `expiresInSeconds`.
        public init(
            token: [String] = ["jwt", "token"],
            expiry: [String] = ["expirationTimestamp", "expiration_timestamp_ms", "expiresInSeconds"]
        ) {
            self.token = token
            self.expiry = expiry
        }
    }

    /// The endpoint, with `{vehicleId}`, `{tripId}`, `{deliveryVehicleId}`, `{taskId}` or `{trackingId}` replaced
    /// by the context's (percent-encoded) IDs.
    public let urlTemplate: String
    public let responseKeys: ResponseKeys
    public let expiry: Expiry
    /// Seconds before a request is abandoned (a transient failure).
    public let timeout: TimeInterval
    private let headers: @Sendable () async throws -> [String: String]
    private let session: URLSession

    /// - Parameters:
    ///   - urlTemplate: the endpoint URL with placeholders for the context's IDs.
    ///   - headers: extra request headers, such as the app session's `Authorization`; asked for on every fetch.
    ///   - responseKeys: where the token and expiry are in the JSON answer.
    ///   - expiry: how to read the expiry.
    ///   - timeout: the request timeout in seconds.
    ///   - session: the URLSession (default: an ephemeral one, so nothing is cached on disk).
    public init(
        urlTemplate: String,
        headers: @escaping @Sendable () async throws -> [String: String] = { [:] },
        responseKeys: ResponseKeys = ResponseKeys(),
        expiry: Expiry = .automatic,
        timeout: TimeInterval = 15,
        session: URLSession = URLSession(configuration: .ephemeral)
    ) {
        self.urlTemplate = urlTemplate
        self.headers = headers
        self.responseKeys = responseKeys
        self.expiry = expiry
        self.timeout = timeout
        self.session = session
    }

    /// The URL for `context`; fails when the template names an ID the context lacks.
    public func url(for context: AuthorizationContext) throws(FleetTokenError) -> URL {
        var text = urlTemplate
        let values: [(String, String?)] = [
            ("{vehicleId}", context.vehicleID), ("{tripId}", context.tripID),
            ("{deliveryVehicleId}", context.deliveryVehicleID), ("{taskId}", context.taskID),
            ("{trackingId}", context.trackingID),
        ]
        for (placeholder, value) in values where text.contains(placeholder) {
            guard let encoded = value?.pathSegmentEncoded else {
                throw FleetTokenError(.missingContext, "The token URL needs \(placeholder) but the context has none.")
            }
            text = text.replacingOccurrences(of: placeholder, with: encoded)
        }
        guard let url = URL(string: text) else {
            throw FleetTokenError(.endpointRejected, "The token URL template does not make a valid URL.")
        }
        return url
    }

    public func fetchToken(for context: AuthorizationContext) async throws -> FetchedToken {
        var request = URLRequest(url: try url(for: context), timeoutInterval: timeout)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        for (name, value) in try await headers() { request.setValue(value, forHTTPHeaderField: name) }
        let data: Data
        let response: URLResponse
        do {
            TracePropagation.inject(into: &request)
            (data, response) = try await session.cancellationSafeData(for: request)
        } catch {
            throw FleetTokenError(.endpointUnavailable, "The token endpoint could not be reached: \(error).")
        }
        guard let http = response as? HTTPURLResponse else {
            throw FleetTokenError(.endpointUnavailable, "The token endpoint gave no HTTP answer.")
        }
        guard (200..<300).contains(http.statusCode) else {
            throw Self.error(status: http.statusCode, what: "The token endpoint")
        }
        return try Self.read(Array(data), keys: responseKeys, expiry: expiry)
    }

    /// The error for a non-2xx answer: 408, 425, 429 and 5xx are transient, any other status a refusal.
    static func error(status: Int, what: String) -> FleetTokenError {
        switch status {
        case 408, 425, 429, 500...599:
            FleetTokenError(.endpointUnavailable, "\(what) answered \(status).", httpStatus: status)
        default:
            FleetTokenError(.endpointRejected, "\(what) answered \(status).", httpStatus: status)
        }
    }

    /// Reads a token endpoint's JSON answer.
    public static func read(_ body: [UInt8], keys: ResponseKeys = ResponseKeys(), expiry: Expiry = .automatic)
        throws(FleetTokenError) -> FetchedToken
    {
        guard let object = try? StrictJSONParser().parseObject(body) else {
            throw FleetTokenError(.malformedToken, "The token endpoint's answer is not a JSON object.")
        }
        guard let jwt = keys.token.lazy.compactMap({ object[$0]?.stringValue }).first, !jwt.isEmpty else {
            throw FleetTokenError(
                .malformedToken,
                "The answer has no token under \(keys.token.joined(separator: " or "))."
            )
        }
        guard let jws = try? CompactJWS(jwt), let claims = try? StrictJSONParser().parseObject(jws.payload),
            let exp = claims["exp"]?.integerValue
        else { throw FleetTokenError(.malformedToken, "The token is not a JWT with an integer exp.") }
        let iat = claims["iat"]?.integerValue
        guard expiry != .fromJWT,
            let value = keys.expiry.lazy.compactMap({ object[$0]?.numberValue }).first
        else { return FetchedToken(jwt: jwt) }
        let seconds: Double?
        switch expiry {
        case .absoluteMilliseconds: seconds = iat.map { value / 1000 - Double($0) }
        case .absoluteSeconds: seconds = iat.map { value - Double($0) }
        case .relativeSeconds: seconds = value
        case .fromJWT: seconds = nil
        case .automatic: seconds = detectLifetime(value, exp: exp, iat: iat)
        }
        guard let seconds, seconds > 0 else { return FetchedToken(jwt: jwt) }
        return FetchedToken(jwt: jwt, statedLifetime: .milliseconds(Int64(seconds * 1000)))
    }

    /// The lifetime `value` states, read in whichever convention agrees with the JWT's `exp` (and `iat`).
    static func detectLifetime(_ value: Double, exp: Int64, iat: Int64?) -> Double? {
        let tolerance = 60.0
        let expiry = Double(exp)
        if abs(value / 1000 - expiry) <= tolerance { return iat.map { value / 1000 - Double($0) } }
        if abs(value - expiry) <= tolerance { return iat.map { value - Double($0) } }
        if let iat, abs(value - Double(exp - iat)) <= tolerance { return value }
        if value > 1e11 { return iat.map { value / 1000 - Double($0) } }
        if value > 1e9 { return iat.map { value - Double($0) } }
        return value
    }
}
