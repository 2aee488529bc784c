import FleetAuthCore
import FleetAuthServerCore
import Foundation
import SwiftProtobuf

/// A request log entry as the store keeps it: the call's facts, its decision, and its messages in the protobuf binary
/// form, so that writing an entry costs an encoding of what the call already holds. The Cloud Logging entry (its
/// proto3 JSON) is built from it only when it is read (``RequestLogEntryBuilder``), which is rare next to calls.
///
/// Encoded as a version byte, the facts as one JSON object, then the request and the response messages, each
/// length-prefixed; a message is named by its full proto name, so an entry written by an earlier emulator is read
/// by a later one.
struct StoredRequest: Sendable {
    /// `maps.fleetengine.v1.VehicleService/UpdateVehicle`.
    var rpc: String
    var transport: String
    var target: String?
    /// When the call arrived, and when the log took it, in microseconds since 1970.
    var received: Int64
    var logged: Int64
    var insertID: String
    /// The provider whose log holds the entry.
    var provider: String
    /// Google's error, for a call that failed: its HTTP status, canonical code and message.
    var error: (status: Int, code: String, message: String)?
    /// ``AccessDecision``, as its JSON object.
    var decision: JSONObject
    var request: (any SwiftProtobuf.Message)?
    var response: (any SwiftProtobuf.Message)?

    static let version: UInt8 = 1

    /// The stored bytes.
    func encoded() throws -> [UInt8] {
        var facts = JSONObject()
        facts["rpc"] = .string(rpc)
        facts["transport"] = .string(transport)
        if let target { facts["target"] = .string(target) }
        facts["received"] = .integer(received)
        facts["logged"] = .integer(logged)
        facts["insertId"] = .string(insertID)
        facts["provider"] = .string(provider)
        if let error {
            facts["error"] = [
                "status": .integer(Int64(error.status)), "code": .string(error.code), "message": .string(error.message),
            ]
        }
        facts["decision"] = .object(decision)
        var bytes: [UInt8] = [Self.version]
        bytes.reserveCapacity(512)
        Self.append(facts.jsonBytes, to: &bytes)
        for message in [request, response] {
            guard let message else {
                Self.append([], to: &bytes)
                continue
            }
            Self.append(Array(type(of: message).protoMessageName.utf8), to: &bytes)
            Self.append(try message.serializedBytes() as [UInt8], to: &bytes)
        }
        return bytes
    }

    /// Decodes `bytes`, finding each message's type in `types` by its full proto name (a message of a type not there
    /// is left out).
    init(decoding bytes: [UInt8], types: [String: any SwiftProtobuf.Message.Type]) throws {
        var reader = Reader(bytes: bytes)
        guard try reader.byte() == Self.version else { throw Malformed() }
        let facts = try StrictJSONParser(maximumDepth: 64).parseObject(try reader.chunk())
        guard let rpc = facts["rpc"]?.stringValue, let transport = facts["transport"]?.stringValue,
            let received = facts["received"]?.integerValue, let logged = facts["logged"]?.integerValue,
            let insertID = facts["insertId"]?.stringValue, let provider = facts["provider"]?.stringValue
        else { throw Malformed() }
        self.rpc = rpc
        self.transport = transport
        self.target = facts["target"]?.stringValue
        self.received = received
        self.logged = logged
        self.insertID = insertID
        self.provider = provider
        if let error = facts["error"]?.objectValue, let status = error["status"]?.integerValue,
            let code = error["code"]?.stringValue, let message = error["message"]?.stringValue
        {
            self.error = (Int(status), code, message)
        }
        self.decision = facts["decision"]?.objectValue ?? JSONObject()
        var messages: [(any SwiftProtobuf.Message)?] = []
        for _ in 0..<2 {
            let name = try reader.chunk()
            guard !name.isEmpty else {
                messages.append(nil)
                continue
            }
            let body = try reader.chunk()
            messages.append(
                try types[String(decoding: name, as: UTF8.self)].map { try $0.init(serializedBytes: Array(body)) }
            )
        }
        request = messages[0]
        response = messages[1]
    }

    init(
        rpc: String,
        transport: String,
        target: String?,
        received: Int64,
        logged: Int64,
        insertID: String,
        provider: String,
        error: (status: Int, code: String, message: String)?,
        decision: JSONObject,
        request: (any SwiftProtobuf.Message)?,
        response: (any SwiftProtobuf.Message)?
    ) {
        self.rpc = rpc
        self.transport = transport
        self.target = target
        self.received = received
        self.logged = logged
        self.insertID = insertID
        self.provider = provider
        self.error = error
        self.decision = decision
        self.request = request
        self.response = response
    }

    struct Malformed: Error {}

    private static func append(_ chunk: [UInt8], to bytes: inout [UInt8]) {
        let count = UInt32(chunk.count)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: count >> shift)) }
        bytes += chunk
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        mutating func byte() throws -> UInt8 {
            guard index < bytes.count else { throw Malformed() }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func chunk() throws -> ArraySlice<UInt8> {
            var count = 0
            for shift in stride(from: 0, to: 32, by: 8) { count |= Int(try byte()) << shift }
            guard count <= bytes.count - index else { throw Malformed() }
            defer { index += count }
            return bytes[index..<index + count]
        }
    }
}
