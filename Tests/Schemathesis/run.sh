#!/usr/bin/env bash
# Schemathesis against the emulator's served OpenAPI description, as each identity (server, driver, consumer, and
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

# Every operation of both APIs, as each identity, in the examples, fuzzing and stateful phases: what changes with the
# identity is which calls it may make (and the ignored_auth check). The coverage phase's boundary and negative inputs
# (thousands of requests per API) run once per API, as the super user of that API: the emulator validates a request
# the same way whoever sends it (the decoding of the body and the query string comes first, for every identity), and
# refuses with 403 whatever an identity without the right sends past that, so running them as every identity would
# only repeat the same answers.
deliveries='/(deliveryVehicles|tasks|taskTrackingInfo)'
jobs=(
  "on-demand-coverage server coverage --exclude-path-regex $deliveries"
  "deliveries-coverage delivery coverage --include-path-regex $deliveries"
  "server server examples,fuzzing,stateful"
  "delivery delivery examples,fuzzing,stateful"
  "driver driver examples,fuzzing,stateful"
  "consumer consumer examples,fuzzing,stateful"
)
run() {
  local name="$1" identity="$2" phases="$3"
  shift 3
  st run "$base/openapi.yaml" --url "$base" -H "Authorization: Bearer ${!identity}" --phases "$phases" "$@" \
    --checks not_a_server_error,ignored_auth --max-examples "$EXAMPLES" --seed 42 --request-timeout 20 --no-color \
    > "st-$name.log" 2>&1
}
# Two runs at a time (schemathesis is mostly Python's own CPU, one core each), the longest first.
declare -A names=()
failed=()
collect() {
  local finished status=0
  wait -n -p finished "${!names[@]}" || status=$?
  echo "== schemathesis: ${names[$finished]} (exit $status)"
  tail -n 12 "st-${names[$finished]}.log"
  [ "$status" -eq 0 ] || failed+=("${names[$finished]}")
  unset "names[$finished]"
}
for job in "${jobs[@]}"; do
  [ "${#names[@]}" -lt 2 ] || collect
  # shellcheck disable=SC2086 # the job's words are its arguments
  run $job &
  names[$!]="${job%% *}"
done
while [ "${#names[@]}" -gt 0 ]; do collect; done
if [ ${#failed[@]} -gt 0 ]; then echo "schemathesis found failures in: ${failed[*]}"; exit 1; fi
echo "schemathesis: every run passed"
