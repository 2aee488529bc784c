import GRPCCore
import Instrumentation
import Tracing

/// A span per gRPC call (`maps.fleetengine.v1.VehicleService/UpdateVehicle`, kind server), continuing the W3C
/// `traceparent` the caller sent in its metadata. Installed only when the process has a tracer.
@available(FleetAuthGRPC, *)
struct TracingInterceptor: ServerInterceptor {
    func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingServerRequest<Input>,
        context: ServerContext,
        next: @Sendable (StreamingServerRequest<Input>, ServerContext) async throws -> StreamingServerResponse<Output>
    ) async throws -> StreamingServerResponse<Output> {
        var parent = ServiceContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.metadata, into: &parent, using: MetadataExtractor())
        let name = context.descriptor.fullyQualifiedMethod
        return try await withSpan(name, context: parent, ofKind: .server) { span in
            span.attributes["rpc.system"] = "grpc"
            span.attributes["rpc.service"] = context.descriptor.service.fullyQualifiedService
            span.attributes["rpc.method"] = context.descriptor.method
            do {
                let response = try await next(request, context)
                if case .failure(let error) = response.accepted {
                    span.attributes["rpc.grpc.status_code"] = error.code.rawValue
                    span.setStatus(.init(code: .error))
                }
                return response
            } catch {
                span.recordError(error)
                span.setStatus(.init(code: .error))
                throw error
            }
        }
    }
}

private struct MetadataExtractor: Extractor {
    func extract(key: String, from metadata: Metadata) -> String? {
        metadata[stringValues: key].first { _ in true }
    }
}
