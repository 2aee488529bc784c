import FleetAuthClient
import Testing

@Suite("Delivery vehicle reporter decisions")
struct DeliveryVehicleReporterStateTests {
    typealias State = DeliveryVehicleReporterState

    static func location(_ n: Int) -> VehicleLocation {
        VehicleLocation(latitude: 51 + Double(n) / 1000, longitude: 0, time: nil)
    }

    static let route = [
        DeliveryStop(latitude: 51.5, longitude: 0, taskIDs: ["a", "b"]),
        DeliveryStop(latitude: 51.6, longitude: 0, taskIDs: ["c"]),
    ]

    static func sent(_ action: State.Action, sourceLocation: SourceLocation = #_sourceLocation) -> State.Update? {
        guard case .send(let update) = action else {
            Issue.record("expected a send, got \(action)", sourceLocation: sourceLocation)
            return nil
        }
        return update
    }

    @Test("the route goes out first, then the outcomes of the stop it closed, then the newest location")
    func order() throws {
        var state = State(interval: .seconds(10), stops: Self.route)
        state.location(Self.location(1))
        state.arrived()
        #expect(state.stops[0].state == .arrived)
        let done = state.completeStop(overrides: ["b": .failed])
        #expect(done == ["a", "b"])
        #expect(state.stops.map(\.taskIDs) == [["c"]])
        // The newest route wins over the ARRIVED one that was never sent.
        let route = try #require(Self.sent(state.next(now: .zero)))
        guard case .stops(let stops, _) = route else { throw Failure("expected the route, got \(route)") }
        #expect(stops.map(\.taskIDs) == [["c"]])
        #expect(state.next(now: .zero) == .wait(until: nil), "one call in flight at a time")
        state.completed(route, outcome: .accepted, at: .seconds(1))
        let first = try #require(Self.sent(state.next(now: .seconds(1))))
        #expect(first == .outcome(taskID: "a", .succeeded))
        state.completed(first, outcome: .accepted, at: .seconds(1))
        let second = try #require(Self.sent(state.next(now: .seconds(1))))
        #expect(second == .outcome(taskID: "b", .failed))
        state.completed(second, outcome: .accepted, at: .seconds(1))
        let location = try #require(Self.sent(state.next(now: .seconds(1))))
        #expect(location == .location(Self.location(1), sequence: 1))
        state.completed(location, outcome: .accepted, at: .seconds(2))
        state.location(Self.location(2))
        state.location(Self.location(3))
        #expect(state.next(now: .seconds(5)) == .wait(until: .seconds(11)), "a location at most once per interval")
        #expect(Self.sent(state.next(now: .seconds(11))) == .location(Self.location(3), sequence: 3))
    }

    @Test("a transient failure waits an interval and tries the same route; outcomes follow the routes")
    func outcomesAfterTheRoute() throws {
        var state = State(interval: .seconds(10), stops: Self.route)
        state.completeStop()
        let route = try #require(Self.sent(state.next(now: .zero)))
        state.completed(route, outcome: .transientFailure, at: .seconds(1))
        #expect(state.next(now: .seconds(2)) == .wait(until: .seconds(11)))
        let again = try #require(Self.sent(state.next(now: .seconds(11))))
        #expect(again == route, "the same route, tried again")
        // A newer route while the first is in flight: routes go first, then the outcomes of both.
        state.completeStop(outcome: .failed)
        state.completed(again, outcome: .accepted, at: .seconds(12))
        let empty = try #require(Self.sent(state.next(now: .seconds(12))))
        guard case .stops(let stops, _) = empty else { throw Failure("expected the route, got \(empty)") }
        #expect(stops.isEmpty)
        state.completed(empty, outcome: .accepted, at: .seconds(13))
        var outcomes: [State.Update] = []
        while case .send(let update) = state.next(now: .seconds(13)) {
            outcomes.append(update)
            state.completed(update, outcome: .accepted, at: .seconds(13))
        }
        #expect(
            outcomes == [
                .outcome(taskID: "a", .succeeded), .outcome(taskID: "b", .succeeded), .outcome(taskID: "c", .failed),
            ]
        )
    }

    @Test("a refused route or outcome is dropped, not repeated; finishing sends what is pending, then finishes")
    func refusalsAndFinishing() throws {
        var state = State(interval: .seconds(10), stops: Self.route)
        state.enroute()
        let refused = try #require(Self.sent(state.next(now: .zero)))
        state.completed(refused, outcome: .terminalFailure, at: .zero)
        #expect(state.next(now: .zero) == .wait(until: nil), "nothing to resend")
        state.completeStop()
        state.finish()
        let route = try #require(Self.sent(state.next(now: .zero)))
        state.completed(route, outcome: .accepted, at: .zero)
        let a = try #require(Self.sent(state.next(now: .zero)))
        state.completed(a, outcome: .terminalFailure, at: .zero)
        let b = try #require(Self.sent(state.next(now: .zero)))
        #expect(b == .outcome(taskID: "b", .succeeded))
        state.location(Self.location(1))
        state.completed(b, outcome: .accepted, at: .zero)
        #expect(state.next(now: .zero) == .finish, "a pending location does not hold up the finish")
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
