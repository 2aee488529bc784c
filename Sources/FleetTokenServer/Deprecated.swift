public import FleetAuthServerCore

/// The error the token server answers with is `GoogleAPIError`, Google's JSON error body — the shape Fleet Engine
/// uses too, so a client reads both the same way.
@available(*, deprecated, renamed: "GoogleAPIError")
public typealias TokenServerError = GoogleAPIError
