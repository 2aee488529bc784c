import FleetAuthCore
import FleetAuthServerCore
import Foundation
import SwiftProtobuf

/// Turns a ``RequestLogRecord`` into the `LogEntry` Fleet Engine writes to Cloud Logging for the same call
/// (<doc:RequestLog>): its `logName`, `resource`, `labels`, `severity`, times, and a `jsonPayload` with the log
/// message's `@type`, the request header, the request, and the response or `errorResponse` — plus FleetAuth's
/// decision under `fleetauthDecision`.
enum RequestLogEntryBuilder {
    /// The `location` label of the monitored resource.
    static let location = "global"

    /// The API an RPC belongs to, as its entries name it.
    struct API: Sendable {
        /// `fleetengine.googleapis.com/Fleet` or `fleetengine.googleapis.com/DeliveryFleet`.
        let resourceType: String
        /// The package of the log messages: `maps.fleetengine.v1` or `maps.fleetengine.delivery.log.v1`.
        let logPackage: String

        static let onDemand = API(resourceType: "fleetengine.googleapis.com/Fleet", logPackage: "maps.fleetengine.v1")
        static let deliveries = API(
            resourceType: "fleetengine.googleapis.com/DeliveryFleet",
            logPackage: "maps.fleetengine.delivery.log.v1"
        )

        init(resourceType: String, logPackage: String) {
            self.resourceType = resourceType
            self.logPackage = logPackage
        }

        /// The API of `rpc` (`maps.fleetengine.delivery.v1.DeliveryService/GetTask`).
        init(rpc: String) {
            self = rpc.hasPrefix("maps.fleetengine.delivery.") ? .deliveries : .onDemand
        }
    }

    /// The method of `rpc` (`UpdateVehicle`).
    static func methodName(_ rpc: String) -> String {
        rpc.split(separator: "/").last.map(String.init) ?? rpc
    }

    /// `UpdateVehicle` → `update_vehicle`, `BatchCreateTasks` → `batch_create_tasks`.
    static func snakeCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase, !result.isEmpty { result += "_" }
            result += character.lowercased()
        }
        return result
    }

    /// `projects/{provider}/logs/fleetengine.googleapis.com%2F{rpc in snake case}`.
    static func logName(provider: String, rpc: String) -> String {
        "projects/\(provider)/logs/fleetengine.googleapis.com%2F\(snakeCase(methodName(rpc)))"
    }

    /// The entry's severity for a call that ended with `code` (nil: it succeeded).
    static func severity(_ code: GoogleAPIError.Code?) -> String {
        guard let code else { return "INFO" }
        return code.httpStatus >= 500 ? "ERROR" : "WARNING"
    }

    /// The entry for `record`, with `insertId`; `receivedAt` is when the log took it (the emulator's clock).
    static func entry(
        _ record: RequestLogRecord,
        insertID: String,
        receivedAt: Date,
        accountOf: (String) -> TrustedServiceAccount? = { _ in nil }
    ) -> (provider: String, JSONObject) {
        let api = API(rpc: record.rpc)
        var request = record.request.flatMap(json) ?? JSONObject()
        let names = ResourceNames(request: request, target: record.target)
        let provider = names.provider ?? record.caller?.account.project ?? "unknown"
        let header = request["header"]
        // Google's request logs name the entity by its ID (`vehicleId`), not by its resource name.
        if let name = request["name"]?.stringValue ?? request["parent"]?.stringValue {
            for (key, value) in ResourceNames(name: name).ids where request[key] == nil {
                request[key] = .string(value)
            }
        }
        request["name"] = nil
        request["parent"] = nil

        var payload = JSONObject()
        payload["@type"] = .string("type.googleapis.com/\(api.logPackage).\(methodName(record.rpc))Log")
        payload["header"] = header ?? .object(JSONObject())
        payload["request"] = .object(request)
        if let error = record.error {
            payload["errorResponse"] = [
                "httpStatusCode": .integer(Int64(error.code.httpStatus)),
                "code": .string(error.code.name),
                "message": .string(error.message),
            ]
        } else if let response = record.response.flatMap(json) {
            payload["response"] = .object(response)
        }
        payload["fleetauthDecision"] = .object(decision(record, accountOf: accountOf).jsonObject)
        payload["fleetauthTransport"] = .string(record.transport.rawValue)

        var labels = JSONObject()
        for (key, value) in names.labels { labels[key] = .string(value) }

        var entry = JSONObject()
        entry["insertId"] = .string(insertID)
        entry["jsonPayload"] = .object(payload)
        entry["resource"] = [
            "type": .string(api.resourceType),
            "labels": ["location": .string(location), "resource_container": .string("projects/\(provider)")],
        ]
        entry["timestamp"] = .string(timestamp(record.received))
        entry["severity"] = .string(severity(record.error?.code))
        entry["labels"] = .object(labels)
        entry["logName"] = .string(logName(provider: provider, rpc: record.rpc))
        entry["receiveTimestamp"] = .string(timestamp(receivedAt))
        return (provider, entry)
    }

    /// The decision of `record`'s call.
    static func decision(
        _ record: RequestLogRecord,
        accountOf: (String) -> TrustedServiceAccount? = { _ in nil }
    ) -> AccessDecision {
        guard let caller = record.caller else {
            var claims: JSONObject?
            var account: TrustedServiceAccount?
            if let token = record.refusedToken, let jws = try? CompactJWS(token) {
                claims = try? jws.payloadObject()
                account = (claims?["iss"]?.stringValue).flatMap(accountOf)
            }
            return .refusedToken(
                reason: record.tokenRejection,
                claims: claims,
                now: record.received,
                account: account
            )
        }
        return .checked(record.accessChecks, caller: caller, error: record.error)
    }

    /// RFC 3339 in UTC with microseconds, as Cloud Logging writes times.
    static func timestamp(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
        let below = (micros % 1000 + 1000) % 1000
        // RFC3339 writes milliseconds (`…:SS.123Z`), rounding down: half a millisecond in keeps a float just below
        // the millisecond from losing it. The three digits after them are the rest of the microseconds.
        let milliseconds = RFC3339.format(Date(timeIntervalSince1970: (TimeInterval(micros - below) + 500) / 1e6))
        let digits = String(below)
        return milliseconds.dropLast() + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// A message in proto3 JSON, as an object.
    static func json(_ message: any SwiftProtobuf.Message) -> JSONObject? {
        guard let text: [UInt8] = try? message.jsonUTF8Bytes() else { return nil }
        return try? StrictJSONParser(maximumDepth: 96).parseObject(text)
    }
}

/// The provider and entity IDs a call names: from its request's `name`, `parent` and ID fields, or, when the request
/// was never read, from the target the transport saw (the REST path, gRPC's `x-goog-request-params`).
struct ResourceNames: Sendable {
    var provider: String?
    /// The entry labels (`vehicle_id`, `trip_id`, `delivery_vehicle_id`, `task_id`).
    var labels: [(String, String)] = []
    /// The request-log ID fields (`vehicleId`, …) the name gives.
    var ids: [(String, String)] = []

    /// The collections of resource names, with their label and request field.
    static let collections: [(collection: String, label: String, field: String)] = [
        ("vehicles", "vehicle_id", "vehicleId"),
        ("trips", "trip_id", "tripId"),
        ("deliveryVehicles", "delivery_vehicle_id", "deliveryVehicleId"),
        ("tasks", "task_id", "taskId"),
    ]

    init(name: String) {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var index = 0
        while index + 1 < parts.count {
            if parts[index] == "providers" {
                provider = provider ?? parts[index + 1].split(separator: ":").first.map(String.init)
                index += 2
            } else if let kind = Self.collections.first(where: { $0.collection == parts[index] }) {
                let id = parts[index + 1].split(separator: ":").first.map(String.init) ?? ""
                if !id.isEmpty {
                    labels.append((kind.label, id))
                    ids.append((kind.field, id))
                }
                index += 2
            } else {
                index += 1
            }
        }
    }

    init(request: JSONObject, target: String?) {
        let name = request["name"]?.stringValue ?? request["parent"]?.stringValue ?? target ?? ""
        self.init(name: name)
        func add(_ label: String, _ value: JSONValue?) {
            guard let id = value?.stringValue, !id.isEmpty, !labels.contains(where: { $0.0 == label }) else { return }
            labels.append((label, id))
        }
        for kind in Self.collections { add(kind.label, request[kind.field]) }
        add("vehicle_id", request["trip"]?.objectValue?["vehicleId"])
        add("delivery_vehicle_id", request["task"]?.objectValue?["deliveryVehicleId"])
        if let taskName = request["task"]?.objectValue?["name"]?.stringValue,
            let id = ResourceNames(name: taskName).ids.first?.1
        {
            add("task_id", .string(id))
        }
    }
}
