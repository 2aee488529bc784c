import FleetAuthCore
import FleetAuthJWT
import NIOHTTP1

/// The public keys Google publishes for one service account (`{base}/service_accounts/v1/metadata/jwk/{email}`),
/// fetched when first needed and again when a token names a `kid` not among them (a key Google just created), at
/// most once per ``minimumRefetchInterval``, so a flood of made-up `kid`s costs one request per interval.
actor PublishedKeys {
    let url: String
    let minimumRefetchInterval: Duration
    private let http: GoogleHTTP
    private let timeout: Duration
    private var keys: [RSAVerificationKey]?
    private var lastFetch: ContinuousClock.Instant?

    init(url: String, http: GoogleHTTP, timeout: Duration, minimumRefetchInterval: Duration = .seconds(10)) {
        self.url = url
        self.http = http
        self.timeout = timeout
        self.minimumRefetchInterval = minimumRefetchInterval
    }

    /// The key with `kid`, or nil when the account does not publish it even after a refetch.
    func key(_ kid: String) async throws(SigningError) -> RSAVerificationKey? {
        if let key = keys?.first(where: { $0.keyID == kid }) { return key }
        if keys != nil, let lastFetch, ContinuousClock.now - lastFetch < minimumRefetchInterval { return nil }
        let fetched = try await fetch()
        return fetched.first { $0.keyID == kid }
    }

    private func fetch() async throws(SigningError) -> [RSAVerificationKey] {
        lastFetch = .now
        let what = "the public keys at \(url)"
        let answer = try await http.send(.GET, url, timeout: timeout, what: what)
        switch answer.status {
        case 200: break
        case 429, 500...: throw .unavailable("\(what) answered \(answer.status): \(answer.errorMessage)")
        default: throw .invalidResponse("\(what) answered \(answer.status): \(answer.errorMessage)")
        }
        do {
            let fetched = try JSONWebKeySet(json: answer.body).verificationKeys()
            keys = fetched
            return fetched
        } catch {
            throw .invalidResponse("\(what) are not a usable JWK set: \(error.message)")
        }
    }
}
