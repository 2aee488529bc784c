import FleetAuthCore
import FleetAuthServerCore
import Foundation
import SwiftProtobuf

/// A request log entry as the store keeps it: the call's facts, its decision, and its messages in the protobuf binary
/// form, so that writing an entry costs an encoding of what the call already holds. The Cloud Logging entry (its
/// proto3 JSON) is built from it only when it is read (``RequestLogEntryBuilder``), which is rare next to calls.
///
/// Encoded as a version byte, then the facts (strings length-prefixed, times as 8 bytes, the decision as its JSON),
/// then the request and the response messages, each length-prefixed; a message is named by its full proto name, so
/// an entry written by an earlier emulator is read by a later one. Version 1 held the facts as one JSON object; it
/// is still read.
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
    /// ``decision``'s JSON text, when the writer already has it (calls of one token share it).
    var decisionJSON: [UInt8]?
    var request: (any SwiftProtobuf.Message)?
    var response: (any SwiftProtobuf.Message)?

    static let version: UInt8 = 2

    /// The stored bytes.
    func encoded() throws -> [UInt8] {
        var bytes: [UInt8] = [Self.version]
        bytes.reserveCapacity(1024)
        for text in [rpc, transport] { Self.append(text, to: &bytes) }
        Self.append(target, to: &bytes)
        Self.append(received, to: &bytes)
        Self.append(logged, to: &bytes)
        for text in [insertID, provider] { Self.append(text, to: &bytes) }
        if let error {
            bytes.append(1)
            Self.append(Int64(error.status), to: &bytes)
            Self.append(error.code, to: &bytes)
            Self.append(error.message, to: &bytes)
        } else {
            bytes.append(0)
        }
        Self.append(decisionJSON ?? decision.jsonBytes, to: &bytes)
        for message in [request, response] {
            guard let message else {
                Self.append([], to: &bytes)
                continue
            }
            Self.append(type(of: message).protoMessageName, to: &bytes)
            Self.append(try message.serializedBytes() as [UInt8], to: &bytes)
        }
        return bytes
    }

    /// Decodes `bytes`, finding each message's type in `types` by its full proto name (a message of a type not there
    /// is left out).
    init(decoding bytes: [UInt8], types: [String: any SwiftProtobuf.Message.Type]) throws {
        var reader = Reader(bytes: bytes)
        switch try reader.byte() {
        case 1: self = try Self.version1(&reader)
        case Self.version:
            self = Self(
                rpc: try reader.string(),
                transport: try reader.string(),
                target: try reader.byte() == 1 ? try reader.string() : nil,
                received: try reader.integer(),
                logged: try reader.integer(),
                insertID: try reader.string(),
                provider: try reader.string(),
                error: try reader.byte() == 1
                    ? (Int(try reader.integer()), try reader.string(), try reader.string()) : nil,
                decision: try StrictJSONParser(maximumDepth: 64).parseObject(try reader.chunk()),
                request: nil,
                response: nil
            )
        default: throw Malformed()
        }
        try readMessages(&reader, types: types)
    }

    /// The facts of version 1: one JSON object.
    private static func version1(_ reader: inout Reader) throws -> Self {
        let facts = try StrictJSONParser(maximumDepth: 64).parseObject(try reader.chunk())
        guard let rpc = facts["rpc"]?.stringValue, let transport = facts["transport"]?.stringValue,
            let received = facts["received"]?.integerValue, let logged = facts["logged"]?.integerValue,
            let insertID = facts["insertId"]?.stringValue, let provider = facts["provider"]?.stringValue
        else { throw Malformed() }
        var error: (Int, String, String)?
        if let facts = facts["error"]?.objectValue, let status = facts["status"]?.integerValue,
            let code = facts["code"]?.stringValue, let message = facts["message"]?.stringValue
        {
            error = (Int(status), code, message)
        }
        return Self(
            rpc: rpc,
            transport: transport,
            target: facts["target"]?.stringValue,
            received: received,
            logged: logged,
            insertID: insertID,
            provider: provider,
            error: error,
            decision: facts["decision"]?.objectValue ?? JSONObject(),
            request: nil,
            response: nil
        )
    }

    private mutating func readMessages(
        _ reader: inout Reader,
        types: [String: any SwiftProtobuf.Message.Type]
    ) throws {
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

    /// A chunk: its length in 4 bytes, then its bytes.
    private static func append(_ chunk: some Collection<UInt8>, to bytes: inout [UInt8]) {
        let count = UInt32(chunk.count)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: count >> shift)) }
        bytes.append(contentsOf: chunk)
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { append($0, to: &bytes) }
    }

    private static func append(_ text: String?, to bytes: inout [UInt8]) {
        guard let text else { return bytes.append(0) }
        bytes.append(1)
        append(text, to: &bytes)
    }

    private static func append(_ value: Int64, to bytes: inout [UInt8]) {
        let bits = UInt64(bitPattern: value)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: bits >> shift)) }
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

        mutating func string() throws -> String { String(decoding: try chunk(), as: UTF8.self) }

        mutating func integer() throws -> Int64 {
            var bits: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 8) { bits |= UInt64(try byte()) << shift }
            return Int64(bitPattern: bits)
        }
    }
}
