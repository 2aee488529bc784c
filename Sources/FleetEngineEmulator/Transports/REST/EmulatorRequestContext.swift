public import Hummingbird

/// The request context of the emulator's routes: Hummingbird's core storage. The caller is authenticated by
/// `RPCPipeline`, the chain REST and gRPC calls share, not by a middleware.
public struct EmulatorRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
    }
}
