// The types of the server modules (FleetAuthServerCore, FleetAuthDatabase, FleetAuthServerSupport) that are part of
// this module's API, re-exported by name as Hummingbird's Exports.swift does: the error both servers answer with,
// the store errors and URLs, the limits and the trust file. Everything else in them is `package` plumbing,
// invisible outside this package.

@_exported public import protocol FleetAuthDatabase.ClosableStore
@_exported public import struct FleetAuthDatabase.DatabaseTimeouts
@_exported public import struct FleetAuthDatabase.PostgresURL
@_exported public import struct FleetAuthServerCore.GoogleAPIError
@_exported public import struct FleetAuthServerCore.StoreError
@_exported public import struct FleetAuthServerCore.TrustConfiguration
@_exported public import struct FleetAuthServerCore.TrustConfigurationError
@_exported public import struct FleetAuthServerCore.TrustedServiceAccount
@_exported public import struct FleetAuthServerSupport.ServerLimits
