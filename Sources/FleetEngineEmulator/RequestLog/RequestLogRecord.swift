import FleetAuthCore
import FleetAuthServerCore
import Foundation
import NIOConcurrencyHelpers
import SwiftProtobuf

/// What one Fleet Engine call leaves for the request log, as the pipeline saw it: cheap to take on the request path
/// (messages are copied by reference), turned into a Cloud Logging entry later, off that path
/// (``RequestLogEntryBuilder``).
///
/// The bearer token is kept only while the record waits in memory, to decode a refused token's claims for the
/// decision; it never reaches an entry.
struct RequestLogRecord: Sendable {
    /// `maps.fleetengine.v1.VehicleService/UpdateVehicle`.
    var rpc: String
    var transport: RPCPipeline.Transport
    /// What the transport saw of the resource before the request was read: the REST path, or gRPC's
    /// `x-goog-request-params` values.
    var target: String?
    /// When the call arrived, on the emulator's clock.
    var received: Date
    /// The request message, once it was read (an unauthenticated call's body is never read).
    var request: (any SwiftProtobuf.Message)?
    /// The answer, for a call that succeeded.
    var response: (any SwiftProtobuf.Message)?
    /// Google's error, for a call that failed.
    var error: GoogleAPIError?
    /// The caller, once authenticated.
    var caller: Principal?
    /// Why the token was refused (`expired`), when it was.
    var tokenRejection: String?
    /// The token of a refused call, for its claims; never written to an entry.
    var refusedToken: String?
    /// The access checks the service method ran, in order (usually one).
    var accessChecks: [AccessCheck] = []
}

/// One access check a service method ran: enough to say, off the request path, which step allowed or refused it.
struct AccessCheck: Sendable, Hashable {
    let method: FleetEngineMethod
    /// The resource the call names; nil when only the role was checked.
    let scope: ResourceScope?
    let provider: String?
}

/// Collects the access checks of the call in progress, when the request log is on: the pipeline sets one per call
/// as a task-local value, ``AccessPolicy`` adds to it.
final class AccessCheckRecorder: Sendable {
    @TaskLocal static var current: AccessCheckRecorder?

    private let checks = NIOLockedValueBox<[AccessCheck]>([])

    func add(_ check: AccessCheck) { checks.withLockedValue { $0.append(check) } }

    var all: [AccessCheck] { checks.withLockedValue { $0 } }
}
