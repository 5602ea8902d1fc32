#!/usr/bin/python3
"""Keystroke latencies of the interactive screen, read from its --trace (issue 4).

    /usr/bin/python3 bench/latency.py --bin build/attnscope [--keys N]

Drives the real binary in a private tmux server (120x40, UTF-8) and presses keys the way a
user does, then reads the trace the program wrote (milliseconds on one monotonic clock):

  - T = d = 256, L = 8, softmax: g / ] / [ / r, each after the previous result is in:
    keystroke -> the first frame drawn after it (the status line shows the new settings), and
    keystroke -> the first frame with that job's spectra (the plots of the new settings);
  - the same screen, view keys only (v, o): keystroke -> frame, and how many forward passes
    they ran (none may: the width sweep is its own job, the model run is reused);
  - T = d = 2048, L = 5: keys pressed while the first layer computes (seconds long):
    keystroke -> frame, i.e. whether the status line follows keys under load.

Standard library only; prints a Markdown table.  Reports, never fails: exit 0 whatever the
numbers are.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

EVENT = re.compile(r"^(\d+\.\d+) (\S+)(.*)$")


class Tmux:
    def __init__(self, cols=120, rows=40):
        self.socket = "attnscope-latency-%d" % os.getpid()
        self.cols, self.rows = cols, rows

    def run(self, *args):
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args],
                              capture_output=True, text=True)

    def start(self, command):
        self.run("kill-server")
        self.run("new-session", "-d", "-x", str(self.cols), "-y", str(self.rows), command)

    def keys(self, *keys):
        self.run("send-keys", "-t", "0", *keys)

    def close(self):
        self.run("kill-server")


def events(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                m = EVENT.match(line.rstrip("\n"))
                if m:
                    out.append((float(m.group(1)), m.group(2), m.group(3).strip()))
    except FileNotFoundError:
        pass
    return out


def field(rest, name):
    m = re.search(r"\b%s=(\S+)" % name, rest)
    return m.group(1) if m else None


def wait_until(predicate, timeout=180.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def count(path, kind):
    return sum(1 for _, k, _ in events(path) if k == kind)


def latencies(path):
    """Per key event: ms to the next frame, and ms to the first frame showing its job's
    spectra (None for a key that started no job: its generation is the one before)."""
    evs = events(path)
    rows = []
    previous = next((field(r, "gen") for _, k, r in evs if k == "job-start"), None)
    for i, (t, kind, rest) in enumerate(evs):
        if kind != "key" or "help-closed" in rest or "unbound" in rest:
            continue
        gen = field(rest, "gen")
        job, previous = gen != previous, gen
        frame = plot = None
        for t2, k2, r2 in evs[i + 1:]:
            if k2 != "frame":
                continue
            if frame is None:
                frame = t2 - t
            if field(r2, "gen") == gen and field(r2, "shown") == gen and field(r2, "spectra") == "1":
                plot = t2 - t
                break
        rows.append((rest.split()[0], gen, frame, plot if job else None))
    return rows


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return "n/a", "n/a", "n/a", 0
    values.sort()
    p90 = values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
    return ("%.1f" % statistics.median(values), "%.1f" % p90, "%.1f" % values[-1], len(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--keys", type=int, default=12, help="setting keys at T = 256")
    args = ap.parse_args()
    if not shutil.which("tmux"):
        print("latency: tmux is not installed; nothing measured", file=sys.stderr)
        return 0
    binary = os.path.abspath(args.bin)
    tmp = tempfile.mkdtemp(prefix="attnscope-latency.")
    tm = Tmux()
    utf8 = "C.UTF-8"
    rows = []
    try:
        # 1. Setting keys at T = d = 256, each after the previous result is in.
        trace = os.path.join(tmp, "t256.trace")
        tm.start("env LANG=%s LC_ALL=%s '%s' -T 256 -d 256 -L 8 --trace '%s'"
                 % (utf8, utf8, binary, trace))
        wait_until(lambda: count(trace, "job-done") >= 1)
        cycle = ["g", "]", "[", "r"]
        for i in range(args.keys):
            done = count(trace, "job-done")
            tm.keys(cycle[i % len(cycle)])
            wait_until(lambda: count(trace, "job-done") > done)
            time.sleep(0.05)
        setting = latencies(trace)
        # 2. View keys on the same screen: no job may start.
        forward = sum(1 for _, k, r in events(trace) if k == "job-start" and "reuse=0" in r)
        marker = len(events(trace))
        for key in ["v", "v", "v", "v", "o", "o", "v", "v", "v", "v"]:
            tm.keys(key)
            time.sleep(0.25)
        view = latencies(trace)[len(setting):]
        # The width sweep (v's second view) is a job of its own; a forward pass of the model
        # is a job that does not reuse the result (reuse=0).
        view_forward = sum(1 for _, k, r in events(trace)
                           if k == "job-start" and "reuse=0" in r) - forward
        tm.keys("q")
        wait_until(lambda: any(k == "quit" for _, k, _ in events(trace)[marker:]), 10)

        # 3. Keys while a T = d = 2048 layer computes.
        trace2 = os.path.join(tmp, "t2048.trace")
        tm.start("env LANG=%s LC_ALL=%s '%s' -T 2048 -d 2048 -L 5 --trace '%s'"
                 % (utf8, utf8, binary, trace2))
        wait_until(lambda: count(trace2, "job-start") >= 1)
        time.sleep(0.5)
        for key in ["g", "g", "]", "[", "g", "g", "]", "[", "g", "g"]:
            tm.keys(key)
            time.sleep(0.2)
        time.sleep(0.3)
        loaded = latencies(trace2)
        tm.keys("q")
        wait_until(lambda: any(k == "quit" for _, k, _ in events(trace2)), 10)
    finally:
        tm.close()

    print("#### Interactive latency (bench/latency.py, --trace, 120x40 tmux, ms)")
    print()
    print("| scenario | keys | median | p90 | max |")
    print("|---|---:|---:|---:|---:|")
    for name, values in [
        ("T = d = 256, L = 8 softmax: setting key -> status frame", [r[2] for r in setting]),
        ("T = d = 256, L = 8 softmax: setting key -> plot with the new spectra",
         [r[3] for r in setting]),
        ("T = d = 256: view key (v, o) -> frame (forward passes run: %d)" % view_forward,
         [r[2] for r in view]),
        ("T = d = 2048, L = 5, during a layer: key -> status frame", [r[2] for r in loaded]),
    ]:
        median, p90, worst, n = summary(values)
        rows.append((name, n, median, p90, worst))
        print("| %s | %d | %s | %s | %s |" % (name, n, median, p90, worst))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
