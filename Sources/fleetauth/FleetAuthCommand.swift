import ArgumentParser

@main
struct FleetAuthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleetauth",
        abstract: "Fleet Engine authorization in Swift: service-account keys, tokens, and benchmarks.",
        subcommands: [KeysCommand.self, TokenCommand.self, EmulatorCommand.self, BenchCommand.self]
    )
}

/// A failure the CLI reports as `Error: <message>` with exit code 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
