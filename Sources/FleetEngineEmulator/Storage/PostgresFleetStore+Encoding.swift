import FleetAuthCore
import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import NIOCore
import SwiftProtobuf

/// How the store keeps messages: the protobuf binary format, as on SQLite (`SQLValue.decode(_:as:)`).
extension PostgresFleetStore {
    static func encode(_ message: some SwiftProtobuf.Message) throws -> ByteBuffer {
        ByteBuffer(bytes: try message.serializedBytes() as [UInt8])
    }

    static func decode<M: SwiftProtobuf.Message>(_ buffer: ByteBuffer, as type: M.Type) throws -> M {
        try SQLValue.decode(Array(buffer.readableBytesView), as: type)
    }

    static func trip(id: String, updatedAt: Int64, body: ByteBuffer) throws -> StoredTrip {
        StoredTrip(
            id: id,
            trip: try decode(body, as: FleetEngineV1.Trip.self),
            updatedAt: Date(epochMilliseconds: updatedAt)
        )
    }
}
