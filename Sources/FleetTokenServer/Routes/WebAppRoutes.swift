import FleetAuthCore
import FleetAuthServerCore
import FleetAuthServerSupport
import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// Where the browser pages find Fleet Engine: the emulator's (or Fleet Engine's) REST base URL and the provider.
/// Set before the server starts, or later — `fleetauth serve` learns the emulator's port only once it listens.
public final class WebAppSettings: Sendable {
    private struct State {
        var fleetEngineURL: String?
        var tileURL: String?
    }

    private let state: NIOLockedValueBox<State>

    public init(fleetEngineURL: String? = nil, tileURL: String? = nil) {
        state = NIOLockedValueBox(State(fleetEngineURL: fleetEngineURL, tileURL: tileURL))
    }

    /// The REST base URL the pages call Fleet Engine at, such as `http://127.0.0.1:8787`; it must allow this
    /// server's origin (CORS: `fleetauth emulator --allow-origin`).
    public var fleetEngineURL: String? {
        get { state.withLockedValue { $0.fleetEngineURL } }
        set { state.withLockedValue { $0.fleetEngineURL = newValue } }
    }

    /// A map tile URL template (`https://tile.example.com/{z}/{x}/{y}.png`) for pages used online; without one the
    /// map is drawn without tiles.
    public var tileURL: String? {
        get { state.withLockedValue { $0.tileURL } }
        set { state.withLockedValue { $0.tileURL = newValue } }
    }
}

/// The browser side, served by the token server: the journey-sharing page at `/app/trip/{tripId}`, the shipment
/// tracking page at `/app/shipment/{trackingId}`, the fleet
/// console at `/app/console`, their scripts and styles under `/app/static/`, and `/app/config.json`. Plain
/// JavaScript modules shipped as resources: no build step, nothing fetched from elsewhere.
struct WebAppRoutes {
    let settings: WebAppSettings
    let project: String

    /// The shipped files by name, read once.
    static let files: [String: (bytes: [UInt8], type: String)] = {
        var files: [String: (bytes: [UInt8], type: String)] = [:]
        guard let directory = Bundle.module.url(forResource: "Web", withExtension: nil),
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return files }
        let types = ["html": "text/html", "js": "text/javascript", "css": "text/css", "svg": "image/svg+xml"]
        for name in names {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path),
                let type = types[(name as NSString).pathExtension]
            else { continue }
            files[name] = (Array(data), type + "; charset=utf-8")
        }
        return files
    }()

    /// Pages may load scripts and styles from this server only; they may call only Fleet Engine besides it.
    func securityHeaders() -> HTTPFields {
        let connect = ["'self'", settings.fleetEngineURL].compactMap { $0 }.joined(separator: " ")
        let images = ["'self'", "data:", settings.tileURL.flatMap(Self.origin)].compactMap { $0 }.joined(separator: " ")
        return [
            .contentSecurityPolicy:
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src \(images); connect-src \(connect); "
                + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
            .init("X-Content-Type-Options")!: "nosniff", .init("Referrer-Policy")!: "no-referrer",
            .cacheControl: "no-cache",
        ]
    }

    static func origin(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host
        else { return nil }
        return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
    }

    func file(_ name: String) throws -> Response {
        guard let file = Self.files[name] else { throw GoogleAPIError.notFound("No such file.") }
        var headers = securityHeaders()
        headers[.contentType] = file.type
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
    }

    func register(on router: Router<TokenServerRequestContext>) {
        router.get("app/trip/{tripId}") { _, _ in try self.file("trip.html") }
        router.get("app/shipment/{trackingId}") { _, _ in try self.file("shipment.html") }
        router.get("app/console") { _, _ in try self.file("console.html") }
        router.get("app/static/{name}") { _, context in
            let name = context.parameters.get("name") ?? ""
            guard !name.hasSuffix(".html") else { throw GoogleAPIError.notFound("No such file.") }
            return try self.file(name)
        }
        router.get("app/config.json") { _, _ in
            var object: JSONObject = ["project": .string(project)]
            if let url = settings.fleetEngineURL { object["fleetEngineURL"] = .string(url) }
            if let tiles = settings.tileURL { object["tileURL"] = .string(tiles) }
            return JSONResponse.make(object)
        }
    }
}
