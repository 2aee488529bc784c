import ArgumentParser
import FleetAuthBenchmarks
import Foundation

@main
struct FleetAuthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleetauth",
        abstract:
            "Fleet Engine authorization in Swift: keys, tokens, a local Fleet Engine, a token server, benchmarks.",
        subcommands: [
            KeysCommand.self, TokenCommand.self, EmulatorCommand.self, TokenServerCommand.self, UsersCommand.self,
            DemoCommand.self, ServeCommand.self, BenchCommand.self,
        ]
    )
}

/// A failure the CLI reports as `Error: <message>` with exit code 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prints a line and flushes it at once, so progress shows even when the output is a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}
