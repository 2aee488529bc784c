import AsyncHTTPClient
import FleetAuthCore
import FleetAuthJWT
import Foundation
import Instrumentation
import NIOCore
import NIOHTTP1

/// One HTTP exchange with a Google endpoint over a pooled client, with its own deadline.
struct GoogleHTTP: Sendable {
    let client: HTTPClient

    struct Answer {
        var status: Int
        var body: [UInt8]
        var object: JSONObject? { try? StrictJSONParser().parseObject(body) }
        /// Google's error message (`{"error":{"message"}}`, or OAuth's `error_description`), for logs, without
        /// anything that looks like a bearer or access token: a hostile or broken endpoint may echo the caller's.
        var errorMessage: String { SecretRedaction.redacted(rawErrorMessage) }

        private var rawErrorMessage: String {
            if let object {
                if case .object(let error)? = object["error"], let message = error["message"]?.stringValue {
                    return message
                }
                if let description = object["error_description"]?.stringValue { return description }
                if let error = object["error"]?.stringValue { return error }
            }
            return String(decoding: body.prefix(200), as: UTF8.self)
        }
    }

    /// Sends one request; a connection failure or a deadline passed is `unavailable`.
    func send(
        _ method: HTTPMethod,
        _ url: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        timeout: Duration,
        what: String
    ) async throws(SigningError) -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        // The caller's trace goes on to Google (W3C traceparent), when the process traces.
        if let context = ServiceContext.current {
            InstrumentationSystem.instrument.inject(context, into: &request.headers, using: HTTPHeadersInjector())
        }
        if let body { request.body = .bytes(body) }
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout.nanoseconds)))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            return Answer(status: Int(response.status.code), body: Array(bytes.readableBytesView))
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw .unavailable("\(what) did not answer within \(timeout).")
        } catch {
            throw .unavailable("\(what) cannot be reached: \(error).")
        }
    }

    static func form(_ fields: [(String, String)]) -> [UInt8] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return Array(
            fields.map { "\($0)=\($1.addingPercentEncoding(withAllowedCharacters: allowed) ?? $1)" }
                .joined(separator: "&").utf8
        )
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

private struct HTTPHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
        headers.replaceOrAdd(name: key, value: value)
    }
}
