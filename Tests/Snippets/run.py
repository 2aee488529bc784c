"""Runs the shell blocks of the README and the DocC articles, so that a documented command cannot rot.

    python3 Tests/Snippets/run.py [FLEETAUTH_BIN]      (default: .build/debug/fleetauth)

Every ```sh (or bash, shell, console) block must follow a marker comment that says how it is checked; DocC and
GitHub render nothing for it:

    <!-- snippet: run [server="COMMAND"] [until="REGEX"] [expect='REGEX'] -->     (either quotes)
        Runs the block with bash (-e -u -o pipefail) in the article's working folder, which the article's blocks
        share in order. With `server`, that command is started there first and stopped after the block; the block
        runs once the server printed a line matching `until`. With `expect`, standard output must match it.
    <!-- snippet: background [server="COMMAND"] [until="REGEX"] -->
        Each command of the block is a server: it is started, must print a line matching `until` (default: the
        servers' "listening on" or "Press Ctrl-C to stop") and still be running, and is then stopped (SIGINT).
        With `server`, that command runs first, for as long as the block's commands do.
    <!-- snippet: synopsis -->
        Each `fleetauth SUBCOMMAND ...` line (continuation lines included) names a subcommand whose `--help`
        succeeds and mentions every `--option` the line shows.
    <!-- snippet: test by="SUITE" -->
        Run by the named test suite, which checks more than an exit status.
    <!-- snippet: skip reason="WHY" -->
        Not run, for the reason given (it needs Google, a production host, or a release build); listed in the
        report.

`swift run [-c release] fleetauth` in a block runs the binary given (its folder comes first on PATH), so the runner
never builds. Waits go through Tests/waiting.py: their limit only stops a hang, and the failure says what it waited for.
"""
import glob
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug", "fleetauth"))
HANG = 300
FENCE = re.compile(r"^```(sh|bash|shell|console)\s*$")
MARKER = re.compile(r"^<!-- snippet: (\w+)(.*?)-->\s*$")
SERVING = r"listening on|Press Ctrl-C to stop"


def documents():
    files = [os.path.join(ROOT, "README.md")]
    files += sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "Docs.docc", "**", "*.md"), recursive=True))
    return files


def blocks(path):
    """(line number, kind, attributes, text) of each shell block, or a failure for a block without a marker."""
    lines = open(path).read().split("\n")
    found = []
    index = 0
    while index < len(lines):
        if FENCE.match(lines[index]):
            start = index
            end = index + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            previous = start - 1
            while previous >= 0 and not lines[previous].strip():
                previous -= 1
            marker = MARKER.match(lines[previous]) if previous >= 0 else None
            if marker:
                attributes = {key: double or single for key, double, single
                              in re.findall(r"""(\w+)=(?:"([^"]*)"|'([^']*)')""", marker.group(2))}
                found.append((start + 1, marker.group(1), attributes, "\n".join(lines[start + 1:end])))
            else:
                found.append((start + 1, None, {}, ""))
            index = end + 1
        else:
            index += 1
    return found


def commands(text):
    """The block's commands: continuation lines joined, comment lines and trailing comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    result = []
    for line in joined.split("\n"):
        line = re.sub(r"\s{2,}#.*$", "", line).strip()
        if line and not line.startswith("#"):
            result.append(line)
    return result


def local(text):
    return re.sub(r"swift run (-c release )?fleetauth", "fleetauth", text)


def environment():
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(BIN) + os.pathsep + env.get("PATH", "")
    return env


class Server:
    """A command started in the background, its output in a file, stopped with SIGINT as Ctrl-C would.

    A command still running `HANG` seconds after SIGINT is killed, and the snippet fails: the documents tell the
    reader that Ctrl-C stops it."""

    def __init__(self, command, folder, until):
        self.command = command
        self.output = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
        self.process = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=folder, env=environment(),
                                        stdout=self.output, stderr=subprocess.STDOUT, start_new_session=True)

        def serving():
            text = self.text()
            if re.search(until, text):
                return True
            if self.process.poll() is not None:
                raise AssertionError(f"`{command}` exited ({self.process.returncode}) before printing /{until}/:\n"
                                     f"{text}")
            return False

        try:
            wait_until(serving, f"`{command}` printing a line matching /{until}/")
        except AssertionError:
            self.stop()
            raise

    def text(self):
        with open(self.output.name) as f:
            return f.read()

    def stop(self):
        try:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGINT)
                try:
                    self.process.wait(timeout=HANG)
                except subprocess.TimeoutExpired:
                    os.killpg(self.process.pid, signal.SIGKILL)
                    self.process.wait()
                    raise AssertionError(f"`{self.command}` was still running {HANG} s after SIGINT (Ctrl-C):\n"
                                         f"{self.text()}")
        finally:
            os.unlink(self.output.name)


def run(text, attributes, folder):
    server = Server(local(attributes["server"]), folder, attributes.get("until", SERVING)) \
        if "server" in attributes else None
    try:
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", local(text)], cwd=folder, env=environment(),
                                capture_output=True, text=True, timeout=HANG)
    finally:
        if server:
            server.stop()
    if result.returncode != 0:
        raise AssertionError(f"exit status {result.returncode}\n{result.stdout}{result.stderr}")
    if "expect" in attributes and not re.search(attributes["expect"], result.stdout):
        raise AssertionError(f"output does not match /{attributes['expect']}/:\n{result.stdout}")


def background(text, attributes, folder):
    first = Server(local(attributes["server"]), folder, SERVING) if "server" in attributes else None
    try:
        for command in commands(local(text)):
            server = Server(command, folder, attributes.get("until", SERVING))
            alive = server.process.poll() is None
            server.stop()
            if not alive:
                raise AssertionError(f"`{command}` stopped by itself")
    finally:
        if first:
            first.stop()


def synopsis(text, attributes, folder):
    lines = []
    for line in local(text).split("\n"):
        line = re.sub(r"\s{2,}#.*$", "", line)
        if line.startswith("fleetauth "):
            lines.append(line)
        elif lines and line.strip():
            lines[-1] += " " + line.strip()    # a continuation: more options of the same command
    for line in lines:
        words = shlex.split(re.sub(r"\s*\|\s*", "|", line.replace("…", "")))[1:]
        path = []
        for word in words:
            if word.startswith("-") or word.startswith("[") or not re.match(r"^[a-z][a-z0-9|-]*$", word):
                break
            path.append(word)
        # `users grant|revoke` and `bench jwt | signers | …` name several subcommands.
        alternatives = [[]]
        for word in path:
            alternatives = [prefix + [choice] for prefix in alternatives for choice in word.split("|") if choice]
        options = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line))
        for subcommand in alternatives:
            result = subprocess.run([BIN, *subcommand, "--help"], capture_output=True, text=True, timeout=HANG)
            if result.returncode != 0:
                raise AssertionError(f"`fleetauth {' '.join(subcommand)} --help` failed:\n{result.stderr}")
            missing = sorted(option for option in options if option not in result.stdout and option != "--help")
            if missing and len(alternatives) == 1:
                raise AssertionError(f"`fleetauth {' '.join(subcommand)}` has no {', '.join(missing)}")


def main():
    failures, report = [], []
    for path in documents():
        found = blocks(path)
        if not found:
            continue
        name = os.path.relpath(path, ROOT)
        with tempfile.TemporaryDirectory() as folder:
            for line, kind, attributes, text in found:
                where = f"{name}:{line}"
                try:
                    if kind is None:
                        raise AssertionError("no <!-- snippet: … --> marker before this block")
                    if kind == "run":
                        run(text, attributes, folder)
                    elif kind == "background":
                        background(text, attributes, folder)
                    elif kind == "synopsis":
                        synopsis(text, attributes, folder)
                    elif kind == "test":
                        assert attributes.get("by"), "a test marker names its suite: by=\"…\""
                        report.append(f"{where}: run by {attributes['by']}")
                        continue
                    elif kind == "skip":
                        assert attributes.get("reason"), "a skip marker gives its reason: reason=\"…\""
                        report.append(f"{where}: not run: {attributes['reason']}")
                        continue
                    else:
                        raise AssertionError(f"unknown snippet kind {kind}")
                    report.append(f"{where}: {kind}: passed")
                except (AssertionError, subprocess.TimeoutExpired) as error:
                    failures.append(f"{where}: {error}")
    print("\n".join(report))
    if failures:
        print("\n".join(["", "FAILED:"] + failures), file=sys.stderr)
        return 1
    print(f"{len(report)} shell blocks checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
