import Foundation

#if DistributedTracing
    import Instrumentation
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The app's trace, carried to the token server and Fleet Engine: every request the client makes has the W3C
/// `traceparent` (and `tracestate`) of the task's current trace, written by the instrument the app bootstrapped with
/// swift-distributed-tracing (swift-otel, or another). An app that bootstraps none sends nothing; nor does an app
/// that depends on FleetAuth without the `DistributedTracing` trait (`traits: []`), which leaves that package out.
enum TracePropagation {
    static func inject(into request: inout URLRequest) {
        #if DistributedTracing
            guard let context = ServiceContext.current else { return }
            InstrumentationSystem.instrument.inject(context, into: &request, using: URLRequestInjector())
        #endif
    }
}

#if DistributedTracing

    private struct URLRequestInjector: Injector {
        func inject(_ value: String, forKey key: String, into request: inout URLRequest) {
            request.setValue(value, forHTTPHeaderField: key)
        }
    }
#endif
