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
    keystroke -> frame, i.e. whether the status line follows keys under load;
  - T = d = 1024, L = 8, softmax (--large): ] -> the frame with the new layer's spectra,
    L -> the frame with the new layer's point on the curve, g -> the frame with the
    gap-toggled spectra, each after the previous result is in;
  - T = d = 4096, L = 1 (--large): a key that supersedes the running job, pressed during
    the job's first steps (3 s in: the input's QR, products) and during the shown layer's
    eigensolvers (once a worker process has used 6 s of CPU: only dgeev and dgesdd take
    that long at this size): keystroke -> the next job's job-start, keystroke -> the superseded
    call's process gone, and the CPU the program and its helper's processes used between
    the keystroke and the next job-start.

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
        self.base = "attnscope-latency-%d" % os.getpid()
        self.sessions = 0
        self.socket = self.base
        self.cols, self.rows = cols, rows

    def run(self, *args):
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args],
                              capture_output=True, text=True)

    def start(self, command):
        # A new server each time: one still shutting down cannot take the new session.
        self.run("kill-server")
        self.sessions += 1
        self.socket = "%s-%d" % (self.base, self.sessions)
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


def cpu_seconds(pid):
    """utime + stime of a process, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


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


def key_to(path, key, predicate):
    """ms from each press of `key` to the first event after it that predicate(kind, rest,
    generation) accepts."""
    evs = events(path)
    out = []
    for i, (t, kind, rest) in enumerate(evs):
        if kind != "key" or rest.split()[0] != key:
            continue
        gen = field(rest, "gen")
        for t2, k2, r2 in evs[i + 1:]:
            if predicate(k2, r2, gen):
                out.append(t2 - t)
                break
    return out


def spectra_frame(kind, rest, gen):
    return (kind == "frame" and field(rest, "gen") == gen and field(rest, "shown") == gen
            and field(rest, "spectra") == "1")


def point_applied(kind, rest, gen):
    """A snapshot of the job with every layer of its depth: its curve has the new point."""
    if kind != "apply" or field(rest, "gen") != gen:
        return False
    done, depth = (field(rest, "layers") or "0/1").split("/")
    return done == depth


def large_keys(tm, tmp, binary, utf8, presses):
    """] L g at T = d = 1024, L = 8, each after the previous job is done."""
    trace = os.path.join(tmp, "t1024.trace")
    tm.start("env LANG=%s LC_ALL=%s '%s' -T 1024 -d 1024 -L 8 --trace '%s'"
             % (utf8, utf8, binary, trace))
    wait_until(lambda: count(trace, "job-done") >= 1, 600)
    for i in range(presses):
        for key in ["]", "L", "g"]:
            done = count(trace, "job-done")
            tm.keys(key)
            wait_until(lambda: count(trace, "job-done") > done, 600)
            time.sleep(0.2)
    tm.keys("q")
    wait_until(lambda: any(k == "quit" for _, k, _ in events(trace)), 30)
    return (key_to(trace, "]", spectra_frame), key_to(trace, "L", point_applied),
            key_to(trace, "g", spectra_frame))


def pane_pid(tm):
    pid = []
    wait_until(lambda: pid.append(tm.run("display-message", "-p", "-t", "0",
                                         "#{pane_pid}").stdout.strip()) or pid[-1].isdigit(), 10)
    return int(pid[-1]) if pid and pid[-1].isdigit() else None


def cancel_once(tm, tmp, binary, utf8, name, in_call):
    """One superseded job at T = d = 4096: ms key -> next job-start, ms key -> the long
    call's worker gone (None when none ran), and the CPU seconds the program itself (all its
    threads) used meanwhile.  A killed worker's CPU cannot be read after its death: its share
    is bounded by key -> gone."""
    trace = os.path.join(tmp, name + ".trace")
    tm.start("exec env LANG=%s LC_ALL=%s '%s' -T 4096 -d 4096 -L 1 --trace '%s'"
             % (utf8, utf8, binary, trace))
    wait_until(lambda: count(trace, "job-start") >= 1, 60)
    program = pane_pid(tm)
    if program is None:
        print("latency: the T = 4096 screen did not start", file=sys.stderr)
        return None, None, float("nan")
    worker = None
    if in_call:
        def long_call():
            nonlocal worker
            for helper in children(program):
                for pid in children(helper):
                    if (cpu_seconds(pid) or 0) >= 6.0:
                        worker = pid
                        return True
            return False
        wait_until(long_call, 900)
    else:
        time.sleep(3.0)
    cpu_before = cpu_seconds(program) or 0.0
    pressed = time.monotonic()
    tm.keys("r")
    gone = None
    def next_job():
        nonlocal gone
        if worker and gone is None and cpu_seconds(worker) is None:
            gone = 1e3 * (time.monotonic() - pressed)
        return count(trace, "job-start") >= 2
    wait_until(next_job, 900)
    cpu = (cpu_seconds(program) or float("nan")) - cpu_before
    if worker and gone is None:
        wait_until(lambda: cpu_seconds(worker) is None, 60)
        gone = 1e3 * (time.monotonic() - pressed)
    key = next_job_start = None
    for t, kind, rest in events(trace):
        if kind == "key" and key is None and rest.startswith("r "):
            key = t
        if kind == "job-start" and field(rest, "gen") == "2":
            next_job_start = t
    tm.keys("q")
    wait_until(lambda: any(k == "quit" for _, k, _ in events(trace)), 30)
    latency = next_job_start - key if key is not None and next_job_start is not None else None
    return latency, gone, cpu


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
    ap.add_argument("--large", type=int, default=0, metavar="N",
                    help="also N rounds of ] L g at T = d = 1024 and N cancels of each kind "
                         "at T = d = 4096 (minutes; needs ~3 GB)")
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

        # 4. and 5. The large sizes of issue 12.
        large = cancels = None
        if args.large:
            print("latency: ] L g at T = 1024", file=sys.stderr)
            large = large_keys(tm, tmp, binary, utf8, args.large)
            print("latency: %r" % (large,), file=sys.stderr)
            cancels = {"products": [], "call": []}
            for i in range(args.large):
                for kind in cancels:
                    cancels[kind].append(cancel_once(tm, tmp, binary, utf8, "%s%d" % (kind, i),
                                                     kind == "call"))
                    print("latency: cancel %s: %r" % (kind, cancels[kind][-1]), file=sys.stderr)
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
    if large:
        print()
        print("#### Large sizes (bench/latency.py --large %d, ms)" % args.large)
        print()
        print("| scenario | keys | median | p90 | max |")
        print("|---|---:|---:|---:|---:|")
        for name, values in [
            ("T = d = 1024, L = 8: ] -> frame with the new layer's spectra", large[0]),
            ("T = d = 1024, L = 8: L -> the new layer's point applied", large[1]),
            ("T = d = 1024, L = 8: g -> frame with the gap-toggled spectra", large[2]),
        ]:
            median, p90, worst, n = summary(values)
            print("| %s | %d | %s | %s | %s |" % (name, n, median, p90, worst))
        print()
        print("| T = d = 4096, L = 1, key pressed | key -> next job-start (ms) "
              "| key -> the call's process gone (ms) | the program's CPU meanwhile (s) |")
        print("|---|---:|---:|---:|")
        for kind, label in [("products", "3 s in (QR, products)"),
                            ("call", "in the shown layer's dgeev / dgesdd")]:
            for latency, gone, cpu in cancels[kind]:
                print("| %s | %s | %s | %.2f |" % (
                    label, "%.0f" % latency if latency is not None else "n/a",
                    "%.0f" % gone if gone is not None else "-", cpu))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
