#!/usr/bin/env bash
# Several instances acting as one: two token servers and two Fleet Engine emulators on one PostgreSQL database,
# with nginx as the load balancer in front of each pair. The demo's apps (drivers reporting through
# VehicleReporter, consumers following their trips with TripTracker, tokens refreshed from 15-minute tokens on a
# 20× clock) run through nginx while one emulator is killed with kill -9; they must carry on through the other and
# every check must pass: every update answered 200 is in the database (each vehicle ends at its last reported
# location), every trip is followed to COMPLETE. Then: a lockout made through one token server holds on the other,
# and a key rotated through the CLI is published by both token servers within a few seconds.
#
# Usage: Tests/MultiInstance/run.sh FLEETAUTH_BINARY   (FLEETAUTH_TEST_POSTGRES_URL: a superuser's URL)
set -euo pipefail

BIN=$(realpath "${1:?usage: run.sh FLEETAUTH_BINARY}")
ADMIN_URL=${FLEETAUTH_TEST_POSTGRES_URL:?set FLEETAUTH_TEST_POSTGRES_URL to a PostgreSQL superuser URL}
command -v nginx >/dev/null || { echo "nginx is not installed" >&2; exit 1; }
WORK=$(mktemp -d /tmp/fleetauth-multi.XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
fail() {
    echo "multi-instance: FAILED: $*" >&2
    for log in "$WORK"/*.log; do echo "--- $log" >&2; tail -n 30 "$log" >&2; done
    exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Waits for events: each limit below only stops a hang (600 s), far above the time the event takes.
wait_for_line() { # LOG PATTERN
    for _ in $(seq 1 6000); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    fail "no \"$2\" in $1 within 600 s"
}

# A database of its own on the given server.
DB=fleetauth_multi_$(date +%s)_$$
BASE=${ADMIN_URL%%\?*}
psql "$BASE" -q -c "CREATE DATABASE $DB" >/dev/null
DB_URL="${BASE%/*}/$DB?sslmode=disable"
"$BIN" keys create-kek --out "$WORK/kek" >/dev/null
T1=$(free_port) T2=$(free_port) E1=$(free_port) E2=$(free_port) LT=$(free_port) LE=$(free_port)

# Two token servers; the first start creates the keys (sealed in the database) and the operator.
for i in 1 2; do
    port_var=T$i
    "$BIN" token-server --data "$WORK/ts$i" --port "${!port_var}" --database "$DB_URL" \
        --key-encryption-key-file "$WORK/kek" --bcrypt-cost 10 --token-lifetime 900 \
        --public-url "http://127.0.0.1:$LT" >"$WORK/token-server-$i.log" 2>&1 &
    PIDS+=($!)
    wait_for_line "$WORK/token-server-$i.log" "listening"
done
PASSWORD=$(sed -n 's/.*"operator" with password \([^ ]*\) (shown once).*/\1/p' "$WORK/token-server-1.log")
[ -n "$PASSWORD" ] || fail "the first token server printed no operator password"
grep -q "shown once" "$WORK/token-server-2.log" && fail "the second token server created another operator"

cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 1024; }
http {
    client_body_temp_path $WORK/nginx-body;
    proxy_temp_path $WORK/nginx-proxy;
    fastcgi_temp_path $WORK/nginx-fastcgi;
    uwsgi_temp_path $WORK/nginx-uwsgi;
    scgi_temp_path $WORK/nginx-scgi;
    log_format upstream '\$server_port \$request_method \$status \$upstream_addr \$upstream_status';
    access_log $WORK/nginx-access.log upstream;
    upstream emulators {
        server 127.0.0.1:$E1 max_fails=1 fail_timeout=60s;
        server 127.0.0.1:$E2 max_fails=1 fail_timeout=60s;
        keepalive 32;
        # Below the servers' idle timeout (30 s): a request nginx sends on a connection the server is closing at that
        # moment fails, and counts as the instance failing (max_fails=1 takes it out for 60 s).
        keepalive_timeout 20s;
    }
    upstream token_servers {
        server 127.0.0.1:$T1;
        server 127.0.0.1:$T2;
        keepalive 16;
        keepalive_timeout 20s;
    }
    server {
        listen 127.0.0.1:$LE;
        location / {
            proxy_pass http://emulators;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_connect_timeout 2s;
            # GET and PUT (UpdateVehicle, UpdateTrip) go to the other instance when one fails.
            proxy_next_upstream error timeout http_502;
        }
    }
    server {
        listen 127.0.0.1:$LT;
        location / {
            proxy_pass http://token_servers;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_next_upstream error timeout http_502;
        }
    }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK" >"$WORK/nginx.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 6000); do curl -sf "http://127.0.0.1:$LT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$LT/healthz" >/dev/null || fail "nginx does not answer"

# Two emulators trusting the token servers' JWK sets through nginx (started before them: they fetch at start).
for i in 1 2; do
    port_var=E$i
    "$BIN" emulator --data "$WORK/em$i" --port "${!port_var}" --grpc-port 0 --database "$DB_URL" \
        --trust "$WORK/ts1/emulator-trust.json" >"$WORK/emulator-$i.log" 2>&1 &
    PIDS+=($!)
    if [ "$i" = 1 ]; then EMULATOR_1=$!; fi
    wait_for_line "$WORK/emulator-$i.log" "listening on http"
done

# The apps through nginx; one emulator killed with kill -9 while they run.
FLEETAUTH_OPERATOR_PASSWORD=$PASSWORD "$BIN" demo --token-server "http://127.0.0.1:$LT" \
    --emulator "http://127.0.0.1:$LE" --drivers 8 --consumers 8 --duration 45 >"$WORK/demo.log" 2>&1 &
DEMO=$!
# The kill comes once emulator 1 has answered 200 requests through nginx (an event, not a time).
for _ in $(seq 1 6000); do
    [ "$(grep -c " 127.0.0.1:$E1 200" "$WORK/nginx-access.log" 2>/dev/null || true)" -ge 200 ] && break
    kill -0 "$DEMO" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$DEMO" 2>/dev/null || fail "the demo ended before the kill"
before=$(grep -c " 127.0.0.1:$E1 200" "$WORK/nginx-access.log" || true)
kill -9 "$EMULATOR_1"
echo "multi-instance: killed emulator 1 (pid $EMULATOR_1) after it answered $before requests with 200"
wait "$DEMO" || fail "the demo through nginx failed with emulator 1 killed"
cat "$WORK/demo.log"
survivor=$(grep -c " 127.0.0.1:$E2 200" "$WORK/nginx-access.log" || true)
[ "$before" -gt 0 ] || fail "emulator 1 answered nothing before the kill"
[ "$survivor" -gt 0 ] || fail "emulator 2 answered nothing"
tokens_1=$(grep -c "^$LT GET 200 127.0.0.1:$T1" "$WORK/nginx-access.log" || true)
tokens_2=$(grep -c "^$LT GET 200 127.0.0.1:$T2" "$WORK/nginx-access.log" || true)
[ "$tokens_1" -gt 0 ] && [ "$tokens_2" -gt 0 ] || fail "both token servers must have issued tokens ($tokens_1, $tokens_2)"
echo "multi-instance: emulator 2 answered $survivor requests with 200; tokens issued by each token server: $tokens_1, $tokens_2"

# A lockout made through one token server holds on the other.
for _ in 1 2 3 4 5; do
    curl -s -o /dev/null -X POST "http://127.0.0.1:$T1/v1/sessions" -H 'Content-Type: application/json' \
        -d '{"username":"operator","password":"wrong password"}'
done
status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$T2/v1/sessions" \
    -H 'Content-Type: application/json' -d "{\"username\":\"operator\",\"password\":\"$PASSWORD\"}")
[ "$status" = 429 ] || fail "a lockout made on token server 1 is answered $status on token server 2"
echo "multi-instance: a lockout made on token server 1 is 429 on token server 2"

# A rotation through the CLI reaches both token servers' JWK sets (each reads the keys again every second).
rotated=$("$BIN" keys rotate --family driver --data "$WORK/ts1" --database "$DB_URL" \
    --key-encryption-key-file "$WORK/kek" | sed -n 's/.*new signing key \([0-9a-f]*\) .*/\1/p')
[ -n "$rotated" ] || fail "keys rotate printed no key ID"
email=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([a["email"] for a in d["serviceAccounts"] if "driver" in a["email"]][0])' "$WORK/ts1/emulator-trust.json")
for port in "$T1" "$T2"; do
    seen=""
    for _ in $(seq 1 6000); do
        if curl -sf "http://127.0.0.1:$port/service_accounts/v1/metadata/jwk/$email" | grep -q "$rotated"; then
            seen=yes
            break
        fi
        sleep 0.1
    done
    [ -n "$seen" ] || fail "token server on $port does not publish the rotated key $rotated within 600 s"
done
echo "multi-instance: the rotated driver key $rotated is published by both token servers"
echo "multi-instance: passed"
