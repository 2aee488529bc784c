public import ServiceLifecycle

/// The database the emulator keeps: one store for both APIs, each through its own protocol. The on-demand service
/// sees it as an ``OnDemandStore``, the Deliveries service as a ``DeliveryStore``; both of the project's stores
/// (``SQLiteFleetStore``, ``PostgresFleetStore``) are each.
///
/// As a `Service`, the store lives as long as the server using it: `run()` holds its connections until graceful
/// shutdown. Every driver passes the same conformance suite (`EmulatorStoreConformanceTests`).
public protocol EmulatorStore: OnDemandStore, DeliveryStore, Service {}
