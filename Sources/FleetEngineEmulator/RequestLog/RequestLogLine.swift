package import FleetAuthCore

/// One compact line for a request log entry, as `fleetauth logs` prints it: the time, the canonical code, the
/// transport, the method, the entities the call names, and for a refusal the reason in words.
///
///     2026-12-04T02:10:00.123456Z  PERMISSION_DENIED  rest  GetVehicle  vehicle_id=v1  The token's vehicleid …
package enum RequestLogLine {
    package static func format(_ entry: JSONObject) -> String {
        let payload = entry["jsonPayload"]?.objectValue ?? JSONObject()
        let code = payload["errorResponse"]?.objectValue?["code"]?.stringValue ?? "OK"
        var method = "?"
        if let type = payload["@type"]?.stringValue, let last = type.split(separator: ".").last {
            method = String(last.hasSuffix("Log") ? last.dropLast(3) : last)
        }
        var parts = [
            entry["timestamp"]?.stringValue ?? "-", code, payload["fleetauthTransport"]?.stringValue ?? "-", method,
        ]
        if let labels = entry["labels"]?.objectValue {
            parts += labels.keys.sorted().compactMap { key in labels[key]?.stringValue.map { "\(key)=\($0)" } }
        }
        if let split = entry["split"]?.objectValue, let index = split["index"]?.integerValue,
            let total = split["totalSplits"]?.integerValue
        {
            // One call's long entry, in parts (Google's split logs): say which part this is.
            parts.append("split=\(index + 1)/\(total)")
        }
        if code != "OK" {
            let decision = payload["fleetauthDecision"]?.objectValue
            let refused = decision?["outcome"]?.stringValue == "REFUSED"
            let words = refused ? decision?["explanation"]?.stringValue : nil
            if let words = words ?? payload["errorResponse"]?.objectValue?["message"]?.stringValue {
                parts.append(words)
            }
        }
        return parts.joined(separator: "  ")
    }
}
