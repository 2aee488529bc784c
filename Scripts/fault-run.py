#!/usr/bin/env python3
"""A fault run an operator can repeat: what each fault does to the emulator's clients, and how fast it recovers.

    python3 Scripts/fault-run.py [--bin .build/release/fleetauth] [--faults pg-fast,pg-immediate,pg-stop,pg-lock,disk-full,db-deleted,sigterm]

For each fault it starts what it needs on loopback (a throwaway PostgreSQL cluster, `fleetauth emulator` in a
temporary directory), keeps 8 writers updating vehicle locations over keep-alive connections, injects the fault, and
prints, per fault: the answers clients got while it lasted (by status), the longest wait for one, requests that got
no answer at all, the time from the fault's end to the first successful write, and whether every write answered 200
is in the database afterwards.

    pg-fast       pg_ctl restart -m fast (connections closed under in-flight statements)
    pg-immediate  pg_ctl restart -m immediate (a crash: no shutdown checkpoint)
    pg-stop       PostgreSQL stopped for --outage seconds (default 30), then started
    pg-lock       the vehicles table locked (LOCK TABLE ... ACCESS EXCLUSIVE) for 15 s under creating writers: a create
                  given up on must say its outcome is unknown (504), and one answered 503 must not be applied
    disk-full     SQLite on a small tmpfs filled to the last byte, then emptied (needs root to mount; skipped otherwise)
    db-deleted    SQLite's database and its -wal/-shm removed under the writers: no write acknowledged afterwards,
                  /readyz 503, one log line
    sigterm       SIGTERM under load: /readyz turns 503 during the drain, requests are answered, exit status 0

PostgreSQL comes from /usr/lib/postgresql/*/bin (Debian's postgresql package); run as root it runs as the postgres
user. Nothing here talks to anything but 127.0.0.1. Exit status: 0 when no request went unanswered and no
acknowledged write was lost, 1 otherwise.
"""
import argparse
import glob
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

WRITERS = 8
CLIENT_TIMEOUT = 120.0  # seconds a writer waits for one answer before it counts the request as unanswered


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, what, guard=120.0, every=0.05):
    deadline = time.monotonic() + guard
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"fault-run: {what} did not happen within {guard:.0f} s")
        time.sleep(every)


class Postgres:
    """A throwaway cluster: initdb in a temporary directory, a free loopback port, password authentication."""

    def __init__(self):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        if not bins:
            raise SystemExit("fault-run: PostgreSQL is not installed (apt-get install postgresql)")
        self.bin = bins[-1]
        self.dir = tempfile.mkdtemp(prefix="fault-run-pg-")
        self.port = free_port()
        self.as_user = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.run("initdb", "-D", f"{self.dir}/data", "-U", "postgres", "--auth-local=trust",
                 "--auth-host=scram-sha-256")
        self.start()
        self.run("psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres", "-q", "-c",
                 "ALTER USER postgres PASSWORD 'fault-run'", "postgres")
        self.url = f"postgres://postgres:fault-run@127.0.0.1:{self.port}/postgres?sslmode=disable"

    def run(self, tool, *arguments):
        subprocess.run(self.as_user + [f"{self.bin}/{tool}", *arguments], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)

    def psql(self, sql):
        """A psql session running `sql` in the background (the caller waits for it)."""
        return subprocess.Popen(self.as_user + [f"{self.bin}/psql", "-h", self.dir, "-p", str(self.port), "-U",
                                                "postgres", "-q", "-c", sql, "postgres"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def ctl(self, *arguments):
        self.run("pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/server.log", "-w", *arguments)

    def start(self):
        self.ctl("-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1", "start")

    def close(self):
        try:
            self.ctl("-m", "immediate", "stop")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


class Emulator:
    def __init__(self, binary, arguments, directory):
        self.directory = directory
        self.log = open(os.path.join(directory, "emulator.log"), "w+")
        self.process = subprocess.Popen([binary, "emulator", "--port", "0", "--grpc-port", "0", *arguments],
                                        cwd=directory, stdout=self.log, stderr=subprocess.STDOUT)

        def port():
            if self.process.poll() is not None:
                raise SystemExit(f"fault-run: the emulator ended: {self.text()}")
            match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", self.text())
            return match and int(match.group(1))

        self.port = wait_for(port, "the emulator listening")
        key = os.path.join(directory, "fleet-engine-data/keys/service-super-user.json")
        self.token = subprocess.run([binary, "token", "mint", "--key", key, "--type", "server"], check=True,
                                    capture_output=True, text=True).stdout.strip()

    def text(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def request(self, method, path, body=None, connection=None, timeout=CLIENT_TIMEOUT):
        connection = connection or http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        return response.status, response.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


VEHICLES = "/v1/providers/demo-project/vehicles"
BODY = {"vehicleState": "ONLINE", "supportedTripTypes": ["EXCLUSIVE"], "maximumCapacity": 4,
        "vehicleType": {"category": "AUTO"}}


class Writers:
    """WRITERS threads, each updating its own vehicle's location over one keep-alive connection: the latitude
    carries a sequence number, so the last one acknowledged can be checked against the database afterwards. With
    `creating`, each write creates a new vehicle instead (the database grows), and the last one acknowledged must
    exist afterwards."""

    def __init__(self, emulator, creating=False):
        self.emulator = emulator
        self.creating = creating
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.events = []  # (time sent, time answered or None, status or None)
        self.acknowledged = {}
        self.created = []  # with `creating`: (vehicle ID, status) of every create
        for index in range(WRITERS):
            status, _ = emulator.request("POST", f"{VEHICLES}?vehicleId=fault{index}", BODY)
            if status not in (200, 409):
                raise SystemExit(f"fault-run: cannot create vehicle fault{index}: {status}")
        self.threads = [threading.Thread(target=self.write, args=(index,), daemon=True) for index in range(WRITERS)]
        for thread in self.threads:
            thread.start()

    def write(self, index):
        connection = None
        sequence = 0
        while not self.stopping.is_set():
            sequence += 1
            body = {"lastLocation": {"location": {"latitude": sequence / 1e6, "longitude": index / 1e3}}}
            sent = time.monotonic()
            try:
                connection = connection or http.client.HTTPConnection("127.0.0.1", self.emulator.port,
                                                                      timeout=CLIENT_TIMEOUT)
                if self.creating:
                    status, _ = self.emulator.request(
                        "POST", f"{VEHICLES}?vehicleId=fault{index}-{sequence}", dict(BODY, **body), connection)
                else:
                    status, _ = self.emulator.request(
                        "PUT", f"{VEHICLES}/fault{index}?updateMask=last_location", body, connection)
            except socket.timeout:
                status = None  # no answer
                connection = None
            except (ConnectionError, http.client.HTTPException, OSError):
                status = "closed"
                connection = None
            with self.lock:
                self.events.append((sent, time.monotonic(), status))
                if self.creating:
                    self.created.append((f"fault{index}-{sequence}", status))
                if status == 200:
                    self.acknowledged[index] = sequence
            if status != 200:
                time.sleep(0.05)

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=CLIENT_TIMEOUT + 5)

    def between(self, start, end):
        with self.lock:
            return [event for event in self.events if start <= event[0] <= end or (event[0] < start < event[1])]

    def first_success_after(self, moment):
        with self.lock:
            times = [answered for sent, answered, status in self.events if status == 200 and answered >= moment]
        return min(times) - moment if times else None

    def lost(self):
        """Vehicles whose stored latitude is older than their last acknowledged write."""
        lost = []
        for index, sequence in self.acknowledged.items():
            vehicle = f"fault{index}-{sequence}" if self.creating else f"fault{index}"
            status, body = self.emulator.request("GET", f"{VEHICLES}/{vehicle}")
            stored = json.loads(body).get("lastLocation", {}).get("location", {}).get("latitude", 0) if status == 200 \
                else None
            if stored is None or round(stored * 1e6) < sequence:
                lost.append(f"fault{index}: acknowledged {sequence}, stored {stored}")
        return lost


def report(name, writers, start, end, recovered_from, extra=""):
    events = writers.between(start, end + 1)
    counts = {}
    for _, _, status in events:
        counts[status] = counts.get(status, 0) + 1
    waits = [answered - sent for sent, answered, status in events if answered]
    unanswered = counts.get(None, 0)
    recovery = writers.first_success_after(recovered_from)
    lost = writers.lost()
    statuses = ", ".join(f"{status}: {count}" for status, count in sorted(counts.items(), key=lambda item: str(item)))
    print(f"{name:13} answers [{statuses}]  longest wait {max(waits, default=0):.2f} s  unanswered {unanswered}  "
          + (f"first 200 {recovery:.2f} s after the fault ended" if recovery is not None else "no 200 after it")
          + f"  lost acknowledged writes {len(lost)}" + (f"  {extra}" if extra else ""))
    for line in lost:
        print(f"    lost: {line}")
    return unanswered == 0 and not lost


def postgres_fault(binary, name, inject):
    postgres = Postgres()
    directory = tempfile.mkdtemp(prefix="fault-run-")
    emulator = None
    try:
        emulator = Emulator(binary, ["--database", postgres.url], directory)
        writers = Writers(emulator)
        time.sleep(3)
        start = time.monotonic()
        inject(postgres)
        end = time.monotonic()
        time.sleep(10)
        writers.stop()
        return report(name, writers, start, end, end)
    finally:
        if emulator:
            emulator.stop()
        postgres.close()
        shutil.rmtree(directory, ignore_errors=True)


def pg_lock(binary):
    """Finding 10 of issue 61: a create given up on was answered 503 and applied later."""
    postgres = Postgres()
    directory = tempfile.mkdtemp(prefix="fault-run-")
    emulator = None
    try:
        emulator = Emulator(binary, ["--database", postgres.url, "--database-timeout", "5"], directory)
        writers = Writers(emulator, creating=True)
        time.sleep(2)
        start = time.monotonic()
        lock = postgres.psql("BEGIN; LOCK TABLE emulator_vehicles IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(15); COMMIT")
        lock.wait(timeout=120)
        end = time.monotonic()
        time.sleep(8)
        writers.stop()
        with writers.lock:
            created = list(writers.created)
        applied = {status: 0 for status in (503, 504)}
        asked = {status: 0 for status in (503, 504)}
        for vehicle, status in created:
            if status in asked:
                asked[status] += 1
                applied[status] += emulator.request("GET", f"{VEHICLES}/{vehicle}")[0] == 200
        ok = report("pg-lock", writers, start, end, end,
                    f"creates answered 504: {asked[504]} ({applied[504]} applied: 'may still be applied'); "
                    f"answered 503: {asked[503]} ({applied[503]} applied, must be 0)")
        return ok and applied[503] == 0
    finally:
        if emulator:
            emulator.stop()
        postgres.close()
        shutil.rmtree(directory, ignore_errors=True)


def db_deleted(binary):
    """Finding 9 of issue 61: writes acknowledged after the database file was deleted were lost."""
    directory = tempfile.mkdtemp(prefix="fault-run-")
    emulator = Emulator(binary, [], directory)
    try:
        writers = Writers(emulator)
        time.sleep(2)
        database = os.path.join(directory, "fleet-engine-data", "fleet-engine.sqlite")
        start = time.monotonic()
        for path in (database, database + "-wal", database + "-shm"):
            os.remove(path)
        deleted = time.monotonic()
        time.sleep(5)
        ready, _ = emulator.request("GET", "/readyz")
        writers.stop()
        # Acknowledged after the files were gone (a write in flight as they went may still have been answered).
        after = [event for event in writers.between(deleted, time.monotonic()) if event[0] > deleted + 0.1]
        acknowledged = sum(1 for event in after if event[2] == 200)
        logged = [line for line in emulator.text().splitlines() if "was deleted" in line]
        counts = {}
        for _, _, status in after:
            counts[status] = counts.get(status, 0) + 1
        statuses = ", ".join(f"{status}: {count}" for status, count in sorted(counts.items(), key=str))
        print(f"db-deleted    answers after the delete [{statuses}]  acknowledged {acknowledged} (must be 0)  "
              f"/readyz {ready}  log lines about it {len(logged)}")
        return acknowledged == 0 and ready == 503 and len(logged) == 1
    finally:
        emulator.stop()
        shutil.rmtree(directory, ignore_errors=True)


def disk_full(binary):
    if os.geteuid() != 0:
        print("disk-full     skipped: mounting a small file system needs root")
        return True
    mount = tempfile.mkdtemp(prefix="fault-run-disk-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", mount], check=True)
    emulator = None
    try:
        emulator = Emulator(binary, ["--data", os.path.join(mount, "fleet-engine-data")], mount)
        # New vehicles: updates in place can reuse the pages SQLite already has, so only growth meets a full disk.
        writers = Writers(emulator, creating=True)
        time.sleep(2)
        start = time.monotonic()
        filler = os.path.join(mount, "filler")
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        time.sleep(5)
        ready, _ = emulator.request("GET", "/readyz")
        logged = [line for line in emulator.text().splitlines() if "cannot be written" in line]
        print("\n".join("    log: " + line for line in logged))
        logged = len(logged)
        os.remove(filler)
        end = time.monotonic()
        wait_for(lambda: emulator.request("GET", "/readyz")[0] == 200, "/readyz 200 once there is room again")
        time.sleep(3)
        writers.stop()
        return report("disk-full", writers, start, end, end,
                      f"/readyz while full: {ready}; log lines about it: {logged}")
    finally:
        if emulator:
            emulator.stop()
        subprocess.run(["umount", mount], check=False)
        shutil.rmtree(mount, ignore_errors=True)


def sigterm(binary):
    directory = tempfile.mkdtemp(prefix="fault-run-")
    emulator = Emulator(binary, ["--drain-period", "2"], directory)
    restarted = None
    try:
        writers = Writers(emulator)
        time.sleep(2)
        start = time.monotonic()
        emulator.process.send_signal(signal.SIGTERM)
        not_ready = wait_for(lambda: emulator.request("GET", "/readyz")[0] == 503, "/readyz 503 after SIGTERM",
                             guard=10)
        status = emulator.process.wait(timeout=60)
        end = time.monotonic()
        writers.stop()
        during = [event for event in writers.between(start, start + 1.5)]
        answered = sum(1 for event in during if event[2] == 200)
        # Started again on the same data: every write answered 200 must be there.
        restarted = writers.emulator = Emulator(binary, [], directory)
        return report("sigterm", writers, start, start + 1.5, start,
                      f"/readyz 503 during the drain: {not_ready}; writes answered 200 in its first 1.5 s: "
                      f"{answered}; exit status {status} after {end - start:.2f} s") and status == 0
    finally:
        emulator.stop()
        if restarted:
            restarted.stop()
        shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=".build/release/fleetauth" if os.path.exists(".build/release/fleetauth")
                        else ".build/debug/fleetauth")
    parser.add_argument("--faults", default="pg-fast,pg-immediate,pg-stop,pg-lock,disk-full,db-deleted,sigterm")
    parser.add_argument("--outage", type=float, default=30.0, help="seconds PostgreSQL stays stopped (pg-stop)")
    options = parser.parse_args()
    binary = os.path.abspath(options.bin)
    faults = {
        "pg-fast": lambda: postgres_fault(binary, "pg-fast", lambda pg: pg.ctl("-m", "fast", "restart")),
        "pg-immediate": lambda: postgres_fault(binary, "pg-immediate", lambda pg: pg.ctl("-m", "immediate", "restart")),
        "pg-stop": lambda: postgres_fault(binary, "pg-stop", lambda pg: (pg.ctl("-m", "fast", "stop"),
                                                                         time.sleep(options.outage), pg.start())),
        "pg-lock": lambda: pg_lock(binary),
        "disk-full": lambda: disk_full(binary),
        "db-deleted": lambda: db_deleted(binary),
        "sigterm": lambda: sigterm(binary),
    }
    print(f"fault run of {binary}: {WRITERS} writers, keep-alive HTTP/1.1, each answer awaited up to "
          f"{CLIENT_TIMEOUT:.0f} s")
    passed = True
    for name in options.faults.split(","):
        if name not in faults:
            raise SystemExit(f"fault-run: no fault {name} (choose from {', '.join(faults)})")
        passed = faults[name]() and passed
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
