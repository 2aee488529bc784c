import FleetAuthCore
import FleetAuthTesting
import Testing

@Suite("Token types, claims, IDs and roles")
struct AuthorizationTests {
    @Test("each token type carries exactly the Java library's claims")
    func tokenTypeClaims() throws {
        func json(_ type: FleetEngineTokenType) -> JSONValue { .object(type.authorization.jsonObject) }
        #expect(json(.server) == ["tripid": "*", "vehicleid": "*"])
        #expect(json(try .driver(vehicleID: "v1")) == ["vehicleid": "v1"])
        #expect(json(try .driver(vehicleID: "*")) == ["vehicleid": "*"])
        #expect(json(try .consumer(tripID: "t1")) == ["tripid": "t1"])
        #expect(json(.deliveryServer) == ["deliveryvehicleid": "*", "taskid": "*", "trackingid": "*"])
        #expect(json(try .deliveryConsumer(taskID: "task-1")) == ["taskid": "task-1"])
        #expect(json(try .deliveryConsumer(trackingID: "track-1")) == ["trackingid": "track-1"])
        #expect(json(try .untrustedDeliveryDriver(deliveryVehicleID: "d1")) == ["deliveryvehicleid": "d1"])
        #expect(json(try .trustedDeliveryDriver(deliveryVehicleID: "d1")) == ["deliveryvehicleid": "d1"])
        #expect(
            json(try .trustedDeliveryDriver(deliveryVehicleID: "d1", taskID: "k1"))
                == ["deliveryvehicleid": "d1", "taskid": "k1"]
        )
        #expect(json(.deliveryFleetReader) == ["deliveryvehicleid": "*", "taskid": "*", "trackingid": "*"])
        #expect(
            json(.fleetReader)
                == ["tripid": "*", "vehicleid": "*", "deliveryvehicleid": "*", "taskid": "*", "trackingid": "*"]
        )
        #expect(json(try .custom(.init(taskIDs: ["a", "b"]))) == ["taskids": ["a", "b"]])
    }

    @Test("empty, missing or invalid IDs are errors, never wildcards")
    func invalidIDs() {
        #expect(throws: FleetEngineIDError.self) { try FleetEngineTokenType.driver(vehicleID: "") }
        #expect(throws: FleetEngineIDError.self) { try FleetEngineTokenType.consumer(tripID: "") }
        #expect(throws: FleetEngineIDError.self) {
            try FleetEngineTokenType.untrustedDeliveryDriver(deliveryVehicleID: "")
        }
        #expect(throws: FleetEngineIDError.self) { try FleetEngineTokenType.deliveryConsumer(trackingID: "*") }
        #expect(throws: FleetEngineIDError.self) {
            try FleetEngineTokenType.trustedDeliveryDriver(deliveryVehicleID: "d", taskID: "")
        }
        expectCode(AuthorizationClaimsError.noClaims) { try FleetEngineTokenType.custom(.init()) }
        expectCode(AuthorizationClaimsError.invalidTaskIDs) { try FleetEngineTokenType.custom(.init(taskIDs: [])) }
        expectCode(AuthorizationClaimsError.invalidTaskIDs) {
            try FleetEngineTokenType.custom(.init(taskIDs: ["*", "a"]))
        }
        expectCode(AuthorizationClaimsError.invalidTaskIDs) {
            try FleetEngineTokenType.custom(.init(deliveryVehicleID: "d", taskIDs: ["a"]))
        }
    }

    @Test(
        "the ID rules of the protos, plus no control, format or space characters",
        arguments: [
            ("vehicle-1", true), ("Ünïcode", true), (String(repeating: "a", count: 64), true),
            (String(repeating: "a", count: 65), false), ("", false), ("a/b", false), ("a:b", false), ("a?b", false),
            ("a,b", false), ("a#b", false), ("v1 ", false), ("v\u{0}1", false), ("v\u{200B}1", false),
            ("e\u{301}", false),  // decomposed é is not NFC
            ("\u{E9}", true),
        ]
    )
    func idRules(_ id: String, _ valid: Bool) {
        #expect(FleetEngineID.isValid(id) == valid)
    }

    @Test("authorization objects are read strictly (A4)")
    func strictClaims() throws {
        let parser = StrictJSONParser()
        func read(_ text: String) throws -> AuthorizationClaims {
            try AuthorizationClaims(json: try parser.parseObject(text))
        }
        #expect(try read(#"{"vehicleid":"v1","tripid":"*"}"#) == AuthorizationClaims(vehicleID: "v1", tripID: "*"))
        #expect(try read(#"{"taskids":["a","b"]}"#).taskIDs == ["a", "b"])
        expectCode(AuthorizationClaimsError.unknownKey) { try read(#"{"VehicleId":"v1"}"#) }
        expectCode(AuthorizationClaimsError.unknownKey) { try read(#"{"vehicleId":"v1"}"#) }
        expectCode(AuthorizationClaimsError.wrongType) { try read(#"{"vehicleid":["v1"]}"#) }
        expectCode(AuthorizationClaimsError.wrongType) { try read(#"{"vehicleid":1}"#) }
        expectCode(AuthorizationClaimsError.wrongType) { try read(#"{"taskids":"a"}"#) }
        expectCode(AuthorizationClaimsError.invalidID) { try read(#"{"vehicleid":""}"#) }
        expectCode(AuthorizationClaimsError.invalidID) { try read(#"{"vehicleid":"v1/../v2"}"#) }
        expectCode(AuthorizationClaimsError.invalidID) { try read(#"{"tripid":"t1\u0000"}"#) }
        expectCode(AuthorizationClaimsError.invalidTaskIDs) { try read(#"{"taskids":["*","a"]}"#) }
        #expect(try read("{}").isEmpty)
    }

    @Test("the eleven IAM roles and their permissions")
    func roles() throws {
        #expect(FleetEngineRole.all.count == 11)
        #expect(Set(FleetEngineRole.all.map(\.id)).count == 11)
        #expect(FleetEngineRole(id: "roles/fleetengine.driverSdkUser") == .driverSdkUser)
        #expect(FleetEngineRole(id: "consumerSdkUser") == .consumerSdkUser)
        #expect(FleetEngineRole(id: "roles/fleetengine.fleetReader") == nil)
        #expect(FleetEngineRole.driverSdkUser.grants(.vehiclesUpdateLocation))
        #expect(!FleetEngineRole.driverSdkUser.grants(.vehiclesUpdate))
        #expect(!FleetEngineRole.driverSdkUser.grants(.vehiclesCreate))
        #expect(
            FleetEngineRole.consumerSdkUser.permissions == [
                .tripsGet, .vehiclesGet, .vehiclesSearch, .vehiclesSearchFuzzed,
            ]
        )
        #expect(!FleetEngineRole.consumerSdkUser.grants(.tripsCreate))
        #expect(FleetEngineRole.serviceSuperUser.grants(.tripsUpdateState))
        #expect(FleetEngineRole.ondemandAdmin.grants(.vehiclesAllowAllActions))
        #expect(
            FleetEngineRole.deliveryUntrustedDriver.permissions == [
                .deliveryVehiclesGet, .deliveryVehiclesUpdateLocation,
            ]
        )
        #expect(
            FleetEngineRole.viewer.permissions.allSatisfy {
                $0.name.hasSuffix(".get") || $0.name.hasSuffix(".list") || $0.name.contains("search")
            }
        )
    }

    @Test("the token endpoint JSON has both key styles' fields in epoch milliseconds")
    func endpointResponse() {
        let response = TokenEndpointResponse(jwt: "h.p.s", issuedAt: 1_700_000_000, expiresAt: 1_700_003_600)
        #expect(
            JSONValue.object(response.jsonObject).jsonText
                == #"{"jwt":"h.p.s","token":"h.p.s","creationTimestamp":1700000000000,"expirationTimestamp":1700003600000,"expiresInSeconds":3600}"#
        )
        #expect(TokenEndpointResponse(jwt: "x", issuedAt: 100, expiresAt: 3700, now: 400).expiresInSeconds == 3300)
    }
}
