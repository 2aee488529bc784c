"""The one place the Python suites wait on the clock: for an event another process causes (a port accepting, a
line logged, a span received), asked again every `every` seconds. The guard only stops a hang: it is far above the
time any event takes (at least ten times), and when it fires the failure names what was awaited. No verdict
depends on how fast the machine is.
"""
import time

# Seconds; an event that takes this long is a hang, not a slow machine.
GUARD = 600.0


def wait_until(condition, what, every=0.1, guard=GUARD):
    """Calls `condition` until it returns something true, and returns that; raises AssertionError naming `what` if
    it has not after `guard` seconds. `condition` may raise (an assertion that a process is still alive) to stop."""
    deadline = time.monotonic() + guard
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {guard:.0f} s (a guard against a hang)")
        time.sleep(every)
