public import FleetAuthServerCore

/// The error the emulator answers with is `GoogleAPIError`, Google's JSON error body, as Fleet Engine's.
@available(*, deprecated, renamed: "GoogleAPIError")
public typealias FleetEngineError = GoogleAPIError
