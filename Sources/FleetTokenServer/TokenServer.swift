import FleetAuthCore
public import Foundation
public import Hummingbird
public import Logging

/// "Your server": app users log in, and get Fleet Engine tokens for what they were granted.
///
/// ```swift
/// let store = try TokenServerStore(path: "token-server-data/token-server.sqlite")
/// let server = try await TokenServer(store: store, dataDirectory: "token-server-data", project: "my-project")
/// try await server.application(port: 8788).runService()
/// ```
public struct TokenServer {
    /// Passwords, sessions and throttling.
    public let login: LoginService
    /// The signing keys.
    public let keyring: Keyring
    /// The API.
    public let router: Router<TokenServerRequestContext>

    /// Opens the keyring (creating missing keys under `dataDirectory/keys`) and builds the router.
    ///
    /// - Parameters:
    ///   - store: users, grants, sessions, key records and audit.
    ///   - dataDirectory: where generated keys are written.
    ///   - project: the Google Cloud project (Fleet Engine provider) of generated keys.
    ///   - keyFiles: existing service-account key files to use for some families instead of generating keys.
    ///   - bcryptCost: the bcrypt cost of new password hashes.
    ///   - tokenLifetime: `exp − iat` of issued tokens, at most 3600 s.
    ///   - throttle: the failed-login throttle.
    ///   - auditLogger: where every issued token is logged (without the token).
    ///   - now: the clock.
    public init(
        store: TokenServerStore,
        dataDirectory: String,
        project: String,
        keyFiles: [TokenFamily: String] = [:],
        bcryptCost: UInt8 = 12,
        tokenLifetime: Int64 = 3600,
        throttle: LoginThrottle = LoginThrottle(),
        auditLogger: Logger = Logger(label: "fleetauth.token-server.audit"),
        now: @escaping @Sendable () -> Date = { Date() }
    ) async throws {
        login = LoginService(store: store, bcryptCost: bcryptCost, throttle: throttle, now: now)
        keyring = try await Keyring(
            store: store, keyDirectory: dataDirectory + "/keys", project: project, keyFiles: keyFiles,
            tokenLifetime: tokenLifetime, now: now())
        router = Router(context: TokenServerRequestContext.self)
        TokenServerRoutes(login: login, keyring: keyring, now: now, auditLogger: auditLogger).register(on: router)
    }

    /// An HTTP/1.1 server on `host:port` (port 0 picks a free one, passed to `onServerRunning`), with bounded
    /// headers and a 30-second idle timeout.
    public func application(
        host: String = "127.0.0.1",
        port: Int = 8788,
        logger: Logger = Logger(label: "fleetauth.token-server"),
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router,
            server: .http1(
                configuration: .init(
                    idleTimeout: .seconds(30),
                    httpDecoderConfiguration: .init(
                        maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 64 * 1024, maxHeaderFieldCount: 100))),
            configuration: .init(address: .hostname(host, port: port), serverName: "fleetauth-token-server"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}
