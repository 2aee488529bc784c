package import FleetAuthCore
package import Hummingbird

/// JSON answers, the same from both servers: Google's content type and `Cache-Control: no-store` (answers are
/// per caller and change with every write; a token server's must never be cached).
package enum JSONResponse {
    /// The content type of every JSON answer.
    package static let contentType = "application/json; charset=UTF-8"

    /// `object` as the body; `headers` are added (and may replace `Cache-Control`).
    package static func make(_ object: JSONObject, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:])
        -> Response
    {
        var fields: HTTPFields = [.contentType: contentType, .cacheControl: "no-store"]
        for field in headers { fields[field.name] = field.value }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: object.jsonBytes)))
    }
}
