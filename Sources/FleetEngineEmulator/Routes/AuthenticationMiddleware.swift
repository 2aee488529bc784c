import Hummingbird

/// Authenticates every request it guards (`reference/fleet-engine.md` §1.5 steps 1–6) before any handler reads
/// or writes anything.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let authenticator: TokenAuthenticator
    let refresher: KeyRefresher?

    func handle(
        _ request: Request,
        context: EmulatorRequestContext,
        next: (Request, EmulatorRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.principal = try await authenticator.authenticate(
            authorization: request.headers[.authorization],
            refresher: refresher
        )
        return try await next(request, context)
    }
}
