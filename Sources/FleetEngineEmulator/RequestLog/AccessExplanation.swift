package import FleetAuthCore
package import FleetAuthJWT
package import FleetAuthServerCore
import FleetEngineAPI
package import Foundation

/// The request log's decision worked out offline, for `fleetauth token verify --explain`: whether a token may make
/// one call (an RPC on a resource) under a trust configuration, judged by the emulator's own authenticator and access
/// policy, in the words its log entries use (`jsonPayload.fleetauthDecision`).
package enum AccessExplanation {
    /// The decision for `token` calling `rpc` (`UpdateVehicle`, or its full name) on `resource`
    /// (`providers/p/vehicles/v1`, or `providers/p` for a list or search) at `now`.
    ///
    /// - Parameters:
    ///   - updateMask: an update's field mask (proto or JSON spelling), which decides the permission UpdateVehicle,
    ///     UpdateTrip and UpdateDeliveryVehicle need; empty: `last_location`, the update a driver app makes.
    ///   - assignedVehicle: the vehicle the named trip or task is assigned to, which a driver's token may act for.
    package static func explain(
        token: String,
        rpc: String,
        resource: String,
        updateMask: [String] = [],
        assignedVehicle: String? = nil,
        accounts: [(TrustedServiceAccount, [RSAVerificationKey])],
        now: Date
    ) throws(GoogleAPIError) -> JSONObject {
        let name = rpc.split(separator: "/").last.map(String.init) ?? rpc
        let entries = FleetEngineMethod.all.filter { $0.name == name }
        guard let first = entries.first else {
            let names = Set(FleetEngineMethod.all.map(\.name)).sorted().joined(separator: ", ")
            throw .invalidArgument("\(rpc) is not a Fleet Engine RPC; one of: \(names).")
        }
        let names = ResourceNames(name: resource)
        guard let provider = names.provider else {
            throw .invalidArgument(
                "\(resource) is not a resource name (providers/PROVIDER/vehicles/ID, providers/PROVIDER)."
            )
        }
        var rejection: String?
        let authenticator = TokenAuthenticator(accounts: accounts, cacheCapacity: 0, clock: FixedClock(date: now))
        let caller: Principal
        do {
            caller = try authenticator.authenticate(authorization: "Bearer " + token, rejected: { rejection = $0 })
        } catch {
            var claims: JSONObject?
            var account: TrustedServiceAccount?
            if let jws = try? CompactJWS(token) {
                claims = try? jws.payloadObject()
                account = (claims?["iss"]?.stringValue).flatMap { authenticator.account($0) }
            }
            return AccessDecision.refusedToken(reason: rejection, claims: claims, now: now, account: account)
                .jsonObject
        }
        let methods = Self.methods(name, entries: entries, first: first, mask: updateMask)
        let scope = Self.scope(first, names, assignedVehicle: assignedVehicle)
        let recorder = AccessCheckRecorder()
        var failure: GoogleAPIError?
        AccessCheckRecorder.$current.withValue(recorder) {
            for method in methods {
                do throws(GoogleAPIError) {
                    try AccessPolicy.check(caller, method, scope, provider: provider)
                } catch {
                    failure = error
                    return
                }
            }
        }
        return AccessDecision.checked(recorder.all, caller: caller, error: failure).jsonObject
    }

    /// The permission entries the call needs, as the services choose them by the update's mask.
    private static func methods(_ name: String, entries: [FleetEngineMethod], first: FleetEngineMethod, mask: [String])
        -> [FleetEngineMethod]
    {
        let paths = (mask.isEmpty ? ["last_location"] : mask).map(FieldMasks.protoPath)
        switch name {
        case FleetEngineMethod.updateVehicle.name:
            return [
                paths.allSatisfy(FleetEngineMethod.driverReportableVehicleFields.contains)
                    ? .updateVehicleLocation : .updateVehicle
            ]
        case FleetEngineMethod.updateTrip.name:
            return [.updateTrip] + (paths.contains("trip_status") ? [.updateTripState] : [])
        case FleetEngineMethod.updateDeliveryVehicle.name:
            var methods: [FleetEngineMethod] = []
            if paths.contains(where: FleetEngineMethod.deliveryDriverReportableFields.contains) {
                methods.append(.updateDeliveryVehicleLocation)
            }
            if paths.contains("remaining_vehicle_journey_segments") { methods.append(.updateDeliveryVehicleStops) }
            if paths.contains("attributes") || paths.contains("type") { methods.append(.updateDeliveryVehicle) }
            return methods.isEmpty ? [first] : methods
        default:
            return [first]
        }
    }

    /// The resource the call names, as the services name it to the access policy.
    private static func scope(_ method: FleetEngineMethod, _ names: ResourceNames, assignedVehicle: String?)
        -> ResourceScope
    {
        let ids = Dictionary(names.labels, uniquingKeysWith: { first, _ in first })
        if let id = ids["task_id"] { return .task(id, assignedVehicleID: assignedVehicle) }
        if let id = ids["delivery_vehicle_id"] { return .deliveryVehicle(id) }
        if let id = ids["trip_id"] { return .trip(id, assignedVehicleID: assignedVehicle) }
        if let id = ids["vehicle_id"] {
            return method.name == FleetEngineMethod.searchTrips.name ? .tripSearch(vehicleID: id) : .vehicle(id)
        }
        switch method.name {
        case FleetEngineMethod.searchVehicles.name: return .vehicleSearch(tripID: nil)
        case FleetEngineMethod.searchTrips.name: return .tripSearch(vehicleID: nil)
        case FleetEngineMethod.reportBillableTrip.name: return .allTrips
        case FleetEngineMethod.listDeliveryVehicles.name: return .allDeliveryVehicles
        case FleetEngineMethod.listTasks.name, FleetEngineMethod.batchCreateTasks.name: return .allTasks
        default: return method.rpc.service.contains("delivery") ? .allDeliveryVehicles : .allVehicles
        }
    }
}

/// A clock stopped at one time of day, for judging a token as of a given moment.
private struct FixedClock: WallClock {
    typealias Instant = ContinuousClock.Instant
    let date: Date

    var now: Instant { ContinuousClock.now }
    var minimumResolution: Duration { ContinuousClock().minimumResolution }
    var currentDate: Date { date }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
    }
}
