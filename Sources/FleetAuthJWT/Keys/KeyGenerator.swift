/// How a server makes a new service-account key for one of its accounts.
///
/// ``fresh`` (the default everywhere) makes an RSA-2048 key from the system's random source on a thread of its
/// own: ``ServiceAccountKey/generateDetached(projectID:name:)``. Another generator exists for tests, which start
/// hundreds of servers: FleetAuthServerTesting's `TestKeys.generator` hands out real RSA-2048 keys made once and
/// kept between runs, each under the identity and a new key ID asked for.
public struct KeyGenerator: Sendable {
    private let make:
        @Sendable (_ projectID: String, _ name: String) async throws(ServiceAccountKeyError) -> ServiceAccountKey

    /// A generator that calls `make` with the project ID and the service account's name.
    public init(
        _ make:
            @escaping @Sendable (_ projectID: String, _ name: String) async throws(ServiceAccountKeyError) ->
            ServiceAccountKey
    ) {
        self.make = make
    }

    /// A new RSA-2048 key from the system's random source, made on a thread of its own.
    public static let fresh = KeyGenerator { projectID, name throws(ServiceAccountKeyError) in
        try await ServiceAccountKey.generateDetached(projectID: projectID, name: name)
    }

    /// A new key for service account `name` in project `projectID`.
    public func callAsFunction(projectID: String, name: String) async throws(ServiceAccountKeyError)
        -> ServiceAccountKey
    {
        try await make(projectID, name)
    }
}
