#!/usr/bin/env python3
"""Re-runs two checks of the attack passes against a built `fleetauth` and prints what they show.

1. Login timing by bcrypt cost: how long a wrong password takes for an unknown username, for a user whose hash has
   the server's cost (12), and for one whose hash has an older cost (10). Equal times mean a username's existence
   cannot be read from the clock; a faster old-cost user is readable until it logs in once (its hash is then
   re-hashed at the server's cost).
2. The login throttle and the mint limit across two token servers on one PostgreSQL: how many wrong passwords,
   alternated between the two, come before the lockout (429), and how many tokens one session gets, alternating,
   before the mint limit answers 429.

Usage: python3 Scripts/security-recheck.py [path/to/fleetauth]   (default .build/debug/fleetauth)
Everything runs on loopback in temporary directories; PostgreSQL's binaries are needed for the second check.
"""
import glob
import json
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug", "fleetauth")
PASSWORD = "correct horse battery staple"


def call(method, url, body=None, bearer=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if bearer:
        request.add_header("Authorization", "Bearer " + bearer)
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read()
    return status, (json.loads(text) if text else {}), time.perf_counter() - started


def fleetauth(*arguments, stdin=None, env=None):
    result = subprocess.run([BIN, *arguments], input=stdin, capture_output=True, text=True, timeout=600,
                            env={**os.environ, **(env or {})})
    if result.returncode != 0:
        raise RuntimeError(f"fleetauth {' '.join(arguments[:2])} failed: {result.stderr}")
    return result.stdout


def start_token_server(directory, *arguments, env=None):
    log = open(os.path.join(directory, f"server-{secrets.token_hex(3)}.log"), "w+")
    process = subprocess.Popen([BIN, "token-server", "--port", "0", *arguments], cwd=directory, stdout=log,
                               stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    for _ in range(6000):  # the line, whenever it comes; this only guards against a hang
        with open(log.name) as f:
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", f.read())
        if found:
            return process, f"http://127.0.0.1:{found.group(1)}"
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.terminate()
    raise RuntimeError(open(log.name).read())


def timing():
    directory = tempfile.mkdtemp(prefix="fleetauth-recheck-")
    try:
        data = ["--data", os.path.join(directory, "data")]
        process, base = start_token_server(directory, *data, "--bcrypt-cost", "12")
        try:
            fleetauth("users", "add", "old", "--role", "driver", "--bcrypt-cost", "10", "--password-stdin", *data,
                       stdin=PASSWORD + "\n")
            fleetauth("users", "add", "new", "--role", "driver", "--bcrypt-cost", "12", "--password-stdin", *data,
                       stdin=PASSWORD + "\n")
            samples = {"unknown user": [], "user at cost 12": [], "user at cost 10": []}
            # 4 rounds: 12 failures from one address stay under its lockout (20); 4 per user under theirs (5).
            for _ in range(4):
                for label, name in [("unknown user", "ghost-" + secrets.token_hex(4)), ("user at cost 12", "new"),
                                    ("user at cost 10", "old")]:
                    status, _, seconds = call("POST", base + "/v1/sessions", {"username": name, "password": "wrong"})
                    assert status == 401, (label, status)
                    samples[label].append(seconds * 1000)
            print("1. wrong-password login time by kind of username (median of 4, ms):")
            for label, values in samples.items():
                print(f"   {label:17} {statistics.median(values):8.1f}   ({', '.join(f'{v:.0f}' for v in values)})")
        finally:
            process.terminate()
            process.wait(timeout=60)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def two_servers():
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not bins:
        print("2. skipped: PostgreSQL's binaries are not installed")
        return
    pg = bins[-1]
    directory = tempfile.mkdtemp(prefix="fleetauth-recheck-pg-")
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
    if as_postgres:
        shutil.chown(directory, "postgres")
    port = free_port()
    subprocess.run([*as_postgres, f"{pg}/initdb", "-D", f"{directory}/pgdata", "-U", "postgres", "--auth=trust"],
                   check=True, capture_output=True)
    subprocess.run([*as_postgres, f"{pg}/pg_ctl", "-D", f"{directory}/pgdata", "-l", f"{directory}/pg.log", "-w", "-o",
                    f"-p {port} -k {directory} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                   check=True, capture_output=True, stdin=subprocess.DEVNULL)
    servers = []
    try:
        url = f"postgres://postgres@127.0.0.1:{port}/postgres?sslmode=disable"
        work = os.path.join(directory, "work")
        os.mkdir(work)
        kek = os.path.join(work, "kek")
        fleetauth("keys", "create-kek", "--out", kek)
        common = ["--database", url, "--key-encryption-key-file", kek]
        servers = [start_token_server(work, *common, "--data", os.path.join(work, f"d{i}")) for i in range(2)]
        common += ["--data", os.path.join(work, "d0")]
        bases = [base for _, base in servers]
        for name in ("dana", "erin"):
            fleetauth("users", "add", name, "--role", "driver", "--bcrypt-cost", "10", "--password-stdin", *common,
                      stdin=PASSWORD + "\n")
            fleetauth("users", "grant", name, "--vehicle", "v1", *common)
        statuses = []
        for attempt in range(8):
            status, _, _ = call("POST", bases[attempt % 2] + "/v1/sessions", {"username": "dana", "password": "no"})
            statuses.append(status)
        print("2. wrong passwords for one user, alternating between two token servers on one PostgreSQL:")
        print(f"   statuses {statuses}: locked out after {statuses.index(429) if 429 in statuses else 'never'} "
              "failures (the policy allows 5 per user)")
        status, session, _ = call("POST", bases[0] + "/v1/sessions", {"username": "erin", "password": PASSWORD})
        assert status == 201, status
        minted = []
        for attempt in range(30):
            status, _, _ = call("GET", bases[attempt % 2] + "/token/driver/v1", bearer=session["sessionToken"])
            minted.append(status)
        granted = minted.index(429) if 429 in minted else len(minted)
        print(f"   tokens for one session and vehicle, alternating: {granted} issued before the first 429 "
              f"(burst 10 per instance), {minted.count(200)} of 30 in all")
    finally:
        for process, _ in servers:
            process.terminate()
            process.wait(timeout=60)
        subprocess.run([*as_postgres, f"{pg}/pg_ctl", "-D", f"{directory}/pgdata", "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    timing()
    two_servers()
