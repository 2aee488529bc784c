import FleetAuthCore
import FuzzSupport

@testable import FleetEngineEmulator

/// The Logging query language of `entries:list` (``LogFilter``): any text is a filter or an INVALID_ARGUMENT, and a
/// filter evaluates against an entry in Fleet Engine's shape without trapping, however it nests (a 512 KiB stack: the
/// parser and the evaluator recurse, bounded at 32 levels).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLogFilter(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    FuzzInput.run(data, count, stackSize: 512 * 1024) { bytes in
        guard let text = FuzzInput.text(bytes), let filter = try? LogFilter(text) else { return }
        _ = filter.matches(entry)
    }
}

/// An entry with every kind of value a filter compares: strings, numbers, booleans, times, lists, nested objects.
private let entry: JSONObject = [
    "insertId": "lqk2x-a1-1",
    "logName": "projects/p/logs/fleetengine.googleapis.com%2Fupdate_vehicle",
    "resource": [
        "type": "fleetengine.googleapis.com/Fleet", "labels": ["location": "global", "resource_container": "p"],
    ],
    "labels": ["vehicle_id": "v1", "trip_id": "t1"],
    "severity": "WARNING",
    "timestamp": "2026-12-04T10:00:00.123456Z",
    "receiveTimestamp": "2026-12-04T10:00:00.223456Z",
    "split": ["uid": "u", "index": .integer(0), "totalSplits": .integer(2)],
    "jsonPayload": [
        "@type": "type.googleapis.com/maps.fleetengine.v1.UpdateVehicleLog",
        "request": [
            "vehicleId": "v1", "updateMask": "lastLocation",
            "vehicle": ["lastLocation": ["location": ["latitude": .double(37.4), "longitude": .double(-122.1)]]],
            "attributes": [["key": "a", "value": "b"], ["key": "n", "value": .integer(3)]],
        ],
        "errorResponse": ["httpStatusCode": .integer(403), "code": "PERMISSION_DENIED", "message": "no"],
        "fleetauthDecision": ["outcome": "REFUSED", "check": "claims", "roles": ["a", "b"], "valid": .bool(false)],
    ],
]

/// The program's entry point, under the name SwiftPM gives an executable's `main`.
@_cdecl("fuzz_log_filter_main")
public func fuzzLogFilterMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzInput.main(argc, argv) { fuzzLogFilter($0, $1) }
}
