import FleetAuthServerSupport
public import Hummingbird

/// The request context of the emulator's routes: Hummingbird's core storage plus the authenticated caller.
public struct EmulatorRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The caller, set by the authentication middleware on every `/v1` route.
    public var principal: Principal?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.principal = nil
    }

    /// The caller; every `/v1` route runs behind the authentication middleware, so it is always set there.
    func requirePrincipal() throws(GoogleAPIError) -> Principal {
        guard let principal else { throw .unauthenticated(TokenAuthenticator.missingCredentialsMessage) }
        return principal
    }
}
