#!/usr/bin/env python3
# Keystroke -> frame while the screen's x writes its export at T = d = N with --export-matrix
# (bench/README.md, "x's export off the UI thread"): the screen runs in tmux with --trace;
# after Enter, eight unbound keys (~) are sent 0.4 s apart, each timed from its send
# (CLOCK_MONOTONIC, the trace's clock) to the first frame drawn after the trace shows it read.
#     /usr/bin/python3 bench/export_latency.py BINARY N LABEL
import subprocess, sys, time, os, re, shutil, tempfile
binary, N, label = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
tmp = tempfile.mkdtemp(prefix="eb-lat-")
trace = os.path.join(tmp, "trace")
sock = "eb-lat-" + label
def tm(*a): return subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", *a], capture_output=True, text=True).stdout
def screen(): return tm("capture-pane", "-p", "-t", "0")
def wait(pat, t=900):
    end = time.time() + t
    while time.time() < end:
        if re.search(pat, screen()): return True
        time.sleep(0.1)
    return False
tm("new-session", "-d", "-x", "200", "-y", "40", f"cd {tmp} && env OPENBLAS_NUM_THREADS=1 {binary} -T {N} -d {N} -L 1 --export-matrix --trace {trace}")
assert wait(r"computed in"), screen()
tm("send-keys", "-t", "0", "x"); assert wait("directory: _")
tm("send-keys", "-t", "0", "-l", os.path.join(tmp, "out")); tm("send-keys", "-t", "0", "Enter")
sent = []
time.sleep(0.5)
for i in range(8):
    sent.append(time.monotonic() * 1e3)
    tm("send-keys", "-t", "0", "~")
    time.sleep(0.4)
end_by = time.time() + 900
while time.time() < end_by and " export files=" not in open(trace).read():
    time.sleep(0.2)
time.sleep(2)  # the last frames after the export
tm("send-keys", "-t", "0", "q"); time.sleep(1); tm("kill-server")
lines = open(trace).read().splitlines()
def ms(l): return float(l.split()[0])
# A binary whose export blocks its keys traces no export-start: its duration is not shown.
start = next((ms(l) for l in lines if " export-start " in l), float("nan"))
end = next(ms(l) for l in lines if " export files=" in l)
keys = [ms(l) for l in lines if re.search(r" key ~ ", l)]
frames = [ms(l) for l in lines if " frame " in l]
lat = []
for s in sent:
    f = next((x for x in frames if x >= s and any(k >= s and k <= x for k in keys)), None)
    lat.append(f - s if f else float("nan"))
lat_sorted = sorted(lat)
print(f"{label}: export {end-start:.0f} ms; keystroke->frame ms: " + " ".join(f"{x:.0f}" for x in lat) +
      f"; median {lat_sorted[len(lat)//2]:.0f}, max {max(lat):.0f}; keys sent during export {sum(1 for s in sent if s < end)}")
shutil.rmtree(tmp)
