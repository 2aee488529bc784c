import FleetAuthCore
import FleetAuthServerCore
import FleetAuthServerSupport
import Foundation
import Hummingbird

/// Cloud Logging v2's `entries:list` on the emulator's REST port (`POST /v2/entries:list`), over the request log:
/// the request and answer Google's Logging API and its client libraries use, so `google-cloud-logging` pointed at the
/// emulator (`client_options.api_endpoint`) lists its entries unchanged.
///
/// The log holds every vehicle's locations, so reading a provider's entries needs a token of that provider's trusted
/// account whose role already reads the whole fleet (it may list every vehicle or every delivery vehicle); any
/// other caller is refused with Google's error body.
struct LoggingRoutes: Sendable {
    let log: RequestLog
    let authenticator: TokenAuthenticator
    let refresher: KeyRefresher?

    func register(on router: Router<EmulatorRequestContext>, maximumBodySize: Int) {
        let routes = self
        router.post("v2/entries:list") { request, _ in
            try await routes.list(request, maximumBodySize: maximumBodySize)
        }
    }

    private func list(_ request: Request, maximumBodySize: Int) async throws -> Response {
        let caller = try await authenticator.authenticate(
            authorization: request.headers[.authorization],
            refresher: refresher
        )
        let bytes = try await ProtoJSON.bodyBytes(request, limit: maximumBodySize)
        let body: JSONObject
        do {
            body = bytes.isEmpty ? JSONObject() : try StrictJSONParser(maximumDepth: 8).parseObject(bytes)
        } catch {
            throw GoogleAPIError.invalidArgument("The request body is not a JSON object: \(error)")
        }
        func string(_ key: String) throws(GoogleAPIError) -> String {
            guard let value = body[key] else { return "" }
            guard let text = value.stringValue else { throw .invalidArgument("\(key): must be a string.") }
            return text
        }
        var names: [String] = []
        if let value = body["resourceNames"] {
            guard let array = value.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
                throw GoogleAPIError.invalidArgument("resourceNames: must be a list of strings.")
            }
            names = array.compactMap(\.stringValue)
        }
        var pageSize = 0
        if let value = body["pageSize"] {
            // proto3 JSON writes an int32 as a number or as a string of one.
            guard let number = value.integerValue ?? value.stringValue.flatMap({ Int64($0) }),
                let size = Int(exactly: number)
            else {
                throw GoogleAPIError.invalidArgument("pageSize: must be an integer.")
            }
            pageSize = size
        }
        let page = try await log.list(
            resourceNames: names,
            filter: try string("filter"),
            orderBy: try string("orderBy"),
            pageSize: pageSize,
            pageToken: try string("pageToken"),
            allowed: { Self.mayRead(caller, provider: $0) }
        )
        var answer = JSONObject()
        answer["entries"] = .array(page.entries.map(JSONValue.object))
        if let token = page.nextPageToken { answer["nextPageToken"] = .string(token) }
        return Response(
            status: .ok,
            headers: [.contentType: JSONResponse.contentType, .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: answer.jsonBytes))
        )
    }

    /// Whether `caller` may read `provider`'s entries: its own provider, with a role that reads the whole fleet.
    static func mayRead(_ caller: Principal, provider: String) -> Bool {
        for (method, scope) in [
            (FleetEngineMethod.listVehicles, ResourceScope.allVehicles),
            (.listDeliveryVehicles, .allDeliveryVehicles),
        ] {
            do {
                try AccessPolicy.check(
                    account: caller.account,
                    claims: caller.claims,
                    method: method,
                    scope: scope,
                    provider: provider
                )
                return true
            } catch {
                continue
            }
        }
        return false
    }
}
