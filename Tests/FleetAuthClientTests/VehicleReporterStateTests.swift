import FleetAuthClient
import Testing

@Suite("Vehicle reporter decisions")
struct VehicleReporterStateTests {
    typealias State = VehicleReporterState

    static func location(_ n: Int) -> VehicleLocation {
        VehicleLocation(latitude: 37 + Double(n) / 1000, longitude: -122, time: nil)
    }

    /// The update `action` sends; records an issue when it is not a send.
    static func sent(_ action: State.Action, sourceLocation: SourceLocation = #_sourceLocation) -> State.Update? {
        guard case .send(let update) = action else {
            Issue.record("expected a send, got \(action)", sourceLocation: sourceLocation)
            return nil
        }
        return update
    }

    @Test("locations go out once per interval, newest first; nothing new means nothing sent")
    func cadence() throws {
        var state = State(interval: .seconds(10))
        #expect(state.next(now: .zero) == .wait(until: nil))
        state.location(Self.location(1))
        let first = try #require(Self.sent(state.next(now: .zero)))
        #expect(first.location == Self.location(1) && first.state == nil)
        state.location(Self.location(2))
        #expect(state.next(now: .seconds(1)) == .wait(until: nil), "one update in flight at a time")
        state.completed(first, outcome: .accepted, at: .seconds(1))
        state.location(Self.location(3))
        #expect(state.next(now: .seconds(4)) == .wait(until: .seconds(10)))
        let second = try #require(Self.sent(state.next(now: .seconds(10))))
        #expect(second.location == Self.location(3), "the newest location wins")
        state.completed(second, outcome: .accepted, at: .seconds(10))
        #expect(state.next(now: .seconds(30)) == .wait(until: nil))
    }

    @Test("a state change goes out at once with the newest location; offline holds locations")
    func stateChanges() throws {
        var state = State(interval: .seconds(10))
        state.location(Self.location(1))
        let first = try #require(Self.sent(state.next(now: .zero)))
        state.completed(first, outcome: .accepted, at: .zero)
        state.location(Self.location(2))
        state.setState(.online)
        let online = try #require(Self.sent(state.next(now: .seconds(1))))
        #expect(online.state == .online && online.location == Self.location(2))
        state.completed(online, outcome: .accepted, at: .seconds(1))
        state.setState(.offline)
        let offline = try #require(Self.sent(state.next(now: .seconds(2))))
        #expect(offline.state == .offline && offline.location == nil)
        state.completed(offline, outcome: .accepted, at: .seconds(2))
        state.location(Self.location(3))
        #expect(state.next(now: .seconds(60)) == .wait(until: nil), "no locations while offline")
        state.setState(.online)
        let back = try #require(Self.sent(state.next(now: .seconds(61))))
        #expect(back.state == .online && back.location == Self.location(3))
    }

    @Test("a transient failure keeps the update (a newer location replacing it) and retries after the interval")
    func transientFailure() throws {
        var state = State(interval: .seconds(5))
        state.setState(.online)
        state.location(Self.location(1))
        let first = try #require(Self.sent(state.next(now: .zero)))
        state.completed(first, outcome: .transientFailure, at: .seconds(1))
        #expect(state.next(now: .seconds(2)) == .wait(until: .seconds(5)), "no retry storm")
        state.location(Self.location(2))
        let retry = try #require(Self.sent(state.next(now: .seconds(5))))
        #expect(retry.state == .online && retry.location == Self.location(2))
        state.completed(retry, outcome: .accepted, at: .seconds(5))
        #expect(state.next(now: .seconds(20)) == .wait(until: nil))
    }

    @Test("a terminal failure drops that update; a refused state is not repeated until it changes")
    func terminalFailure() throws {
        var state = State(interval: .seconds(5))
        state.setState(.online)
        state.location(Self.location(1))
        let refused = try #require(Self.sent(state.next(now: .zero)))
        state.completed(refused, outcome: .terminalFailure, at: .zero)
        #expect(state.next(now: .seconds(100)) == .wait(until: nil))
        state.location(Self.location(2))
        let next = try #require(Self.sent(state.next(now: .seconds(100))))
        #expect(next.state == nil && next.location == Self.location(2))
    }

    @Test("finish sends one final OFFLINE update, retried while transient, then finishes")
    func finish() throws {
        var state = State(interval: .seconds(5))
        state.setState(.online)
        let online = try #require(Self.sent(state.next(now: .zero)))
        state.completed(online, outcome: .accepted, at: .zero)
        state.location(Self.location(1))
        state.finish()
        let final = try #require(Self.sent(state.next(now: .seconds(1))))
        #expect(final.state == .offline && final.location == Self.location(1))
        state.completed(final, outcome: .transientFailure, at: .seconds(1))
        #expect(state.next(now: .seconds(2)) == .wait(until: .seconds(6)))
        let again = try #require(Self.sent(state.next(now: .seconds(6))))
        state.completed(again, outcome: .accepted, at: .seconds(6))
        #expect(state.next(now: .seconds(6)) == .finish)
    }
}
