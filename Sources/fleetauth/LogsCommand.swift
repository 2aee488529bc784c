import ArgumentParser
import FleetAuthCore
import FleetAuthJWT
import FleetEngineEmulator
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `fleetauth logs`: the local Fleet Engine's request log for a person — one line per call with its code and, for a
/// refusal, the reason — or the entries themselves, or a file of them for Google's Fleet Debugger.
struct LogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Read the local Fleet Engine's request log: one line per call, and why each refusal was refused.",
        discussion: """
            Reads the emulator's Cloud Logging entries (POST /v2/entries:list) with a fleet-reader token it mints \
            from a key whose role reads the whole fleet: by default the viewer key the emulator provisioned in its \
            data directory. The filter is Cloud Logging's query language: labels.vehicle_id="v1", \
            severity>=WARNING, jsonPayload.errorResponse.code="PERMISSION_DENIED", logName:update_vehicle.

            --export writes every matching entry, oldest first, to one file as a JSON array, the form the Logs \
            Explorer downloads and Google's Fleet Debugger (googlemaps/fleet-debugger) loads.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Argument(help: #"A Cloud Logging query (labels.vehicle_id="v1"). Default: every entry."#) var filter: String = ""
    @Option(help: "The emulator's REST base URL.") var emulator: String = "http://127.0.0.1:8787"
    @Option(help: "The emulator's data directory, whose keys/viewer.json signs the reading token.")
    var data: String = "fleet-engine-data"
    @Option(help: "A service-account key file whose role reads the whole fleet. Default: DATA/keys/viewer.json.")
    var key: String?
    @Option(help: "A server or fleet-reader token to read with, instead of minting one from a key.")
    var token: String?
    @Option(help: "The provider (project) whose log is read. Default: the key's project.") var project: String?
    @Option(help: "How many of the latest matching entries to print (with --follow: before following).")
    var limit: Int = 50
    @Flag(help: "Keep printing new entries as calls arrive, until interrupted.") var follow = false
    @Option(help: "text: one line per call; json: one entry per line.") var format: Format = .text
    @Option(help: "Write every matching entry to this file as one JSON array (the Logs Explorer's download).")
    var export: String?

    func validate() throws {
        guard (0...1000).contains(limit) else { throw ValidationError("--limit must be from 0 to 1000.") }
        guard URL(string: emulator)?.scheme.map({ $0 == "http" || $0 == "https" }) == true else {
            throw ValidationError("--emulator must be an http:// or https:// URL, such as http://127.0.0.1:8787.")
        }
        if export != nil, follow { throw ValidationError("--export writes a file once; it cannot --follow.") }
        if token != nil, key != nil { throw ValidationError("Read with a --token or a --key, not both.") }
    }

    func run() async throws {
        let reader: LogReader
        if let token {
            // A service account's email is NAME@PROJECT.iam.gserviceaccount.com.
            let issuer = (try? CompactJWS(token).payloadObject())?["iss"]?.stringValue ?? ""
            let domain = issuer.split(separator: "@").last.map(String.init) ?? ""
            guard let project = project ?? domain.split(separator: ".").first.map(String.init), !project.isEmpty else {
                throw CLIError("Cannot tell the provider from the token's issuer; name it with --project.")
            }
            reader = LogReader(base: emulator, project: project, token: { token })
        } else {
            let path = key ?? data + "/keys/" + DefaultProvisioning.accountName(for: .viewer) + ".json"
            let (serviceAccount, minter) = try signingKey(
                path,
                for: "the reading token",
                otherwise: "name the emulator's data directory with --data, a key with --key, or pass a --token"
            )
            reader = LogReader(
                base: emulator,
                project: project ?? serviceAccount.projectID,
                token: { try minter.mintSynchronously(.fleetReader).jwt }
            )
        }
        if let export {
            let entries = try await reader.all(filter: filter)
            let text = "[\n" + entries.map(\.jsonText).joined(separator: ",\n") + "\n]\n"
            try Data(text.utf8).write(to: URL(fileURLWithPath: export))
            say("Wrote \(entries.count) entries to \(export).")
            return
        }
        // The latest `limit` matches, newest first from the log: a page may come back short while the log goes on
        // (each read looks at a bounded number of entries), so pages are read until enough matched or none are left.
        var latest: [JSONObject] = []
        var next: String?
        while limit > 0, latest.count < limit {
            let page = try await reader.page(
                filter: filter,
                orderBy: "timestamp desc",
                pageSize: limit - latest.count,
                token: next
            )
            latest += page.entries
            next = page.next
            if next == nil { break }
        }
        latest.reverse()
        latest.forEach(show)
        guard follow else { return }
        var cursor = LogReader.Cursor(after: latest)
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(1))
            let fresh = try await reader.since(cursor, filter: filter)
            fresh.forEach(show)
            cursor.advance(past: fresh)
        }
    }

    private func show(_ entry: JSONObject) {
        switch format {
        case .text: say(RequestLogLine.format(entry))
        case .json: say(entry.jsonText)
        }
    }
}

/// Reads an emulator's request log through `entries:list`.
struct LogReader {
    let base: String
    let project: String
    /// The bearer token for each read (a fresh one when minted, so a long --follow outlives an hour).
    let token: () throws -> String

    /// Where following stands: the time of the latest entry shown, and the entries of that time already shown.
    struct Cursor {
        var timestamp: String?
        var shown: Set<String> = []

        init(after entries: [JSONObject]) { advance(past: entries) }

        mutating func advance(past entries: [JSONObject]) {
            for entry in entries {
                guard let time = entry["timestamp"]?.stringValue else { continue }
                if time != timestamp {
                    timestamp = time
                    shown = []
                }
                if let id = entry["insertId"]?.stringValue { shown.insert(id) }
            }
        }
    }

    func page(filter: String, orderBy: String, pageSize: Int, token: String?) async throws -> (
        entries: [JSONObject], next: String?
    ) {
        var body = JSONObject()
        body["resourceNames"] = [.string("projects/\(project)")]
        body["filter"] = .string(filter)
        body["orderBy"] = .string(orderBy)
        body["pageSize"] = .integer(Int64(max(pageSize, 1)))
        if let token { body["pageToken"] = .string(token) }
        guard let url = URL(string: base.hasSuffix("/") ? base + "v2/entries:list" : base + "/v2/entries:list") else {
            throw CLIError("\(base) is not a URL.")
        }
        var request = URLRequest(url: url, timeoutInterval: 30)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(try self.token())", forHTTPHeaderField: "Authorization")
        request.httpBody = Data(body.jsonBytes)
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.cancellationSafeData(for: request)
        } catch {
            throw CLIError("Cannot reach the emulator at \(base): \(error.localizedDescription)")
        }
        let answer = try? StrictJSONParser(maximumDepth: 128).parseObject([UInt8](data))
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200, let answer else {
            let message = answer?["error"]?.objectValue?["message"]?.stringValue
            throw CLIError(
                "The emulator answered \(status) to entries:list: \(message ?? String(decoding: data.prefix(300), as: UTF8.self))"
            )
        }
        return (
            answer["entries"]?.arrayValue?.compactMap(\.objectValue) ?? [],
            answer["nextPageToken"]?.stringValue
        )
    }

    /// Every matching entry, oldest first.
    func all(filter: String) async throws -> [JSONObject] {
        var entries: [JSONObject] = []
        var token: String?
        repeat {
            let page = try await page(filter: filter, orderBy: "timestamp asc", pageSize: 1000, token: token)
            entries += page.entries
            token = page.next
        } while token != nil
        return entries
    }

    /// The matching entries after `cursor`, oldest first.
    func since(_ cursor: Cursor, filter: String) async throws -> [JSONObject] {
        guard let time = cursor.timestamp else { return try await all(filter: filter) }
        let bound = #"timestamp>="\#(time)""#
        let query = filter.trimmingCharacters(in: .whitespaces).isEmpty ? bound : "(\(filter)) AND \(bound)"
        return try await all(filter: query).filter {
            $0["timestamp"]?.stringValue != time || !cursor.shown.contains($0["insertId"]?.stringValue ?? "")
        }
    }
}
