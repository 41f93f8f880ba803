# torch.compile in a serving loop, dumped from outside as a user would (`vramtrace dump PID`, started as a
# child process) while it compiles, captures and replays (issue 45). Run under the library:
#   LD_PRELOAD=build/libvramtrace.so python3 tests/gpu/torch_compile.py MODE VRAMTRACE OUT.jsonl [signal]
# MODE: default, reduce-overhead or max-autotune. Two kinds of asks, each one JSON line in OUT.jsonl:
# - "quiet": from the main thread between phases (after warm-up, after capture, during the replay loop's
#   pauses), with nothing allocating meanwhile, so that the dump's torch figures can be held to
#   memory_allocated() / memory_reserved() read just before and after, to the byte;
# - "busy": from a second thread, one after another for the whole run, whatever the main thread is doing
#   (compiling, capturing a CUDA graph, replaying): each must come back with a dump, quickly. With "signal"
#   the second thread sends the dump signal instead (kill -USR1, the other route users have: the audit's
#   old `vramtrace dump` took it) and waits for the dump it gives ("signal" lines); each line also says
#   which of the process's threads block SIGUSR1 then and whether it is caught, so that compile machinery
#   that takes or masks the signal would show.
# The outputs are checked against the eager model's at the end (the library must not change results).
import json
import os
import signal
import subprocess
import sys
import threading
import time

import torch

mode, vt, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
by_signal = sys.argv[4:] == ["signal"]
torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(
    torch.nn.Linear(512, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 512), torch.nn.LayerNorm(512)
).to(dev).eval()
compiled = torch.compile(model, mode=mode)
out = open(out_path, "a")
lock = threading.Lock()
phase = "start"


def record(kind, label, t0, p, extra):
    with lock:
        rec = {"mode": mode, "conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "kind": kind, "label": label,
               "phase": phase, "rc": p.returncode, "secs": round(time.time() - t0, 3), "path": p.stdout.strip(),
               "err": p.stderr.strip()[-400:]}
        rec.update(extra)
        out.write(json.dumps(rec) + "\n")
        out.flush()


def ask(kind, label, extra=None):
    t0 = time.time()
    p = subprocess.run([vt, "dump", "--timeout", "30", str(os.getpid())], capture_output=True, text=True)
    record(kind, label, t0, p, extra or {})


def quiet(label):
    torch.cuda.synchronize()
    a0, r0 = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    t0 = time.time()
    p = subprocess.run([vt, "dump", "--timeout", "30", str(os.getpid())], capture_output=True, text=True)
    torch.cuda.synchronize()
    a1, r1 = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    record("quiet", label, t0, p, {"allocated": [a0, a1], "reserved": [r0, r1]})


stop = False


def sigusr1_state():
    """The threads that block SIGUSR1 now (by name), and whether the process catches it."""
    bit = 1 << (signal.SIGUSR1 - 1)
    blocked, caught = [], False
    for tid in os.listdir("/proc/self/task"):
        try:
            st = dict(l.split(":\t", 1) for l in open("/proc/self/task/%s/status" % tid).read().splitlines() if ":\t" in l)
        except OSError:
            continue  # the thread ended meanwhile
        if int(st["SigBlk"], 16) & bit:
            blocked.append(st["Name"].strip())
        caught = caught or bool(int(st["SigCgt"], 16) & bit)
    return sorted(blocked), caught


def ask_signal(label):
    d = os.environ["VRAMTRACE_DIR"]
    mine = "vramtrace.%d." % os.getpid()
    before = set(os.listdir(d))
    blocked, caught = sigusr1_state()
    t0 = time.time()
    os.kill(os.getpid(), signal.SIGUSR1)
    path = ""
    while not path and time.time() - t0 < 30:
        for f in sorted(set(os.listdir(d)) - before):
            if f.startswith(mine) and f.endswith(".dump") and "reason signal\n" in open(os.path.join(d, f)).read(4096):
                path = os.path.join(d, f)
        time.sleep(0.005)
    secs = round(time.time() - t0, 3)
    with lock:
        out.write(json.dumps({"mode": mode, "conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "kind": "signal",
                              "label": label, "phase": phase, "rc": 0 if path else 1, "secs": secs, "path": path,
                              "err": "" if path else "no dump within 30 s", "blocked": blocked, "caught": caught}) + "\n")
        out.flush()


def asker():
    i = 0
    while not stop:
        if by_signal:
            ask_signal("signal%d" % i)
        else:
            ask("busy", "busy%d" % i)
        i += 1
        time.sleep(0.5)


kept = []
with torch.no_grad():
    xs = [torch.randn(8, 512, device=dev) for _ in range(4)]
    t = threading.Thread(target=asker, daemon=True)
    t.start()
    phase = "warm-up"  # the first calls compile (and, with reduce-overhead, warm up before recording)
    for i in range(2):
        kept.append(compiled(xs[i % 4]).clone())
    quiet("after-warm-up")
    phase = "capture"  # reduce-overhead records its CUDA graph on a call after warm-up
    for i in range(3):
        kept.append(compiled(xs[i % 4]).clone())
    quiet("after-capture")
    phase = "replay"
    end = time.time() + 6
    n = 0
    while time.time() < end:
        y = compiled(xs[n % 4])
        if n % 50 == 0:
            kept.append(y.clone())  # outputs the server keeps
        n += 1
        if n % 400 == 0:
            quiet("replay-%d" % n)
    phase = "done"
    stop = True
    t.join()
    quiet("end")
    eager = [model(xs[i % 4]) for i in range(4)]
    same = all(torch.allclose(compiled(xs[i]), eager[i], atol=1e-2, rtol=1e-2) for i in range(4))
with lock:
    out.write(json.dumps({"mode": mode, "conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "kind": "result",
                          "replays": n, "kept": len(kept), "same_as_eager": same, "by_signal": by_signal}) + "\n")
out.close()
print("done", mode, n, same, flush=True)
