public import FleetAuthCore
public import FleetAuthServerCore

/// The authorization steps that follow token verification (steps 3–5 of <doc:AuthorizationModel>), in order:
///
/// 1. **Role** — a role bound to the service account that *signed* the token must grant the method's permission.
///    Nothing the token says about itself can add a permission.
/// 2. **Claim** — unless a role that grants the permission is an admin role (On-demand Admin, Delivery Admin), which
///    ignores the token's claims, the token's `authorization` claims must cover the resource, compared byte for
///    byte, never after normalization; `*` covers every resource of its kind:
///    - a vehicle: `vehicleid` equal to its ID;
///    - a trip: `tripid` equal to its ID, or `vehicleid` equal to the vehicle the trip is assigned to (a driver acts
///      on its own trips), or `vehicleid` `*`;
///    - all vehicles (ListVehicles): `vehicleid` `*`;
///    - a vehicle search: `vehicleid` `*`, `tripid` `*`, or a `tripid` equal to the request's trip ID (a consumer
///      searching for its own trip; without a trip ID in the request, any `tripid` claim);
///    - a trip search: `vehicleid` `*`, or equal to the request's vehicle ID;
///    - all trips (ReportBillableTrip): `tripid` `*`;
///    - a delivery vehicle: `deliveryvehicleid` equal to its ID; all of them (ListDeliveryVehicles): `*`;
///    - a task: `taskid` equal to its ID, or `deliveryvehicleid` equal to the vehicle it is assigned to (a trusted
///      driver acts on its vehicle's tasks), or `deliveryvehicleid` `*`; all tasks (ListTasks): `taskid` `*`;
///    - the tasks of BatchCreateTasks: `taskids` listing every one (or `["*"]`), or `taskid` `*`;
///    - a tracking ID (GetTaskTrackingInfo): `trackingid` equal to it, or `taskid` equal to one of its tasks, or `*`.
/// 3. **Provider** — the provider in the path must be the service account's project.
///
/// Every failure is 403 `PERMISSION_DENIED`, with a message that names the rule and never the token.
public enum AccessPolicy {
    /// Throws unless `account`, holding a token with `claims`, may call `method` on `scope` of `provider`.
    public static func check(
        account: TrustedServiceAccount,
        claims: AuthorizationClaims,
        method: FleetEngineMethod,
        scope: ResourceScope,
        provider: String
    ) throws(GoogleAPIError) {
        AccessCheckRecorder.current?.add(AccessCheck(method: method, scope: scope, provider: provider))
        try role(account: account, method: method)
        guard account.ignoresClaims(for: method.permission) || covers(claims, scope) else {
            throw .permissionDenied("The token's authorization claims do not cover \(scope)")
        }
        guard provider.hasSameBytes(as: account.project) else {
            throw .permissionDenied("The token's service account belongs to another project than provider \(provider)")
        }
    }

    /// Step 1 alone: throws unless a role of `account` grants `method`'s permission. Routes whose resource must be
    /// read before the claim can be checked call this first, so a caller without the role reads nothing.
    /// ``check(account:claims:method:scope:provider:)`` for `caller`'s account and claims.
    static func check(_ caller: Principal, _ method: FleetEngineMethod, _ scope: ResourceScope, provider: String)
        throws(GoogleAPIError)
    {
        try check(account: caller.account, claims: caller.claims, method: method, scope: scope, provider: provider)
    }

    public static func checkRole(account: TrustedServiceAccount, method: FleetEngineMethod) throws(GoogleAPIError) {
        AccessCheckRecorder.current?.add(AccessCheck(method: method, scope: nil, provider: nil))
        try role(account: account, method: method)
    }

    private static func role(account: TrustedServiceAccount, method: FleetEngineMethod) throws(GoogleAPIError) {
        guard account.isGranted(method.permission) else {
            let roles = account.roles.map(\.id).joined(separator: ", ")
            throw .permissionDenied(
                "\(method.name) needs permission \(method.permission), which the role of the token's service account (\(roles)) does not grant"
            )
        }
    }

    static func covers(_ claims: AuthorizationClaims, _ scope: ResourceScope) -> Bool {
        func matches(_ claim: String?, _ id: String?) -> Bool {
            guard let claim else { return false }
            if claim == FleetEngineID.wildcard { return true }
            guard let id else { return false }
            return claim.hasSameBytes(as: id)
        }
        func isWildcard(_ claim: String?) -> Bool { claim == FleetEngineID.wildcard }
        switch scope.kind {
        case .vehicle(let id):
            return matches(claims.vehicleID, id)
        case .trip(let id, let assigned):
            return matches(claims.tripID, id) || isWildcard(claims.vehicleID)
                || (assigned != nil && matches(claims.vehicleID, assigned))
        case .allVehicles:
            return isWildcard(claims.vehicleID)
        case .vehicleSearch(let tripID):
            if isWildcard(claims.vehicleID) || isWildcard(claims.tripID) { return true }
            guard let claim = claims.tripID else { return false }
            return tripID.map { claim.hasSameBytes(as: $0) } ?? true
        case .tripSearch(let vehicleID):
            return matches(claims.vehicleID, vehicleID) || isWildcard(claims.vehicleID)
        case .allTrips:
            return isWildcard(claims.tripID)
        case .deliveryVehicle(let id):
            return matches(claims.deliveryVehicleID, id)
        case .allDeliveryVehicles:
            return isWildcard(claims.deliveryVehicleID)
        case .task(let id, let assigned):
            return matches(claims.taskID, id) || isWildcard(claims.deliveryVehicleID)
                || (assigned != nil && matches(claims.deliveryVehicleID, assigned))
        case .taskBatch(let ids):
            if isWildcard(claims.taskID) { return true }
            guard let listed = claims.taskIDs else { return false }
            if listed == [FleetEngineID.wildcard] { return true }
            return ids.allSatisfy { id in listed.contains { $0.hasSameBytes(as: id) } }
        case .allTasks:
            return isWildcard(claims.taskID)
        case .trackingID(let id, let taskIDs):
            return matches(claims.trackingID, id) || isWildcard(claims.taskID)
                || (claims.taskID.map { claim in taskIDs.contains { claim.hasSameBytes(as: $0) } } ?? false)
        }
    }
}
