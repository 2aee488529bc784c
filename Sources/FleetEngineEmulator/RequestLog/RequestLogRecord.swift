import FleetAuthCore
import FleetAuthServerCore
import Foundation
import NIOConcurrencyHelpers
import SwiftProtobuf

/// What one Fleet Engine call leaves for the request log, as the pipeline saw it: cheap to take on the request path,
/// turned into a Cloud Logging entry later, off that path (``RequestLogEntryBuilder``).
///
/// A reference, so the request path fills one in place and hands it on without copying the caller and the messages
/// it holds (each copy retained them all, on objects every call shares). Only the task that serves the call writes
/// to it, before it hands the record to ``RequestLog/record(_:)``, whose lock orders those writes before the
/// writer's reads; nothing writes to it after that.
///
/// The bearer token is kept only while the record waits in memory, to decode a refused token's claims for the
/// decision; it never reaches an entry.
final class RequestLogRecord: @unchecked Sendable {
    /// `maps.fleetengine.v1.VehicleService/UpdateVehicle`.
    let rpc: String
    let transport: RPCPipeline.Transport
    /// What the transport saw of the resource before the request was read: the REST path, or gRPC's
    /// `x-goog-request-params` values.
    let target: String?
    /// When the call arrived, on the emulator's clock.
    let received: Date
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

    init(rpc: String, transport: RPCPipeline.Transport, target: String?, received: Date) {
        self.rpc = rpc
        self.transport = transport
        self.target = target
        self.received = received
    }
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
