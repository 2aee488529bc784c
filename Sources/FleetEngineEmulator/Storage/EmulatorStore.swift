public import ServiceLifecycle

/// Where an emulator keeps both APIs' vehicles, trips, delivery vehicles and tasks: a ``SQLiteFleetStore`` or a
/// ``PostgresFleetStore``, handed to ``EmulatorServer``. As a `Service` it lives as long as the server using it:
/// `run()` holds its connections until graceful shutdown.
///
/// The emulator's own two stores are the only conforming types: what a store does (its reads, writes and plans) is
/// the emulator's internal plumbing, not API, so that it can change with the SQL behind it.
public protocol EmulatorStorage: Service {
    /// The store, as the emulator uses it.
    var emulatorStore: EmulatorStoreReference { get }
}

/// A store as the emulator uses it: opaque outside the emulator's package.
public struct EmulatorStoreReference: Sendable {
    package let store: any EmulatorStore
}

/// The database the emulator keeps: one store for both APIs, the request log and the test controls, each through its own protocol. The on-demand service
/// sees it as an ``OnDemandStore``, the Deliveries service as a ``DeliveryStore``; both of the project's stores
/// (``SQLiteFleetStore``, ``PostgresFleetStore``) are each. Every driver passes the same conformance suite
/// (`EmulatorStoreConformanceTests`).
package protocol EmulatorStore: OnDemandStore, DeliveryStore, RequestLogStore, ControlStore, EmulatorStorage {}

extension EmulatorStore {
    public var emulatorStore: EmulatorStoreReference { EmulatorStoreReference(store: self) }
}
