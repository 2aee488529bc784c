import Foundation

/// The servers' options as environment variables, the way Cloud Run, Kubernetes and Compose configure services:
/// `--grpc-port 8786` can be `FLEETAUTH_GRPC_PORT=8786`. An option on the command line wins over its variable; a
/// repeatable option's variable holds a comma-separated list; a flag's is `1`/`true` (or `0`/`false`).
///
/// The variables become command-line arguments before parsing, so they are validated exactly as options are.
enum EnvironmentOptions {
    enum Kind {
        case value
        case repeated
        case flag
    }

    /// The options of each server command that a variable may set.
    static let commands: [String: [(name: String, kind: Kind)]] = [
        "emulator": [
            ("trust", .value), ("data", .value), ("in-memory", .flag), ("database", .value), ("host", .value),
            ("port", .value), ("grpc-port", .value), ("metrics-port", .value), ("metrics-host", .value),
            ("project", .value), ("idle-timeout", .value), ("grpc-max-connection-age", .value),
            ("grpc-keepalive", .value), ("grpc-max-concurrent-streams", .value), ("allow-origin", .repeated),
            ("log-format", .value), ("shutdown-grace", .value), ("drain-period", .value), ("tls-certificate", .value),
            ("tls-key", .value), ("readiness-timeout", .value), ("database-timeout", .value),
            ("database-down-timeout", .value), ("iam-port", .value), ("iam-host", .value),
            ("iam-sign-as", .repeated),
            ("iam-runtime-account", .value), ("request-timeout", .value), ("max-connections-per-client", .value),
        ],
        "token-server": [
            ("data", .value), ("database", .value), ("key-encryption-key-file", .value), ("signer", .repeated),
            ("service-account", .repeated), ("key-id", .repeated), ("iam-credentials-url", .value),
            ("google-keys-url", .value), ("host", .value), ("port", .value), ("project", .value),
            ("driver-key", .value), ("consumer-key", .value), ("server-key", .value), ("delivery-key", .value),
            ("delivery-server-key", .value), ("reader-key", .value), ("readiness-timeout", .value),
            ("bcrypt-cost", .value), ("token-lifetime", .value), ("mint-rate", .value), ("mint-burst", .value),
            ("public-url", .value), ("oidc-issuer", .repeated), ("oidc-audience", .repeated),
            ("oidc-auto-create", .value), ("emulator-url", .value), ("allow-origin", .repeated),
            ("tile-url", .value), ("log-format", .value), ("shutdown-grace", .value), ("drain-period", .value),
            ("audit-retention", .value), ("database-timeout", .value), ("database-down-timeout", .value),
            ("tls-certificate", .value), ("tls-key", .value), ("trusted-proxy", .repeated),
            ("request-timeout", .value), ("max-connections-per-client", .value),
        ],
        "serve": [
            ("data", .value), ("database", .value), ("key-encryption-key-file", .value), ("host", .value),
            ("emulator-port", .value), ("emulator-grpc-port", .value), ("token-server-port", .value),
            ("project", .value), ("token-lifetime", .value), ("tile-url", .value), ("keyless", .flag),
            ("log-format", .value),
        ],
    ]

    /// `FLEETAUTH_GRPC_PORT` for `grpc-port`.
    static func variable(_ option: String) -> String {
        "FLEETAUTH_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// The paragraph `--help` ends with: every variable of `command`.
    static func help(_ command: String) -> String {
        let names = (commands[command] ?? []).map { "--\($0.name) \(variable($0.name))" }
        return """
            Every option can come from an environment variable instead; the option wins. Repeatable options take a \
            comma-separated list, flags 1 or true: \(names.joined(separator: ", ")).
            """
    }

    /// `arguments` (without the program's name) with an argument added for every variable set in `environment`
    /// whose option the command line does not give; unchanged for other commands.
    static func expand(_ arguments: [String], environment: [String: String]) throws -> [String] {
        guard let command = arguments.first, let options = commands[command] else { return arguments }
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        let given = Set(
            arguments[..<end].compactMap { argument -> String? in
                guard argument.hasPrefix("--") else { return nil }
                return String(argument.dropFirst(2).prefix { $0 != "=" })
            }
        )
        var added: [String] = []
        for (name, kind) in options where !given.contains(name) {
            guard let value = environment[variable(name)] else { continue }
            switch kind {
            case .value:
                added.append("--\(name)=\(value)")  // = keeps a value starting with - a value
            case .repeated:
                for item in value.split(separator: ",") {
                    added.append("--\(name)=\(item.trimmingCharacters(in: .whitespaces))")
                }
            case .flag:
                switch value.lowercased() {
                case "1", "true", "yes": added.append("--\(name)")
                case "", "0", "false", "no": break
                default: throw CLIError("\(variable(name)) must be 1, true, 0 or false, not \(value).")
                }
            }
        }
        var result = Array(arguments[..<end])
        result += added
        result += arguments[end...]
        return result
    }
}
