// The server modules' public types — the error both servers answer with, the store errors and URLs, the timeouts, the
// limits and the trust file — are part of this module's API; everything else in those modules is `package`.
@_exported public import FleetAuthDatabase
@_exported public import FleetAuthServerCore
@_exported public import FleetAuthServerSupport
