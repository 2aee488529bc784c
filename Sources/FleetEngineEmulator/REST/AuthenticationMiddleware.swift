import FleetAuthServerSupport
import Hummingbird

/// Authenticates every request it guards (steps 1 and 2 of <doc:AuthorizationModel>) before any handler reads
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
        context.principal = try await ServerTracing.span("verify token") {
            try await authenticator.authenticate(authorization: request.headers[.authorization], refresher: refresher)
        }
        return try await next(request, context)
    }
}
