public import Logging

/// The logging policy of FleetAuth's servers, after async-http-client's:
///
/// - a library logs nothing unless handed a `Logger` (``silent(label:)`` is every default);
/// - the command-line servers log warnings and errors (``quiet(label:)``) unless asked for more, because a
///   line per request would drown everything else;
/// - messages are constant strings and the data goes in metadata, whose keys are prefixed `fleetauth.`
///   (``Logger/Metadata/fleetauth(_:)``), so they never collide with a host application's;
/// - no token, password, session token or key material is ever logged.
extension Logger {
    /// A logger that drops everything: the default of every library API that takes one.
    @usableFromInline package static func silent(label: String) -> Logger {
        Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// A logger that reports warnings and errors only.
    @usableFromInline package static func quiet(label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        return logger
    }
}

extension Logger.Metadata {
    /// Metadata whose keys are prefixed `fleetauth.`: `.fleetauth(["kid": "..."])` logs `fleetauth.kid`.
    package static func fleetauth(_ values: KeyValuePairs<String, Logger.MetadataValue>) -> Self {
        var metadata = Self()
        for (key, value) in values { metadata["fleetauth." + key] = value }
        return metadata
    }
}
