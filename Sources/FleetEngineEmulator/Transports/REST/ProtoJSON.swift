import FleetAuthCore
import FleetAuthServerCore
import FleetAuthServerSupport
import Foundation
import Hummingbird
import SwiftProtobuf

/// Messages in and out of REST bodies, by the proto3 JSON mapping, as Google's REST front end reads and writes
/// them: lowerCamelCase names out, either spelling in; enum names out, names or numbers in; 64-bit integers as
/// strings out, strings or numbers in; Timestamps as RFC 3339 and Durations as `"1.5s"`; default values left out.
///
/// Every body is first read by the project's strict JSON reader (no duplicate names, strict UTF-8, bounded depth:
/// one parser for the whole project), then decoded into the message with unknown fields refused.
enum ProtoJSON {
    static let decodingOptions: JSONDecodingOptions = {
        var options = JSONDecodingOptions()
        options.ignoreUnknownFields = false
        options.messageDepthLimit = JSONRequestBody.maximumDepth
        return options
    }()

    /// `bytes` as message `M`; `field` names it in errors (`request`, `query`). With `member`, the bytes are the
    /// field of `M` whose JSON name that is, as a REST body bound to one field (`body: "vehicle"`) is read, and
    /// errors name values by their path under it. An empty body is the empty message, or that field's.
    static func decode<M: SwiftProtobuf.Message>(
        _ bytes: [UInt8],
        as type: M.Type,
        field: String,
        member: String? = nil
    ) throws(GoogleAPIError) -> M {
        let parsed = try JSONRequestBody.parse(bytes, field: field)
        let blank = bytes.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        var input = bytes
        var options = decodingOptions
        if let member {
            input = Array("{\"\(member)\":".utf8) + (blank ? Array("{}".utf8) : bytes) + [UInt8(ascii: "}")]
            options.messageDepthLimit += 1
        } else if blank {
            return M()
        }
        do {
            return try M(jsonUTF8Bytes: input, options: options)
        } catch let error as JSONDecodingError {
            if case .unknownField = error { throw invalid(error, field: field) }
            let located = locate(.object(parsed), in: M.self, path: field) { inner in
                member.map { JSONValue.object(JSONObject([$0: inner])) } ?? inner
            }
            throw invalid(error, field: located ?? field)
        } catch {
            throw .invalidArgument("Invalid JSON payload received for '\(field)': \(error).")
        }
    }

    /// How many trial decodes ``locate(_:in:path:wrap:)`` may make for one refused body.
    static let locateBudget = 64

    /// The path of the value inside `value` (at `path`) that message `M` refuses: each member, and each half of an
    /// array, is tried alone, wrapped back into the message by `wrap`, down to the innermost value that fails on its
    /// own. The search costs about what decoding the body costs once or twice, whatever its shape: an array's
    /// elements are halved (a refused element among 500,000 takes 19 trials of shrinking halves, not 500,000), and
    /// the trials stop at ``locateBudget``, naming the deepest path found by then.
    static func locate<M: SwiftProtobuf.Message>(
        _ value: JSONValue,
        in type: M.Type,
        path: String,
        wrap: (JSONValue) -> JSONValue
    ) -> String? {
        var budget = locateBudget
        return locate(value, in: type, path: path, budget: &budget, wrap: wrap)
    }

    /// ``locate(_:in:path:wrap:)`` with the trials left in `budget` (each trial takes one).
    static func locate<M: SwiftProtobuf.Message>(
        _ value: JSONValue,
        in type: M.Type,
        path: String,
        budget: inout Int,
        wrap: (JSONValue) -> JSONValue
    ) -> String? {
        func refused(_ candidate: JSONValue) -> Bool {
            budget -= 1
            return (try? M(jsonUTF8Bytes: wrap(candidate).jsonBytes, options: decodingOptions)) == nil
        }
        switch value {
        case .object(let object):
            for member in object {
                guard budget > 0 else { return nil }
                guard refused(.object(JSONObject([member.key: member.value]))) else { continue }
                let inner = path + "." + member.key
                return locate(member.value, in: type, path: inner, budget: &budget) {
                    wrap(.object(JSONObject([member.key: $0])))
                } ?? inner
            }
        case .array(let items):
            // The first refused element: while more than one is left, keep the first half if it is refused alone,
            // else the second.
            var range = items.indices
            while range.count > 1 {
                guard budget > 0 else { return nil }
                let firstHalf = range.lowerBound..<(range.lowerBound + range.count / 2)
                range = refused(.array(Array(items[firstHalf]))) ? firstHalf : firstHalf.upperBound..<range.upperBound
            }
            guard let index = range.first, budget > 0, refused(.array([items[index]])) else { return nil }
            let inner = "\(path)[\(index)]"
            return locate(items[index], in: type, path: inner, budget: &budget) { wrap(.array([$0])) } ?? inner
        default:
            break
        }
        return nil
    }

    /// The request body's bytes, read with `limit` (larger is 413).
    static func bodyBytes(_ request: Request, limit: Int) async throws(GoogleAPIError) -> [UInt8] {
        let tooLarge = GoogleAPIError(.payloadTooLarge, "The request body is larger than \(limit) bytes.")
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit { throw tooLarge }
        do {
            return Array(try await request.body.collect(upTo: limit).readableBytesView)
        } catch {
            throw tooLarge
        }
    }

    /// Google's wording for a body its mapping refuses; `field` is the path of the refused value.
    static func invalid(_ error: JSONDecodingError, field: String) -> GoogleAPIError {
        let reason: String
        switch error {
        case .unknownField(let name):
            return .invalidArgument(
                "Invalid JSON payload received. Unknown name \"\(name.prefix(100))\" at '\(field)': Cannot find field."
            )
        case .unrecognizedEnumValue: reason = "not one of the enum's values"
        case .conflictingOneOf: reason = "more than one value of a oneof is set"
        case .malformedDuration: reason = "a Duration must look like \"1.5s\""
        case .malformedTimestamp: reason = "a Timestamp must be RFC 3339, such as \"2026-11-23T10:00:00Z\""
        case .numberRange: reason = "out of the field's range"
        case .malformedNumber: reason = "not a number of the field's type"
        case .malformedBool: reason = "not true or false"
        case .malformedString: reason = "not a string"
        default: reason = "\(error)"
        }
        return .invalidArgument("Invalid JSON payload received. Invalid value at '\(field)': \(reason).")
    }

    static let enumsAsIntegers: JSONEncodingOptions = {
        var options = JSONEncodingOptions()
        options.alwaysPrintEnumsAsInts = true
        return options
    }()

    /// A message as a 200 answer; enums by number when the caller asked for it (`$alt=json;enum-encoding=int`, as
    /// Google's REST clients do), else by name.
    static func response(_ message: some SwiftProtobuf.Message, enumsAsIntegers: Bool = false) throws -> Response {
        let bytes: [UInt8] =
            enumsAsIntegers ? try message.jsonUTF8Bytes(options: Self.enumsAsIntegers) : try message.jsonUTF8Bytes()
        return Response(
            status: .ok,
            headers: [.contentType: JSONResponse.contentType, .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }
}
