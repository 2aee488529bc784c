// The types of FleetAuthServerSupport that are part of this module's API, re-exported by name as Hummingbird's
// Exports.swift does: the error both servers answer with, the store errors and URLs, the limits and the trust
// file. Everything else in FleetAuthServerSupport is `package` plumbing, invisible outside this package.

@_exported public import protocol FleetAuthServerSupport.ClosableStore
@_exported public import struct FleetAuthServerSupport.DatabaseTimeouts
@_exported public import struct FleetAuthServerSupport.GoogleAPIError
@_exported public import struct FleetAuthServerSupport.PostgresURL
@_exported public import struct FleetAuthServerSupport.ServerLimits
@_exported public import struct FleetAuthServerSupport.StoreError
@_exported public import struct FleetAuthServerSupport.TrustConfiguration
@_exported public import struct FleetAuthServerSupport.TrustConfigurationError
@_exported public import struct FleetAuthServerSupport.TrustedServiceAccount
