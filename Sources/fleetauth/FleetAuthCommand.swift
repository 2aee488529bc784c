import ArgumentParser
import FleetAuthBenchmarks
import FleetAuthCore
import FleetAuthServerCore
import Foundation

@main
struct FleetAuthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleetauth",
        abstract:
            "Fleet Engine authorization in Swift: keys, tokens, a local Fleet Engine, a token server, benchmarks.",
        subcommands: [
            KeysCommand.self, TokenCommand.self, EmulatorCommand.self, TokenServerCommand.self, UsersCommand.self,
            DemoCommand.self, ServeCommand.self, LogsCommand.self, BenchCommand.self,
        ]
    )

    /// Parses the command line with the servers' environment variables added (``EnvironmentOptions``) and runs
    /// the command; with `--log-format json`, a failure is a JSON object on standard error like every log line.
    static func main() async {
        do {
            let arguments = try EnvironmentOptions.expand(
                Array(CommandLine.arguments.dropFirst()),
                environment: ProcessInfo.processInfo.environment
            )
            var command = try await asyncParseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // A server command's help ends with its variables.
            let arguments = Array(CommandLine.arguments.dropFirst())
            if exitCode(for: error) == .success, let command = EnvironmentOptions.helpRequested(by: arguments),
                let variables = try? EnvironmentOptions.help(command)
            {
                print(fullMessage(for: error) + "\n\n" + EnvironmentOptions.wrapped(variables))
                exit(withError: nil)
            }
            // No PIN or token an error message quotes reaches the terminal or the log.
            let error = redacted(error)
            if LogFormat.active == .json, error is CLIError {
                LogFormat.fail(String(describing: error))
                Foundation.exit(1)
            }
            exit(withError: error)
        }
    }
}

/// `error` with the secrets its message may quote (a PIN of a PKCS#11 URI, a token) redacted.
private func redacted(_ error: any Error) -> any Error {
    switch error {
    case let error as CLIError: CLIError(SecretRedaction.redacted(error.description))
    case let error as ValidationError: ValidationError(SecretRedaction.redacted(error.message))
    default: error
    }
}

/// A failure the CLI reports as `Error: <message>` with exit code 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prints a line and flushes it at once, so progress shows even when the output is a pipe (a JSON object with
/// `--log-format json`).
func say(_ line: String) {
    LogFormat.announce(line)
}
