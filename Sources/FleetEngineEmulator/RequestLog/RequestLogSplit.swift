import FleetAuthCore

/// Splitting an entry larger than Cloud Logging takes, as Fleet Engine does
/// (developers.google.com/maps/documentation/mobility/operations/cloud-logging/split-logs).
///
/// Cloud Logging drops an entry over 256 KB, so Fleet Engine spreads a long one over several, and marks each with
/// `split` (`uid`, the same in every part; `index`, from 0; `totalSplits`), with the index appended to its
/// `insertId`. Google lists the logs this happens to — SearchVehicles, ListDeliveryVehicles, ListTasks,
/// BatchCreateTasks — and does it as Cloud Audit Logs do, but in `jsonPayload`
/// (cloud.google.com/logging/docs/audit/split-logs): every field outside the payload is copied into each part, and so
/// are the payload's `@type`, `header` and FleetAuth's decision; the lists in `request` and `response` (`matches`,
/// `deliveryVehicles`, `tasks`, `requests`) are spread over the parts in order; the other fields of `request` and
/// `response` appear in the first part only. Joining the parts' lists in `split.index` order gives the original.
///
/// The emulator splits any entry over the limit that has such lists, not only the four Google names, since any
/// other would otherwise reach a reader whole where Google's would be lost. One element larger than the limit by
/// itself stays whole in its part.
extension RequestLogEntryBuilder {
    /// Cloud Logging's limit on one entry: 256 KB.
    static let entrySizeLimit = 256 * 1024

    /// The parts of `entry`: the entry itself when it is within `limit` bytes of JSON or has no list to spread.
    static func split(_ entry: JSONObject, limit: Int = entrySizeLimit) -> [JSONObject] {
        guard var payload = entry["jsonPayload"]?.objectValue, entry.jsonBytes.count > limit else { return [entry] }
        // The lists to spread, in document order, and the first part's payload without them.
        var pieces: [(part: String, field: String, element: JSONValue, size: Int)] = []
        var shell = payload
        for part in ["request", "response"] {
            guard var object = payload[part]?.objectValue else { continue }
            for key in object.keys {
                guard let elements = object[key]?.arrayValue, !elements.isEmpty else { continue }
                pieces += elements.map { (part, key, $0, $0.jsonBytes.count + 1) }
                object[key] = nil
            }
            payload[part] = .object(object)
            shell[part] = .object(JSONObject())
        }
        guard !pieces.isEmpty else { return [entry] }

        // Room the split marker takes in each part, with the longest index and total it could need.
        let marker = #","split":{"uid":"","index":00000,"totalSplits":00000},"-00000""#.utf8.count
        let uid = entry["insertId"]?.stringValue ?? ""
        func size(_ payload: JSONObject) -> Int {
            var part = entry
            part["jsonPayload"] = .object(payload)
            return part.jsonBytes.count + marker + 2 * uid.utf8.count
        }
        // Each part takes elements in order while it stays within the limit, and at least one (the first part may
        // take none when the other fields fill it).
        var parts: [[Int]] = [[]]
        var used = size(payload)
        let emptySize = size(shell)
        for index in pieces.indices {
            if used + pieces[index].size > limit, parts.count == 1 || !parts[parts.count - 1].isEmpty {
                parts.append([])
                used = emptySize
            }
            parts[parts.count - 1].append(index)
            used += pieces[index].size
        }
        if parts.count == 1 { return [entry] }

        return parts.enumerated().map { index, members in
            var partPayload = index == 0 ? payload : shell
            // A part's members are consecutive, so each list's elements arrive together.
            var start = members.startIndex
            while start < members.endIndex {
                let (part, field) = (pieces[members[start]].part, pieces[members[start]].field)
                var end = start
                while end < members.endIndex, pieces[members[end]].part == part, pieces[members[end]].field == field {
                    end += 1
                }
                var object = partPayload[part]?.objectValue ?? JSONObject()
                object[field] = .array(members[start..<end].map { pieces[$0].element })
                partPayload[part] = .object(object)
                start = end
            }
            var entry = entry
            entry["insertId"] = .string("\(uid)-\(index)")
            entry["jsonPayload"] = .object(partPayload)
            entry["split"] = [
                "uid": .string(uid), "index": .integer(Int64(index)), "totalSplits": .integer(Int64(parts.count)),
            ]
            return entry
        }
    }
}
