#!/usr/bin/env python3
"""Memory under a long mixed load: does a server's resident memory plateau, or grow without bound (a leak)?

    python3 Scripts/soak.py [--bin .build/release/fleetauth] [--rounds 10] [--seconds 60] [--idle 30]

It starts `fleetauth token-server` on SQLite in a temporary directory, adds a driver with grants on 200 vehicles,
and then, round after round, drives it from 8 threads with the token server's mixed traffic: logins (bcrypt),
driver tokens for each granted vehicle, the key set, logouts. After each round it prints the process's resident
memory (VmRSS) and its growth, and after the last an idle period's. A leak keeps growing by about the same amount
every round; a plateau's growth shrinks towards zero as caches (SQLite's page cache per connection, the allocator's
per-thread arenas, the verified-session cache) reach their size. Loopback only.
"""
import argparse
import http.client
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time

WORKERS = 8
VEHICLES = 200
KEYS_EMAIL = "fleetauth-driver@demo-project.iam.gserviceaccount.com"


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))


def call(port, method, path, body=None, token=None, connection=None):
    connection = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    response = connection.getresponse()
    return response.status, response.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=".build/release/fleetauth" if os.path.exists(".build/release/fleetauth")
                        else ".build/debug/fleetauth")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--idle", type=float, default=30)
    options = parser.parse_args()
    binary = os.path.abspath(options.bin)
    directory = tempfile.mkdtemp(prefix="soak-")
    data = os.path.join(directory, "fleetauth-data")
    log = open(os.path.join(directory, "server.log"), "w+")
    # The lowest bcrypt cost the server takes: logins are part of the mix, not all of it.
    server = subprocess.Popen([binary, "token-server", "--data", data, "--port", "0", "--bcrypt-cost", "10",
                               "--mint-rate", "0"], cwd=directory, stdout=log, stderr=subprocess.STDOUT)
    try:
        port = None
        deadline = time.monotonic() + 120
        while port is None:
            log.flush()
            match = re.search(r"Token server listening on http://127\.0\.0\.1:(\d+)", open(log.name).read())
            port = match and int(match.group(1))
            if port is None:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("soak: the token server did not start: " + open(log.name).read())
                time.sleep(0.1)
        subprocess.run([binary, "users", "add", "dana", "--role", "driver", "--data", data, "--password-stdin",
                        "--bcrypt-cost", "10"], input="soak-password-1\n", text=True, check=True,
                       capture_output=True)
        for index in range(VEHICLES):
            subprocess.run([binary, "users", "grant", "dana", "--vehicle", f"v{index}", "--data", data], check=True,
                           capture_output=True)

        stopping = threading.Event()
        counts = {}
        lock = threading.Lock()

        def worker(number):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            sequence = 0
            while not stopping.is_set():
                sequence += 1
                try:
                    status, body = call(port, "POST", "/v1/sessions",
                                        {"username": "dana", "password": "soak-password-1"}, connection=connection)
                    session = json.loads(body)["sessionToken"] if status == 201 else None
                    for offset in range(20):
                        vehicle = (number * 25 + sequence + offset) % VEHICLES
                        status, _ = call(port, "GET", f"/token/driver/v{vehicle}", token=session,
                                         connection=connection)
                        with lock:
                            counts[status] = counts.get(status, 0) + 1
                    call(port, "GET", "/service_accounts/v1/metadata/jwk/" + KEYS_EMAIL, connection=connection)
                    call(port, "DELETE", "/v1/sessions/current", token=session, connection=connection)
                except (OSError, http.client.HTTPException, ValueError):
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

        start = rss_kib(server.pid)
        print(f"soak of {binary}: token server pid {server.pid}, VmRSS at start {start / 1024:.1f} MiB")
        previous = start
        for round_number in range(1, options.rounds + 1):
            stopping.clear()
            threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(WORKERS)]
            for thread in threads:
                thread.start()
            time.sleep(options.seconds)
            stopping.set()
            for thread in threads:
                thread.join(timeout=120)
            now = rss_kib(server.pid)
            with lock:
                answered = dict(counts)
                counts.clear()
            print(f"round {round_number:2}: VmRSS {now / 1024:7.1f} MiB  growth {(now - previous) / 1024:+6.1f} MiB  "
                  f"token answers {answered}")
            previous = now
        time.sleep(options.idle)
        idle = rss_kib(server.pid)
        print(f"idle {options.idle:.0f} s: VmRSS {idle / 1024:7.1f} MiB  growth {(idle - previous) / 1024:+6.1f} MiB")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        log.close()


if __name__ == "__main__":
    main()
