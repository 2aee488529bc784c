import FleetAuthCore
import FleetAuthTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRPCCore
import SwiftProtobuf
import Testing

/// The role × method matrix at the policy level: for every role and method, one allowed and one denied case
/// where the role grants the permission, and a denied case where it does not.
@Suite("AccessPolicy")
struct AccessPolicyTests {
    struct Cell: Sendable, CustomTestStringConvertible {
        let role: FleetEngineRole
        let method: FleetEngineMethod
        var testDescription: String {
            "\(role.id.replacingOccurrences(of: "roles/fleetengine.", with: "")) × \(method.name) (\(method.permission))"
        }
    }

    /// The on-demand entries of the permission table. ReportBillableTrip's scope (every trip of the provider) has
    /// no claim that narrows it; the HTTP matrix covers it.
    static let methods = FleetEngineMethod.all.filter {
        $0.rpc.service.hasPrefix("maps.fleetengine.v1.") && $0 != .reportBillableTrip
    }
    static let cells = FleetEngineRole.all.flatMap { role in methods.map { Cell(role: role, method: $0) } }

    /// A scope for the method, the claims that cover it, and claims that do not.
    static func scenario(_ method: FleetEngineMethod) -> (ResourceScope, AuthorizationClaims, AuthorizationClaims) {
        switch method.name {
        case "CreateVehicle", "GetVehicle", "UpdateVehicle", "UpdateVehicleAttributes", "DeleteVehicle":
            return (.vehicle("v1"), .init(vehicleID: "v1"), .init(vehicleID: "v2"))
        case "ListVehicles":
            return (.allVehicles, .init(vehicleID: "*"), .init(vehicleID: "v1"))
        case "SearchVehicles":
            return (.vehicleSearch(tripID: "t1"), .init(tripID: "t1"), .init(tripID: "t2"))
        case "SearchTrips":
            return (.tripSearch(vehicleID: "v1"), .init(vehicleID: "v1"), .init(vehicleID: "v2"))
        default:
            return (.trip("t1", assignedVehicleID: "v1"), .init(tripID: "t1"), .init(tripID: "t2"))
        }
    }

    static func account(_ role: FleetEngineRole) -> TrustedServiceAccount {
        TrustedServiceAccount(email: "sa@demo-project.iam.gserviceaccount.com", project: "demo-project", roles: [role])
    }

    @Test(
        "role × method: allowed only with the permission, the covering claim and the right provider",
        arguments: cells
    )
    func matrix(_ cell: Cell) {
        let (scope, covering, other) = Self.scenario(cell.method)
        let account = Self.account(cell.role)
        func check(_ claims: AuthorizationClaims, provider: String = "demo-project") throws(GoogleAPIError) {
            try AccessPolicy.check(
                account: account,
                claims: claims,
                method: cell.method,
                scope: scope,
                provider: provider
            )
        }
        if cell.role.grants(cell.method.permission) {
            #expect(throws: Never.self) { try check(covering) }
            if cell.role.ignoresAuthorizationClaims {
                #expect(throws: Never.self) { try check(other) }
                #expect(throws: Never.self) { try check(AuthorizationClaims()) }
            } else {
                expectCode(GoogleAPIError.permissionDenied("")) { try check(other) }
            }
            expectCode(GoogleAPIError.permissionDenied("")) { try check(covering, provider: "other-project") }
        } else {
            let error = expectCode(GoogleAPIError.permissionDenied("")) { try check(covering) }
            #expect(error?.message.contains(cell.method.permission.name) == true)
        }
    }

    @Test("the expectations of Google's token validation scripts (java-fleetengine-auth), at the policy level")
    func googleExpectations() {
        func allowed(
            _ role: FleetEngineRole,
            _ claims: AuthorizationClaims,
            _ method: FleetEngineMethod,
            _ scope: ResourceScope
        ) -> Bool {
            (try? AccessPolicy.check(
                account: Self.account(role),
                claims: claims,
                method: method,
                scope: scope,
                provider: "demo-project"
            ))
                != nil
        }
        let server = FleetEngineTokenType.server.authorization
        for (method, scope) in [
            (FleetEngineMethod.createVehicle, ResourceScope.vehicle("v")), (.getVehicle, .vehicle("v")),
            (.createTrip, .trip("t", assignedVehicleID: nil)), (.getTrip, .trip("t", assignedVehicleID: nil)),
            (.searchVehicles, .vehicleSearch(tripID: nil)), (.updateTripState, .trip("t", assignedVehicleID: "v")),
            (.updateVehicleLocation, .vehicle("v")),
        ] {
            #expect(allowed(.serviceSuperUser, server, method, scope), "server token: \(method)")
        }
        let consumer = AuthorizationClaims(tripID: "T")
        #expect(allowed(.consumerSdkUser, consumer, .getTrip, .trip("T", assignedVehicleID: nil)))
        #expect(allowed(.consumerSdkUser, consumer, .searchVehicles, .vehicleSearch(tripID: "T")))
        #expect(!allowed(.consumerSdkUser, consumer, .getTrip, .trip("other", assignedVehicleID: nil)))
        #expect(!allowed(.consumerSdkUser, consumer, .createTrip, .trip("T", assignedVehicleID: nil)))
        let driver = AuthorizationClaims(vehicleID: "V")
        #expect(allowed(.driverSdkUser, driver, .getVehicle, .vehicle("V")))
        #expect(allowed(.driverSdkUser, driver, .updateVehicleLocation, .vehicle("V")))
        #expect(!allowed(.driverSdkUser, driver, .getVehicle, .vehicle("other")))
        #expect(!allowed(.driverSdkUser, driver, .createVehicle, .vehicle("V")))
        #expect(!allowed(.driverSdkUser, driver, .updateVehicle, .vehicle("V")))
        // A driver acts on a trip only when the trip is assigned to its vehicle.
        #expect(allowed(.driverSdkUser, driver, .getTrip, .trip("t", assignedVehicleID: "V")))
        #expect(!allowed(.driverSdkUser, driver, .getTrip, .trip("t", assignedVehicleID: "W")))
        #expect(!allowed(.driverSdkUser, driver, .getTrip, .trip("t", assignedVehicleID: nil)))
        // A7: the role comes from the signing account; a consumer account's token claiming a vehicle gains nothing.
        #expect(!allowed(.consumerSdkUser, .init(vehicleID: "*", tripID: "*"), .updateVehicleLocation, .vehicle("V")))
        // A6: no normalization before comparing.
        #expect(!allowed(.driverSdkUser, .init(vehicleID: "K"), .getVehicle, .vehicle("\u{212A}")))
        #expect(!allowed(.driverSdkUser, .init(vehicleID: "v1"), .getVehicle, .vehicle("V1")))
    }

    @Test("the two admin roles ignore the token's claims for what they grant; every other role is narrowed by them")
    func adminRolesIgnoreClaims() {
        #expect(FleetEngineRole.all.filter(\.ignoresAuthorizationClaims) == [.ondemandAdmin, .deliveryAdmin])
        func allowed(
            _ roles: [FleetEngineRole],
            _ claims: AuthorizationClaims,
            _ method: FleetEngineMethod,
            _ scope: ResourceScope
        ) -> Bool {
            let account = TrustedServiceAccount(email: "sa@p.iam.gserviceaccount.com", project: "p", roles: roles)
            return
                (try? AccessPolicy.check(account: account, claims: claims, method: method, scope: scope, provider: "p"))
                != nil
        }
        let narrow = AuthorizationClaims(vehicleID: "mine", deliveryVehicleID: "mine")
        #expect(allowed([.ondemandAdmin], narrow, .updateVehicle, .vehicle("someone-else")))
        #expect(allowed([.ondemandAdmin], AuthorizationClaims(), .listVehicles, .allVehicles))
        #expect(allowed([.deliveryAdmin], narrow, .getDeliveryVehicle, .deliveryVehicle("someone-else")))
        #expect(allowed([.deliveryAdmin], AuthorizationClaims(), .listTasks, .allTasks))
        // The super users are narrowed by their claims.
        #expect(!allowed([.serviceSuperUser], narrow, .updateVehicle, .vehicle("someone-else")))
        #expect(!allowed([.deliverySuperUser], narrow, .getDeliveryVehicle, .deliveryVehicle("someone-else")))
        // An admin role lifts the claims only for what it grants: an on-demand admin's delivery calls, granted by
        // another role of the account, are still narrowed.
        #expect(!allowed([.ondemandAdmin, .deliverySuperUser], narrow, .getDeliveryVehicle, .deliveryVehicle("x")))
        #expect(allowed([.ondemandAdmin, .deliverySuperUser], narrow, .getDeliveryVehicle, .deliveryVehicle("mine")))
        // The provider is still the account's project.
        let account = TrustedServiceAccount(
            email: "sa@p.iam.gserviceaccount.com",
            project: "p",
            roles: [.ondemandAdmin]
        )
        expectCode(GoogleAPIError.permissionDenied("")) {
            try AccessPolicy.check(
                account: account,
                claims: narrow,
                method: .getVehicle,
                scope: .vehicle("v"),
                provider: "other"
            )
        }
    }

    @Test("the driver-reportable field set is exactly location, state, route progress and waypoints")
    func driverFields() {
        #expect(FleetEngineMethod.driverReportableVehicleFields.contains("last_location"))
        #expect(FleetEngineMethod.driverReportableVehicleFields.contains("vehicle_state"))
        #expect(!FleetEngineMethod.driverReportableVehicleFields.contains("attributes"))
        #expect(!FleetEngineMethod.driverReportableVehicleFields.contains("maximum_capacity"))
        #expect(!FleetEngineMethod.driverReportableVehicleFields.contains("supported_trip_types"))
    }

    @Test("errors render as Google's JSON error body")
    func errorBody() {
        let error = GoogleAPIError.permissionDenied("JWT does not contain any scopes.")
        #expect(
            JSONValue.object(error.jsonObject).jsonText
                == #"{"error":{"code":403,"message":"JWT does not contain any scopes.","status":"PERMISSION_DENIED"}}"#
        )
    }

    @Test("the permission table names every RPC the generated gRPC services declare")
    func everyRPCHasAPermission() throws {
        let declared = Set(
            (Maps_Fleetengine_V1_VehicleService.Method.descriptors + Maps_Fleetengine_V1_TripService.Method.descriptors
                + Maps_Fleetengine_Delivery_V1_DeliveryService.Method.descriptors).map {
                    RPCMethod(service: $0.service.fullyQualifiedService, method: $0.method)
                }
        )
        // Every RPC of Fleet Engine's files in the descriptors compiled from Protos/: an RPC added to a proto is in
        // the table, or this fails, with no count to update.
        let data = try #require(
            Data(base64Encoded: ProtoFileDescriptors.base64FileDescriptorSet, options: .ignoreUnknownCharacters)
        )
        let files = try Google_Protobuf_FileDescriptorSet(serializedBytes: data).file
        let inProtos = Set(
            files.filter { $0.package.hasPrefix("maps.fleetengine.") }.flatMap { file in
                file.service.flatMap { service in
                    service.method.map { RPCMethod(service: file.package + "." + service.name, method: $0.name) }
                }
            }
        )
        #expect(!inProtos.isEmpty)
        #expect(declared == inProtos, "generated services and Protos/ disagree: regenerate FleetEngineAPI")
        let table = Set(FleetEngineMethod.all.map(\.rpc))
        #expect(
            table == declared,
            "without a permission: \(declared.subtracting(table)); not an RPC: \(table.subtracting(declared))"
        )
        // An RPC with several entries (UpdateVehicle, UpdateTrip, UpdateDeliveryVehicle) has one per permission.
        #expect(Set(FleetEngineMethod.all).count == FleetEngineMethod.all.count)
    }
}
