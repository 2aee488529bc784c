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

    /// The entry's severity for a call that ended with an error of `httpStatus` (nil: it succeeded).
    static func severity(httpStatus: Int?) -> String {
        guard let httpStatus else { return "INFO" }
        return httpStatus >= 500 ? "ERROR" : "WARNING"
    }

    /// What the store keeps of `record` (``StoredRequest``), with `insertId`; `loggedAt` is when the log took it (the
    /// emulator's clock). Its messages stay protobuf messages: their JSON is written only when the entry is read.
    static func stored(
        _ record: RequestLogRecord,
        insertID: String,
        loggedAt: Date,
        accountOf: (String) -> TrustedServiceAccount? = { _ in nil },
        decisions: DecisionMemo? = nil
    ) -> StoredRequest {
        // The provider the call names: from the path or routing header the transport saw, else from the access
        // check that judged the resource, else (a call refused before that) from the request's own name.
        var provider = record.target.flatMap(ResourceNames.provider(in:))
        provider = provider ?? record.accessChecks.lazy.compactMap(\.provider).first
        if provider == nil, let request = record.request.flatMap(json) {
            provider = ResourceNames(request: request, target: nil).provider
        }
        func make() -> JSONObject { Self.decision(record, accountOf: accountOf).jsonObject }
        let decision = decisions?.decision(of: record, make: make) ?? (object: make(), json: nil)
        var stored = StoredRequest(
            rpc: record.rpc,
            transport: record.transport.rawValue,
            target: record.target,
            received: RequestLog.microseconds(record.received),
            logged: RequestLog.microseconds(loggedAt),
            insertID: insertID,
            provider: provider ?? record.caller?.account.project ?? "unknown",
            error: record.error.map { ($0.code.httpStatus, $0.code.name, $0.message) },
            decision: decision.object,
            request: record.request,
            response: record.error == nil ? record.response : nil
        )
        stored.decisionJSON = decision.json
        return stored
    }

    /// The Cloud Logging entry of a stored call.
    static func entry(_ stored: StoredRequest) -> JSONObject {
        let api = API(rpc: stored.rpc)
        var request = stored.request.flatMap(json) ?? JSONObject()
        let names = ResourceNames(request: request, target: stored.target)
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
        payload["@type"] = .string("type.googleapis.com/\(api.logPackage).\(methodName(stored.rpc))Log")
        payload["header"] = header ?? .object(JSONObject())
        payload["request"] = .object(request)
        if let error = stored.error {
            payload["errorResponse"] = [
                "httpStatusCode": .integer(Int64(error.status)),
                "code": .string(error.code),
                "message": .string(error.message),
            ]
        } else if let response = stored.response.flatMap(json) {
            payload["response"] = .object(response)
        }
        payload["fleetauthDecision"] = .object(stored.decision)
        payload["fleetauthTransport"] = .string(stored.transport)

        var labels = JSONObject()
        for (key, value) in names.labels { labels[key] = .string(value) }

        var entry = JSONObject()
        entry["insertId"] = .string(stored.insertID)
        entry["jsonPayload"] = .object(payload)
        entry["resource"] = [
            "type": .string(api.resourceType),
            "labels": ["location": .string(location), "resource_container": .string("projects/\(stored.provider)")],
        ]
        entry["timestamp"] = .string(timestamp(microseconds: stored.received))
        entry["severity"] = .string(severity(httpStatus: stored.error?.status))
        entry["labels"] = .object(labels)
        entry["logName"] = .string(logName(provider: stored.provider, rpc: stored.rpc))
        entry["receiveTimestamp"] = .string(timestamp(microseconds: stored.logged))
        return entry
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

    /// RFC 3339 in UTC with microseconds, as Cloud Logging writes times, for a time in microseconds since 1970.
    static func timestamp(microseconds micros: Int64) -> String {
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

    /// The provider `name` names, as ``init(name:)`` finds it, without reading the rest (the writer reads it of
    /// every call).
    static func provider(in name: String) -> String? {
        let parts = name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        var index = 0
        while index + 1 < parts.count {
            let part = parts[index]
            if part.elementsEqual("providers".utf8) {
                if let id = parts[index + 1].split(separator: UInt8(ascii: ":")).first {
                    return String(decoding: id, as: UTF8.self)
                }
                index += 2
            } else if collections.contains(where: { part.elementsEqual($0.collection.utf8) }) {
                index += 2
            } else {
                index += 1
            }
        }
        return nil
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
