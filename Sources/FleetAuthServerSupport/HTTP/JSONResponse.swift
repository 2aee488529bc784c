public import FleetAuthCore
public import Hummingbird

/// JSON answers, the same from both servers: Google's content type and `Cache-Control: no-store` (answers are
/// per caller and change with every write; a token server's must never be cached).
public enum JSONResponse {
    /// The content type of every JSON answer.
    public static let contentType = "application/json; charset=UTF-8"

    /// `object` as the body; `headers` are added (and may replace `Cache-Control`).
    public static func make(_ object: JSONObject, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:])
        -> Response
    {
        var fields: HTTPFields = [.contentType: contentType, .cacheControl: "no-store"]
        for field in headers { fields[field.name] = field.value }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: object.jsonBytes)))
    }
}
