import Hummingbird

/// Cross-origin access for pages that call Fleet Engine straight from the browser, as Google's JavaScript
/// journey-sharing library does: a preflight `OPTIONS` is answered for any path, `Authorization` and
/// `Content-Type` may be sent, and responses — errors included, so a page can see a 401 and fetch a new token — name
/// the allowed origin. Only the configured origins are allowed (exact `scheme://host:port`, or `*` for any);
/// credentials (cookies) are never allowed: a bearer token is the only credential. A request from another origin
/// is served as before but without CORS headers, so the browser keeps its answer from the page, and its preflight
/// is refused with 403.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The allowed origins.
    let origins: [String]

    static var allowedMethods: String { "GET, POST, PUT, PATCH, DELETE" }
    static var allowedHeaders: String { "Authorization, Content-Type" }

    func allows(_ origin: String) -> Bool { origins.contains("*") || origins.contains(origin) }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        let preflight = request.method == .options && request.headers[.accessControlRequestMethod] != nil
        guard allows(origin) else {
            if preflight {
                return Response(status: .forbidden, headers: [.vary: "Origin", .cacheControl: "no-store"])
            }
            return try await next(request, context)
        }
        if preflight {
            return Response(
                status: .noContent,
                headers: [
                    .accessControlAllowOrigin: origin, .accessControlAllowMethods: Self.allowedMethods,
                    .accessControlAllowHeaders: Self.allowedHeaders, .accessControlMaxAge: "600", .vary: "Origin",
                ]
            )
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.vary] = "Origin"
        return response
    }
}
