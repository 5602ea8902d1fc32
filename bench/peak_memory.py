#!/usr/bin/python3
"""Runs a command and reports its wall time and peak memory (bench/checkpoint_1b.sh).

The peak resident set is the kernel's (wait4's ru_maxrss, which is VmHWM at exit); its two
kinds, anonymous (the process's own buffers) and file-backed (a memory-mapped checkpoint's
pages), have no peak counter of their own, so /proc/PID/status is sampled every 10 ms and
the largest RssAnon and RssFile seen are reported: a lower bound on their true peaks,
close to it when the resident set changes slowly against the period.

usage: peak_memory.py COMMAND [ARG...]   (the report on stderr as KEY=VALUE lines)
"""
import os
import subprocess
import sys
import time

PERIOD = 0.01


def sample(pid, peaks):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in peaks:
                    peaks[key] = max(peaks[key], int(value.split()[0]))
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    started = time.monotonic()
    child = subprocess.Popen(sys.argv[1:])
    peaks = {"RssAnon": 0, "RssFile": 0}
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        sample(child.pid, peaks)
        time.sleep(PERIOD)
    wall = time.monotonic() - started
    code = os.waitstatus_to_exitcode(status)
    print(f"exit={code}", file=sys.stderr)
    print(f"wall_s={wall:.2f}", file=sys.stderr)
    print(f"cpu_s={usage.ru_utime + usage.ru_stime:.2f}", file=sys.stderr)
    print(f"peak_rss_MiB={usage.ru_maxrss / 1024:.1f}", file=sys.stderr)
    for key, kib in peaks.items():
        print(f"peak_{key}_MiB={kib / 1024:.1f}", file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
