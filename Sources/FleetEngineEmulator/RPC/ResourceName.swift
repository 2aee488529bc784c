import FleetAuthCore
import FleetAuthServerCore

/// Fleet Engine's resource names, read strictly: `providers/{provider}`, `providers/{provider}/vehicles/{vehicle}`,
/// `providers/{provider}/trips/{trip}` and `providers/{provider}/billableTrips/{billableTrip}`. Each ID must pass
/// ``FleetAuthCore/FleetEngineID``'s rules, so a `/` inside an ID can never be read as a path step.
enum ResourceName {
    /// The provider of a `parent` field.
    static func provider(_ parent: String, field: String = "parent") throws(GoogleAPIError) -> String {
        let parts = parent.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == "providers" else {
            throw .invalidArgument("\(field) must be providers/{provider}, not \"\(parent.prefix(200))\".")
        }
        return try id(String(parts[1]), field: "provider")
    }

    /// The provider and ID of a `name` field in `collection` (`vehicles`, `trips`, `billableTrips`).
    static func resource(_ name: String, collection: String, field: String = "name") throws(GoogleAPIError)
        -> (provider: String, id: String)
    {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "providers", parts[2] == collection else {
            throw .invalidArgument(
                "\(field) must be providers/{provider}/\(collection)/{id}, not \"\(name.prefix(200))\"."
            )
        }
        // The ID is named as REST names its path segment (`vehicle ID`), so both transports say the same.
        return (
            try id(String(parts[1]), field: "provider"),
            try id(String(parts[3]), field: "\(collection.hasSuffix("s") ? collection.dropLast() : collection[...]) ID")
        )
    }

    /// A vehicle's name.
    static func vehicle(_ name: String) throws(GoogleAPIError) -> (provider: String, id: String) {
        try resource(name, collection: "vehicles")
    }

    /// A trip's name.
    static func trip(_ name: String) throws(GoogleAPIError) -> (provider: String, id: String) {
        try resource(name, collection: "trips")
    }

    /// An ID, checked against the ID rules.
    /// `field` names the value in the error, and is only built for one (every call on the hot path is valid).
    static func id(_ value: String, field: @autoclosure () -> String) throws(GoogleAPIError) -> String {
        guard !value.isEmpty else { throw .invalidArgument("\(field()) is required.") }
        do {
            try FleetEngineID.validate(value, field: "")
        } catch {
            throw .invalidArgument("Invalid \(field()): \(error.problem).")
        }
        return value
    }

    static func vehicleName(provider: String, id: String) -> String { "providers/\(provider)/vehicles/\(id)" }
    static func tripName(provider: String, id: String) -> String { "providers/\(provider)/trips/\(id)" }
}
