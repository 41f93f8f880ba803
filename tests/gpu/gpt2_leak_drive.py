# GPU suite: runs tests/gpu/gpt2_leak.py under libvramtrace.so and dumps it from outside with
# `vramtrace dump PID`, at each quiet point (the program waits, idle) and every second of its busy phase;
# then checks what issue 43 asks of the dumps and prints one JSON line of figures:
#   - every quiet dump: torch's view = memory_allocated()/memory_reserved() to the byte, and the share of
#     torch's allocated bytes with a call site;
#   - the diff of the first and last quiet dumps: its verdict, and the share of the allocated growth at
#     sites whose stack holds a line marked LEAK;
#   - what a dump costs the program: the process's CPU over each quiet dump (the program is idle then,
#     so it is the dump's), the time the bridge held the GIL (the dump's python record), and, in the
#     busy phase, how much longer the requests that ran during a dump took than the median request.
#   gpt2_leak_drive.py VRAMTRACE LIB OUTDIR KIND SHAPE   (PYTORCH_CUDA_ALLOC_CONF as the caller set it)
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

vramtrace, lib, outdir, kind, shape = sys.argv[1:6]
prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpt2_leak.py")
leak_lines = [i + 1 for i, l in enumerate(open(prog)) if "# LEAK" in l]
os.makedirs(os.path.join(outdir, "dumps"), exist_ok=True)
env = dict(os.environ, LD_PRELOAD=lib, VRAMTRACE_DIR=os.path.join(outdir, "dumps"), VRAMTRACE_AT_EXIT="0")
p = subprocess.Popen([sys.executable, prog, kind, shape], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=open(os.path.join(outdir, "stderr.txt"), "w"), env=env, text=True)
clk = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        w = f.read().rsplit(")", 1)[1].split()
    return (int(w[11]) + int(w[12])) / clk


def dump():
    t0 = time.monotonic()
    r = subprocess.run([vramtrace, "dump", str(p.pid)], capture_output=True, text=True, timeout=120)
    t1 = time.monotonic()
    m = re.search(r"(/\S+\.dump)", r.stdout + r.stderr)
    return {"path": m.group(1) if m else None, "t0": t0, "t1": t1, "rc": r.returncode,
            "said": (r.stdout + r.stderr).strip()[-300:]}


def report(path):
    r = subprocess.run([vramtrace, "report", "--json", path], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


quiet, busy_dumps, spans = [], [], []
stop = threading.Event()


def busy_loop():
    while not stop.wait(1.0):
        busy_dumps.append(dump())


th = None
for line in p.stdout:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "quiet" in msg:
        c0 = cpu_s(p.pid)
        d = dump()
        time.sleep(0.2)  # the dump's own threads finish their accounting
        d["cpu_s"] = cpu_s(p.pid) - c0
        d.update(msg)
        quiet.append(d)
        p.stdin.write("go\n")
        p.stdin.flush()
    elif msg.get("busy") == "start":
        th = threading.Thread(target=busy_loop)
        th.start()
    elif msg.get("busy") == "end":
        stop.set()
        th.join()
        spans = msg["spans"]
p.wait()

res = {"kind": kind, "shape": shape, "alloc": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "default"),
       "rc": p.returncode, "quiet_dumps": len(quiet), "checks": {}}
views, cover = [], []
for d in quiet:
    rep = report(d["path"]) if d["path"] else None
    if not rep:
        views.append(None)
        continue
    t = [a for dev in rep["devices"] for a in dev.get("allocators", []) if a["name"] == "torch"]
    c = [a for a in rep["stack_coverage"]["allocators"] if a["allocator"] == "torch"]
    views.append((t[0]["allocated"], t[0]["reserved"]) if t else None)
    cover.append(c[0]["with_stack"] / c[0]["allocated"] if c and c[0]["allocated"] else None)
    d["tracker"] = (rep.get("torch_tracker") or {}).get("state")
    d["gil_run_ms"] = (rep.get("python") or {}).get("run_ns", 0) / 1e6
    d["gil_wait_ms"] = (rep.get("python") or {}).get("gil_wait_ns", 0) / 1e6
    d["gil_warm_ms"] = ((rep.get("python") or {}).get("warm_ns") or 0) / 1e6
res["views_equal"] = sum(1 for v, d in zip(views, quiet) if v == (d["allocated"], d["reserved"]))
res["views_differ"] = [(v, d["allocated"], d["reserved"]) for v, d in zip(views, quiet)
                       if v != (d["allocated"], d["reserved"])][:4]
res["coverage_min"] = min([c for c in cover if c is not None], default=None)
res["tracker"] = sorted({d.get("tracker") for d in quiet}, key=str)
res["dump_cpu_ms"] = [round(d["cpu_s"] * 1e3, 1) for d in quiet]
res["dump_wall_s"] = [round(d["t1"] - d["t0"], 3) for d in quiet]
res["gil_run_ms"] = [round(d.get("gil_run_ms", 0), 2) for d in quiet]
res["gil_warm_ms"] = round(quiet[0].get("gil_warm_ms", 0), 2) if quiet else None  # compiled ahead (vt_bridge_warm)
if len(quiet) >= 2 and quiet[0]["path"] and quiet[-1]["path"]:
    r = subprocess.run([vramtrace, "diff", "--json", quiet[0]["path"], quiet[-1]["path"]], capture_output=True, text=True)
    diff = json.loads(r.stdout) if r.returncode == 0 else {}
    grown = sum(s["delta_bytes"] for s in diff.get("sites", []) if s["class"] == "allocated" and s["delta_bytes"] > 0)
    marks = ["gpt2_leak.py:%d)" % n for n in leak_lines]
    at_leak = sum(s["delta_bytes"] for s in diff.get("sites", []) if s["class"] == "allocated" and s["delta_bytes"] > 0
                  and any(m in f for f in s["stack"] for m in marks))
    res["allocated_growth"] = grown
    res["growth_at_leak_line"] = round(at_leak / grown, 4) if grown else None
    res["verdict"] = diff.get("verdict")
    res["verdict_names"] = [s.get("name") for s in diff.get("sites", [])[:3]]
if spans:
    lat = [b - a for a, b in spans]
    med = statistics.median(lat)
    during = []
    for d in busy_dumps:
        over = [b - a for a, b in spans if a < d["t1"] and b > d["t0"]]
        if over:
            during.append(max(over) - med)
    res["busy_requests"] = len(spans)
    res["busy_median_ms"] = round(med * 1e3, 2)
    res["busy_dumps"] = len(busy_dumps)
    res["busy_extra_ms_max"] = round(max(during) * 1e3, 2) if during else None
    res["busy_extra_ms"] = [round(x * 1e3, 2) for x in during]
    gil = []
    for d in busy_dumps:
        rep = report(d["path"]) if d["path"] else None
        if rep and rep.get("python"):
            gil.append(round(rep["python"]["run_ns"] / 1e6, 2))
    res["busy_gil_run_ms"] = gil
print(json.dumps(res), flush=True)
with open(os.path.join(outdir, "result.json"), "w") as f:
    json.dump({"result": res, "quiet": quiet, "busy_dumps": busy_dumps}, f, indent=1)
