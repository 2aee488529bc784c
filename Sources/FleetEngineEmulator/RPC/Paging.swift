import FleetAuthCore
import FleetAuthServerCore
import FleetEngineAPI
import SwiftProtobuf

/// A listing request that pages (ListVehicles, SearchTrips, ListDeliveryVehicles, ListTasks).
protocol PagedRequest: SwiftProtobuf.Message {
    var pageSize: Int32 { get set }
    var pageToken: String { get set }
    mutating func clearHeader()
}

extension FleetEngineV1.ListVehiclesRequest: PagedRequest {}
extension FleetEngineV1.SearchTripsRequest: PagedRequest {}
extension FleetEngineDelivery.ListDeliveryVehiclesRequest: PagedRequest {}
extension FleetEngineDelivery.ListTasksRequest: PagedRequest {}

/// Page sizes and page tokens.
///
/// A page token is a cursor, not a secret: the base64url of the last ID of the page before it and a fingerprint of
/// the request it pages (every field but the header, the page size and the token). Google says that when paging,
/// "all other parameters … must match the call that provided the page token": a token used with another query is
/// `INVALID_ARGUMENT`, as is one this server did not write. Forging a cursor gains nothing: its caller may list the
/// same resources from the start.
enum Paging {
    /// The page size of `request` (`defaultSize` when unset, at most `maximumSize`) and the ID after which the page
    /// starts.
    static func page(_ request: some PagedRequest, defaultSize: Int = 100, maximumSize: Int = 1000)
        throws(GoogleAPIError) -> (size: Int, afterID: String?)
    {
        guard request.pageSize >= 0 else { throw .invalidArgument("pageSize must not be negative.") }
        let size = request.pageSize == 0 ? defaultSize : min(Int(request.pageSize), maximumSize)
        guard !request.pageToken.isEmpty else { return (size, nil) }
        guard let bytes = Base64URL.decode(request.pageToken), UTF8Validation.isValid(bytes),
            let separator = bytes.lastIndex(of: 0),
            let fingerprint = UInt64(String(decoding: bytes[(separator + 1)...], as: UTF8.self), radix: 16)
        else {
            throw .invalidArgument("pageToken is not a nextPageToken of this server.")
        }
        guard fingerprint == Self.fingerprint(request) else {
            throw .invalidArgument(
                "pageToken was issued for another query: when paging, every parameter but pageSize must match the call that provided the token."
            )
        }
        return (size, String(decoding: bytes[..<separator], as: UTF8.self))
    }

    /// The token for the page of `request` after `lastID`.
    static func token(after lastID: String, of request: some PagedRequest) -> String {
        Base64URL.encode(Array(lastID.utf8) + [0] + Array(String(fingerprint(request), radix: 16).utf8))
    }

    /// FNV-1a of the request's deterministic wire form without its header, page size and token.
    static func fingerprint(_ request: some PagedRequest) -> UInt64 {
        var query = request
        query.clearHeader()
        query.pageSize = 0
        query.pageToken = ""
        var options = BinaryEncodingOptions()
        options.useDeterministicOrdering = true
        let bytes: [UInt8] = (try? query.serializedBytes(options: options)) ?? []
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return hash
    }
}
