import FleetAuthCore
public import Hummingbird

extension FleetEngineError: HTTPResponseError {
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: code.httpStatus) }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONResponse.make(jsonObject, status: status)
    }
}

/// JSON responses with Google's content type.
enum JSONResponse {
    static func make(_ object: JSONObject, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=UTF-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: object.jsonBytes))
        )
    }
}
