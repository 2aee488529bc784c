/// The decisions of ``AccessTokenSource``, as a pure state machine: when a cached access token may be used, when a
/// fetch starts, and what a refused token does.
///
/// Rules:
/// 1. A token is used until ``refreshMargin`` (5 minutes) before it expires, as Google's libraries do.
/// 2. One fetch at a time: callers that arrive while one is in flight wait for it.
/// 3. A fetch that fails fails every caller waiting for it; the next caller starts a new one.
/// 4. A token the API refused (401) is dropped — only if it is still the cached one, so many callers refused with
///    the same token cause one refetch, not one each.
struct AccessTokenCache: Sendable {
    struct Token: Sendable, Equatable {
        var value: String
        /// Seconds since the epoch.
        var expiresAt: Double
    }

    enum Action: Equatable {
        case use(String)
        case startFetch
        case wait
    }

    static let refreshMargin: Double = 300

    private(set) var token: Token?
    private(set) var fetching = false

    mutating func request(now: Double) -> Action {
        if let token, now < token.expiresAt - Self.refreshMargin { return .use(token.value) }
        if fetching { return .wait }
        fetching = true
        return .startFetch
    }

    mutating func fetched(_ token: Token) {
        self.token = token
        fetching = false
    }

    mutating func failed() {
        fetching = false
    }

    mutating func refused(_ value: String) {
        if token?.value == value { token = nil }
    }
}
