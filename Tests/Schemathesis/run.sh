#!/usr/bin/env bash
# Schemathesis against the emulator's served OpenAPI description, once per identity (server, driver, consumer, and
# a delivery super user for the Deliveries API):
# no response may be a server error, and every secured operation must refuse missing or invalid credentials
# (the ignored_auth check). Exits non-zero on any failure.
set -euo pipefail
BIN="$(cd "$(dirname "${FLEETAUTH_BIN:-.build/debug/fleetauth}")" && pwd)/$(basename "${FLEETAUTH_BIN:-.build/debug/fleetauth}")"
EXAMPLES="${SCHEMATHESIS_EXAMPLES:-25}"
work="$(mktemp -d)"
cd "$work"

"$BIN" emulator --in-memory --port 0 --grpc-port 0 > emulator.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
# Waits for the event; the limit (600 s) only stops a hang, and a process that exits ends the wait at once.
for _ in $(seq 1 3000); do
    grep -q "listening on http" emulator.log && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
done
port="$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' emulator.log)"
[ -n "$port" ] || { cat emulator.log; echo "the emulator did not start"; exit 1; }
base="http://127.0.0.1:$port"
keys=fleet-engine-data/keys

server="$("$BIN" token mint --key "$keys/service-super-user.json" --type server)"
driver="$("$BIN" token mint --key "$keys/driver-sdk-user.json" --type driver --vehicle v1)"
consumer="$("$BIN" token mint --key "$keys/consumer-sdk-user.json" --type consumer --trip t1)"
delivery="$("$BIN" token mint --key "$keys/delivery-super-user.json" --type delivery_server)"

# Seed a vehicle and a trip assigned to it, so identities have something of their own to read.
curl -sf -X POST "$base/v1/providers/demo-project/vehicles?vehicleId=v1" -H "Authorization: Bearer $server" \
  -d '{"vehicleState":"ONLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}' > /dev/null
curl -sf -X POST "$base/v1/providers/demo-project/trips?tripId=t1" -H "Authorization: Bearer $server" \
  -d '{"tripType":"EXCLUSIVE","pickupPoint":{"point":{"latitude":37.4,"longitude":-122.1}},"vehicleId":"v1"}' > /dev/null

cat > schemathesis.toml <<'TOML'
[parameters]
"path.provider" = "demo-project"
TOML

# Two identities at a time (schemathesis is mostly Python's own CPU; on 2 cores a pair takes little longer than one).
# The super users (server, delivery) get every phase, the coverage phase's boundary and negative inputs included
# (about 15,000 requests each). The driver and the consumer get the examples, fuzzing and stateful phases on every
# operation: what changes with them is which calls they may make, while the emulator validates a request the same
# way whoever sends it, so the coverage phase would repeat the super users' requests (and take most of the time).
run() {
  local identity="$1" phases="$2"
  st run "$base/openapi.yaml" --url "$base" -H "Authorization: Bearer ${!identity}" --phases "$phases" \
    --checks not_a_server_error,ignored_auth --max-examples "$EXAMPLES" --seed 42 --request-timeout 20 --no-color \
    > "st-$identity.log" 2>&1
}
phases_of() {
  case "$1" in
    server|delivery) echo examples,coverage,fuzzing,stateful ;;
    *) echo examples,fuzzing,stateful ;;
  esac
}
failed=()
for pair in "server delivery" "driver consumer"; do
  pids=()
  for identity in $pair; do run "$identity" "$(phases_of "$identity")" & pids+=("$!"); done
  index=0
  for identity in $pair; do
    status=0
    wait "${pids[$index]}" || status=$?
    index=$((index + 1))
    echo "== schemathesis as $identity"
    tail -n 12 "st-$identity.log"
    [ "$status" -eq 0 ] || failed+=("$identity")
  done
done
if [ ${#failed[@]} -gt 0 ]; then echo "schemathesis found failures as: ${failed[*]}"; exit 1; fi
echo "schemathesis: every identity passed"
