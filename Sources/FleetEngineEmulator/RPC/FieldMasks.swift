import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// The update masks of every update RPC: which paths each accepts. Paths are accepted in proto spelling
/// (`last_location`) and JSON spelling (`lastLocation`), as Google's REST front end accepts both.
enum FieldMasks {
    /// `lastLocation` → `last_location`; proto spelling is left as it is.
    static func protoPath(_ path: String) -> String {
        // Every valid path is ASCII: spelled byte by byte, without Unicode's case tables (this ran on every update).
        if path.utf8.allSatisfy({ $0 < 0x80 }) {
            guard path.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return path }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(path.utf8.count + 4)
            for byte in path.utf8 {
                if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                    bytes.append(UInt8(ascii: "_"))
                    bytes.append(byte + 0x20)
                } else {
                    bytes.append(byte)
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        var result = ""
        for character in path {
            if character.isUppercase {
                result.append("_")
                result += character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// The fields an update mask may name in one resource, from its descriptor: every field the message declares,
    /// except those that cannot change (``FieldBehaviors/fixedFields(of:)``: `IMMUTABLE`, `OUTPUT_ONLY` and `name`,
    /// and any the service adds), each refused with its reason. The fields are written by the `replaceField(_:from:)`
    /// generated from the same descriptors.
    struct Updatable: Sendable {
        let message: String
        let fields: Set<String>
        let fixed: [String: String]
        /// The fields marked `INPUT_ONLY`: a request's values that the service acts on but never keeps.
        let inputOnly: Set<String>

        init(_ resource: any SwiftProtobuf.Message.Type, alsoFixed: [String: String] = [:]) {
            message = String(resource.protoMessageName.split(separator: ".").last ?? "")
            fixed = FieldBehaviors.fixedFields(of: resource).merging(alsoFixed) { $1 }
            let names = FieldBehaviors.fieldNames(of: resource)
            fields = Set(names.all).subtracting(fixed.keys)
            inputOnly = Set(names.inputOnly)
        }
    }

    /// UpdateVehicle's fields. `available_capacity`, which Fleet Engine derives from the trips, is refused by name.
    static let vehicle = Updatable(
        FleetEngineV1.Vehicle.self,
        alsoFixed: ["available_capacity": "derived from the vehicle's trips"]
    )
    /// UpdateTrip's fields; `view` says which fields an answer carries. `intermediate_destinations_version` is a
    /// precondition, not a write: the stored version must equal it.
    static let trip = Updatable(FleetEngineV1.Trip.self, alsoFixed: ["view": "it describes an answer"])

    /// The mask's paths in proto spelling; refuses an empty mask, unknown paths and fields that cannot change.
    static func paths(_ mask: [String], updating resource: Updatable) throws(GoogleAPIError) -> [String] {
        guard !mask.isEmpty else {
            throw .invalidArgument("updateMask is required and must list at least one field.")
        }
        var paths: [String] = []
        for raw in mask {
            let path = protoPath(Self.trimmed(raw))
            guard !path.isEmpty else {
                throw .invalidArgument(
                    "updateMask must list at least one field, separated by commas, without empty paths."
                )
            }
            if let reason = resource.fixed[path] {
                throw .invalidArgument(
                    "updateMask path \"\(raw.prefix(64))\" names a field that cannot be updated (\(reason))."
                )
            }
            guard resource.fields.contains(path) else {
                throw .invalidArgument("updateMask path \"\(raw.prefix(64))\" is not a \(resource.message) field.")
            }
            if !paths.contains(path) { paths.append(path) }
        }
        return paths
    }

    /// `raw` without leading and trailing whitespace; a path without any is returned as it is.
    static func trimmed(_ raw: String) -> String {
        guard let first = raw.utf8.first, let last = raw.utf8.last else { return raw }
        // Foundation's trimming only where an end is not a plain ASCII letter, digit or `_`.
        func plain(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
        }
        return plain(first) && plain(last) ? raw : raw.trimmingCharacters(in: .whitespaces)
    }
}
