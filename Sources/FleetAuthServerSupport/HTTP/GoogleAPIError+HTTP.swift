public import FleetAuthServerCore
public import Hummingbird

// Google's error body over Hummingbird: a route or middleware that throws either error answers with it.

extension GoogleAPIError: HTTPResponseError {
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: code.httpStatus) }

    /// Google's error body with `Cache-Control: no-store`, `Retry-After` when set, and `WWW-Authenticate: Bearer`
    /// on a 401.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [:]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if code == .unauthenticated { headers[.wwwAuthenticate] = "Bearer" }
        return JSONResponse.make(jsonObject, status: status, headers: headers)
    }
}

extension StoreError: HTTPResponseError {
    /// The HTTP status of the ``GoogleAPIError`` it is answered as.
    public var status: HTTPResponse.Status { GoogleAPIError(self).status }

    /// Answered as the ``GoogleAPIError`` with the same meaning and message.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try GoogleAPIError(self).response(from: request, context: context)
    }
}
