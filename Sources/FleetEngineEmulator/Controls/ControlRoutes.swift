import FleetAuthCore
import FleetAuthServerSupport
import Hummingbird

/// The test controls' REST routes, under `/emulator/v1/` on the emulator's REST port (<doc:TestControls>): there
/// only when the emulator was started with them (`--test-controls`), and each needs a server token of the provider
/// it steers. Answers and errors are Google's JSON shapes, as the API's own.
struct ControlRoutes: Sendable {
    let store: any EmulatorStore
    let requestLog: RequestLog?
    let authenticator: TokenAuthenticator
    let refresher: KeyRefresher?

    func register(on router: Router<EmulatorRequestContext>) {
        let routes = self
        router.post("emulator/v1/providers/{provider}:reset") { request, context in
            let provider = try context.parameters.require("provider")
            try await routes.authorize(request, provider: provider)
            try await routes.reset(provider: provider)
            return Self.empty
        }
    }

    /// Deletes every vehicle, trip, delivery vehicle and task of `provider`, and its request-log entries; other
    /// providers are untouched. The entities go in one transaction; the log's entries after them, the pending
    /// ones written first, so no entry of a call answered before the reset outlives it.
    func reset(provider: String) async throws(GoogleAPIError) {
        do {
            // Deleting again is harmless, so a reset a database ended (a deadlock with writes it did not foresee,
            // a lost connection) is tried again, three times in all.
            var attempt = 1
            while true {
                do {
                    try await store.resetFleet(provider: provider)
                    break
                } catch  where attempt < 3 {
                    attempt += 1
                }
            }
            await requestLog?.flush()
            try await store.deleteLogEntries(provider: provider)
        } catch {
            throw .unavailable(
                "The store could not reset provider \(provider); nothing of it or part of it was deleted, try again: \(error)"
            )
        }
    }

    /// Refuses a call unless it carries a token of `provider`'s trusted account whose role may delete any of its
    /// vehicles or delivery vehicles: a server token, the one kind of token that could do what a control does
    /// through the API.
    private func authorize(_ request: Request, provider: String) async throws {
        let caller = try await authenticator.authenticate(
            authorization: request.headers[.authorization],
            refresher: refresher
        )
        guard Self.mayControl(caller, provider: provider) else {
            throw GoogleAPIError.permissionDenied(
                "The test controls of provider \(provider) need a server token of that provider's account (a role such as roles/fleetengine.serviceSuperUser or roles/fleetengine.deliverySuperUser)."
            )
        }
    }

    static func mayControl(_ caller: Principal, provider: String) -> Bool {
        [(FleetEngineMethod.deleteVehicle, ResourceScope.allVehicles), (.deleteDeliveryVehicle, .allDeliveryVehicles)]
            .contains { method, scope in
                (try? AccessPolicy.check(
                    account: caller.account,
                    claims: caller.claims,
                    method: method,
                    scope: scope,
                    provider: provider
                )) != nil
            }
    }

    static var empty: Response {
        Response(
            status: .ok,
            headers: [.contentType: JSONResponse.contentType, .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: "{}"))
        )
    }
}
