public import FleetAuthCore
public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Fleet Engine's REST API as a driver or consumer app calls it: every request carries a token from the
/// provider for the resource it touches.
///
/// - A 401 invalidates exactly that token (compare-and-invalidate, so concurrent 401s cause one refresh) and the
///   call is retried once with a fresh token; a second 401 is returned as ``FleetEngineClientError/Code/unauthenticated``.
/// - A 403 is returned at once, never retried: a new token would carry the same authorization.
/// - Google's error bodies become ``FleetEngineClientError`` with the canonical status as its code.
///
/// ```swift
/// let client = FleetEngineClient(providerID: "my-project", tokens: provider)  // https://fleetengine.googleapis.com
/// try await client.updateVehicleLocation("vehicle-1", location: location, state: .online)
/// let snapshot = try await client.getTrip("trip-1")
/// ```
public struct FleetEngineClient: Sendable {
    /// One HTTP exchange, for metrics: the RPC, the context whose token it carried, the HTTP status (`nil` when
    /// no answer came), the time to the answer, and whether it was the retry after a 401.
    public struct Exchange: Sendable, Hashable {
        public var rpc: String
        public var context: AuthorizationContext
        public var httpStatus: Int?
        public var latency: Duration
        public var attempt: Int
    }

    /// The real service.
    public static let productionURL = URL(string: "https://fleetengine.googleapis.com")!

    /// Fleet Engine's base URL: ``productionURL``, or a local emulator such as `http://127.0.0.1:8787`.
    public let baseURL: URL
    /// The provider (Google Cloud project ID) in every path.
    public let providerID: String
    public let tokens: any FleetTokenProvider
    /// Seconds before a request is abandoned (a transient ``FleetEngineClientError/Code/unreachable``).
    public let timeout: TimeInterval
    private let session: URLSession
    private let onExchange: (@Sendable (Exchange) -> Void)?

    /// - Parameters:
    ///   - providerID: the Google Cloud project ID.
    ///   - tokens: where tokens come from (usually a ``CachingTokenProvider``).
    ///   - baseURL: Fleet Engine or an emulator.
    ///   - timeout: the request timeout in seconds.
    ///   - session: the URLSession (default: an ephemeral one).
    ///   - onExchange: called after every HTTP exchange, on any thread.
    public init(
        providerID: String,
        tokens: any FleetTokenProvider,
        baseURL: URL = FleetEngineClient.productionURL,
        timeout: TimeInterval = 15,
        session: URLSession = URLSession(configuration: .ephemeral),
        onExchange: (@Sendable (Exchange) -> Void)? = nil
    ) {
        self.providerID = providerID
        self.tokens = tokens
        self.baseURL = baseURL
        self.timeout = timeout
        self.session = session
        self.onExchange = onExchange
    }

    // MARK: Vehicles

    /// GetVehicle, with a token for `context` (default: the vehicle's own).
    public func getVehicle(_ id: String, context: AuthorizationContext? = nil) async throws(FleetEngineClientError)
        -> JSONObject
    {
        try await send("GetVehicle", "GET", try path("vehicles", id), context: context ?? .vehicle(id))
    }

    /// UpdateVehicle with `lastLocation` and, when given, `vehicleState`: what a driver app reports (the mask names
    /// only driver-reportable fields, so a driver token is enough).
    @discardableResult
    public func updateVehicleLocation(_ id: String, location: VehicleLocation?, state: VehicleState? = nil)
        async throws(FleetEngineClientError) -> JSONObject
    {
        var vehicle = JSONObject()
        var mask: [String] = []
        if let location {
            vehicle["lastLocation"] = .object(location.jsonObject)
            mask.append("last_location")
        }
        if let state {
            vehicle["vehicleState"] = .string(state.rawValue)
            mask.append("vehicle_state")
        }
        guard !mask.isEmpty else {
            throw FleetEngineClientError(.invalidArgument, "An update needs a location or a vehicle state.")
        }
        return try await updateVehicle(id, vehicle, updateMask: mask)
    }

    /// UpdateVehicle: the fields of `vehicle` named by `updateMask` (proto or JSON spelling), with a token for
    /// `context` (default: the vehicle's own).
    @discardableResult
    public func updateVehicle(
        _ id: String,
        _ vehicle: JSONObject,
        updateMask: [String],
        context: AuthorizationContext? = nil
    ) async throws(FleetEngineClientError) -> JSONObject {
        try await send(
            "UpdateVehicle",
            "PUT",
            try path("vehicles", id),
            query: [URLQueryItem(name: "updateMask", value: updateMask.joined(separator: ","))],
            body: vehicle,
            context: context ?? .vehicle(id)
        )
    }

    /// CreateVehicle (a backend call: needs a server token, so the context is empty by default).
    @discardableResult
    public func createVehicle(_ id: String, _ vehicle: JSONObject, context: AuthorizationContext = .init())
        async throws(FleetEngineClientError) -> JSONObject
    {
        try await send(
            "CreateVehicle",
            "POST",
            try path("vehicles"),
            query: [URLQueryItem(name: "vehicleId", value: id)],
            body: vehicle,
            context: context
        )
    }

    // MARK: Trips

    /// GetTrip as a snapshot, with a token for `context` (default: the trip's own, as a consumer app holds).
    public func getTrip(_ id: String, context: AuthorizationContext? = nil) async throws(FleetEngineClientError)
        -> TripSnapshot
    {
        TripSnapshot(trip: try await send("GetTrip", "GET", try path("trips", id), context: context ?? .trip(id)))
    }

    /// CreateTrip (a backend call: needs a server token).
    @discardableResult
    public func createTrip(_ id: String, _ trip: JSONObject, context: AuthorizationContext = .init())
        async throws(FleetEngineClientError) -> JSONObject
    {
        try await send(
            "CreateTrip",
            "POST",
            try path("trips"),
            query: [URLQueryItem(name: "tripId", value: id)],
            body: trip,
            context: context
        )
    }

    /// UpdateTrip: the fields of `trip` named by `updateMask`. Changing `tripStatus` needs a server token; a
    /// driver token (context `.vehicle(assignedVehicle)`) may update other fields of its own trips.
    @discardableResult
    public func updateTrip(
        _ id: String,
        _ trip: JSONObject,
        updateMask: [String],
        context: AuthorizationContext = .init()
    ) async throws(FleetEngineClientError) -> JSONObject {
        try await send(
            "UpdateTrip",
            "PUT",
            try path("trips", id),
            query: [URLQueryItem(name: "updateMask", value: updateMask.joined(separator: ","))],
            body: trip,
            context: context
        )
    }

    // MARK: Any call

    /// Sends one REST call with a token for `context`; the answer's JSON object (empty for an empty body).
    ///
    /// - Parameters:
    ///   - rpc: the RPC's name, for ``Exchange``.
    ///   - method: the HTTP method.
    ///   - path: the path from the base URL, already percent-encoded (`/v1/providers/p/vehicles/v1`).
    ///   - query: query parameters.
    ///   - body: the JSON body.
    ///   - context: whose token to send.
    public func send(
        _ rpc: String,
        _ method: String,
        _ path: String,
        query: [URLQueryItem] = [],
        body: JSONObject? = nil,
        context: AuthorizationContext
    ) async throws(FleetEngineClientError) -> JSONObject {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else {
            throw FleetEngineClientError(.invalidArgument, "The base URL \(baseURL) is not a valid URL.")
        }
        components.percentEncodedPath = components.percentEncodedPath.trimmingSuffix("/") + path
        if !query.isEmpty { components.queryItems = query }
        guard let url = components.url else {
            throw FleetEngineClientError(.invalidArgument, "\(path) does not make a valid URL.")
        }
        let bodyData = body.map { Data($0.jsonBytes) }
        for attempt in 1...2 {
            let token = try await token(for: context)
            var request = URLRequest(url: url, timeoutInterval: timeout)
            request.httpMethod = method
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            if let bodyData {
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = bodyData
            }
            let started = ContinuousClock.now
            let data: Data
            let status: Int
            do {
                TracePropagation.inject(into: &request)
                let (answer, response) = try await session.cancellationSafeData(for: request)
                guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
                (data, status) = (answer, http.statusCode)
            } catch {
                onExchange?(Exchange(rpc: rpc, context: context, latency: .now - started, attempt: attempt))
                if Task.isCancelled { throw FleetEngineClientError(.cancelled, "\(rpc) was cancelled.") }
                throw FleetEngineClientError(.unreachable, "\(rpc): Fleet Engine could not be reached: \(error).")
            }
            onExchange?(
                Exchange(rpc: rpc, context: context, httpStatus: status, latency: .now - started, attempt: attempt)
            )
            if status == 401, attempt == 1 {
                tokens.invalidate(token, for: context)
                continue
            }
            guard (200..<300).contains(status) else { throw Self.error(rpc: rpc, status: status, body: data) }
            if data.isEmpty { return JSONObject() }
            guard let object = try? StrictJSONParser().parseObject(Array(data)) else {
                throw FleetEngineClientError(
                    .invalidResponse,
                    "\(rpc): the answer is not a JSON object.",
                    httpStatus: status
                )
            }
            return object
        }
        preconditionFailure("The loop returns or throws on its second attempt.")
    }

    /// The REST path of a collection or one resource, IDs percent-encoded.
    public func path(_ collection: String, _ id: String? = nil) throws(FleetEngineClientError) -> String {
        guard let provider = providerID.pathSegmentEncoded, !providerID.isEmpty else {
            throw FleetEngineClientError(.invalidArgument, "The provider ID is empty.")
        }
        guard let id else { return "/v1/providers/\(provider)/\(collection)" }
        guard !id.isEmpty, let encoded = id.pathSegmentEncoded else {
            throw FleetEngineClientError(.invalidArgument, "The \(collection) ID is empty.")
        }
        return "/v1/providers/\(provider)/\(collection)/\(encoded)"
    }

    private func token(for context: AuthorizationContext) async throws(FleetEngineClientError) -> String {
        do {
            return try await tokens.token(for: context)
        } catch let error as FleetTokenError {
            if error.code == .cancelled {
                throw FleetEngineClientError(.cancelled, "Cancelled while waiting for a token.")
            }
            throw FleetEngineClientError(
                .tokenUnavailable,
                "No token for \(context): \(error.message)",
                tokenError: error
            )
        } catch {
            if Task.isCancelled { throw FleetEngineClientError(.cancelled, "Cancelled while waiting for a token.") }
            throw FleetEngineClientError(.tokenUnavailable, "No token for \(context): \(error).")
        }
    }

    /// Google's error body as a typed error; the HTTP status decides when the body is unreadable.
    static func error(rpc: String, status: Int, body: Data) -> FleetEngineClientError {
        let error = (try? StrictJSONParser().parseObject(Array(body)))?["error"]?.objectValue
        var code = FleetEngineClientError.code(httpStatus: status)
        if let name = error?["status"]?.stringValue, let named = FleetEngineClientError.Code(rawValue: name),
            name == name.uppercased()
        {
            code = named
        }
        let message = error?["message"]?.stringValue ?? "Fleet Engine answered HTTP \(status)."
        return FleetEngineClientError(code, "\(rpc): \(message)", httpStatus: status)
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
