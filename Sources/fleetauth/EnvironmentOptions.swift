import ArgumentParser
import Foundation

/// The servers' options as environment variables, the way Cloud Run, Kubernetes and Compose configure services:
/// `--grpc-port 8786` can be `FLEETAUTH_GRPC_PORT=8786`. An option on the command line wins over its variable; a
/// repeatable option's variable holds a comma-separated list; a flag's is `1`, `true` or `yes` (or `0`, `false`,
/// `no`).
///
/// Each option is named once, where its command declares it: the names and kinds come from the command's own
/// description (swift-argument-parser's tool-info dump, the format its manual and documentation plugins read). The
/// variables become command-line arguments before parsing, so they are validated exactly as options are.
///
/// Not swift-configuration: its readers are declared for macOS 15 and later, and the CLI runs on macOS 14; and its
/// command-line provider would name every option a second time, as a configuration key beside the argument parser's
/// declaration (which `--help`, validation and completion read).
enum EnvironmentOptions {
    /// The commands whose options variables may set.
    static let commands: [any ParsableCommand.Type] = [
        EmulatorCommand.self, TokenServerCommand.self, ServeCommand.self,
    ]

    enum Kind {
        case value
        case repeated
        case flag
    }

    /// The long options of `command` and how each takes its value; `--help` is not one.
    static func options(of command: any ParsableCommand.Type) throws -> [(name: String, kind: Kind)] {
        let info = try JSONDecoder().decode(ToolInfo.self, from: Data(command._dumpHelp().utf8))
        return (info.command.arguments ?? []).flatMap { argument -> [(name: String, kind: Kind)] in
            guard argument.kind != "positional" else { return [] }
            let kind: Kind = argument.kind == "flag" ? .flag : argument.isRepeating ? .repeated : .value
            return (argument.names ?? []).filter { $0.kind == "long" && $0.name != "help" }.map { ($0.name, kind) }
        }
    }

    /// `FLEETAUTH_GRPC_PORT` for `grpc-port`.
    static func variable(_ option: String) -> String {
        "FLEETAUTH_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// The paragraph a server command's `--help` ends with (``FleetAuthCommand/main()`` adds it: a command's own
    /// description cannot name its options while it is being built).
    static func help(_ command: any ParsableCommand.Type) throws -> String {
        let names = try options(of: command).map { "--\($0.name) \(variable($0.name))" }
        return """
            Every option can come from an environment variable instead; the option wins. Repeatable options take a \
            comma-separated list, flags 1 or true: \(names.joined(separator: ", ")).
            """
    }

    /// `text` broken into lines of at most `width` columns at spaces, as `--help` prints its paragraphs.
    static func wrapped(_ text: String, width: Int = 80) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return (lines + [line]).joined(separator: "\n")
    }

    /// The server command whose help `arguments` ask for, if they do.
    static func helpRequested(by arguments: [String]) -> (any ParsableCommand.Type)? {
        guard let first = arguments.first, arguments.contains(where: { $0 == "--help" || $0 == "-h" }) else {
            return nil
        }
        return commands.first { $0._commandName == first }
    }

    /// `arguments` (without the program's name) with an argument added for every variable set in `environment`
    /// whose option the command line does not give; unchanged for other commands.
    static func expand(_ arguments: [String], environment: [String: String]) throws -> [String] {
        guard let first = arguments.first, let command = commands.first(where: { $0._commandName == first }) else {
            return arguments
        }
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        let given = Set(
            arguments[..<end].compactMap { argument -> String? in
                guard argument.hasPrefix("--") else { return nil }
                return String(argument.dropFirst(2).prefix { $0 != "=" })
            }
        )
        var added: [String] = []
        for (name, kind) in try options(of: command) where !given.contains(name) {
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

/// The part of swift-argument-parser's tool-info dump (`--experimental-dump-help`, serialization version 0) that
/// names a command's options.
private struct ToolInfo: Decodable {
    struct Command: Decodable {
        var arguments: [Argument]?
    }
    struct Argument: Decodable {
        struct Name: Decodable {
            var kind: String
            var name: String
        }
        var kind: String
        var isRepeating: Bool
        var names: [Name]?
    }
    var command: Command
}
