# For tests/t_tracker.sh: a threaded server on the fake torch backed by the fake c10 (VRAMTRACE_FAKE_TORCH=native),
# as a PyTorch inference server runs: four workers take requests from a queue; each request makes its
# activations and a workspace, gives them back, and keeps its output in the worker's local variable until
# the worker's next request (a bounded hold, one a thread). The main thread keeps requests coming and takes
# a dump now and then (50 in all), printing "dump N PATH". With "leak", every output is also appended to a
# list, forever.
# With "held": no queue; a dump, then each worker serves one request and waits holding its output (in
# its own frame, past serve()), a second dump, and the workers end: what two dumps cannot tell from a
# leak's beginning, every time.
# With "early": a thread holds a request's activations (4 MiB) at the first dump, still inside the
# statement, then frees them and keeps eight outputs (2 MiB), a leak smaller than what was in flight; a
# second dump once it has ended.
# With "warm": one request (the program's first CUDA call), 0.3 s of loading, a dump.
#   py_server.py ok|leak|held|early|warm [DUMPS]
import queue
import random
import sys
import threading
import time

import torch

from take_dump import dump

mode = sys.argv[1]
ndumps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
q = queue.Queue(maxsize=8)
kept = []
random.seed(1)


def device_alloc(n):
    return torch.empty(n)


def serve(req):
    act = device_alloc((1 + req % 3) << 20)  # activations
    ws = device_alloc(512 << 10)  # a workspace
    out = device_alloc(256 << 10)  # the result
    del act, ws
    if mode == "leak":
        kept.append(out)
    return out


def worker():
    while True:
        req = q.get()
        if req is None:
            return
        out = serve(req)  # held until the next request replaces it
        time.sleep(random.random() * 0.002)


if mode == "held":
    served, done = threading.Barrier(5), threading.Event()

    def hold(i):
        out = serve(i)  # held until the workers end
        served.wait()
        done.wait()
        del out

    print("dump", 1, dump(), flush=True)
    holders = [threading.Thread(target=hold, args=(i,)) for i in range(4)]
    for h in holders:
        h.start()
    served.wait()
    print("dump", 2, dump(), flush=True)
    done.set()
    for h in holders:
        h.join()
    sys.exit(0)

if mode == "warm":
    out = serve(0)
    time.sleep(0.3)
    print("dump", 1, dump(), flush=True)
    sys.exit(0)

if mode == "early":
    inside, go = threading.Event(), threading.Event()

    def early():
        act = device_alloc(4 << 20)  # in flight at the first dump
        inside.set()
        go.wait()
        del act
        for _ in range(8):
            kept.append(device_alloc(256 << 10))  # LEAK

    t = threading.Thread(target=early)
    t.start()
    inside.wait()
    print("dump", 1, dump(), flush=True)
    go.set()
    t.join()
    print("dump", 2, dump(), flush=True)
    sys.exit(0)

workers = [threading.Thread(target=worker) for _ in range(4)]
for w in workers:
    w.start()
req = 0
for n in range(1, ndumps + 1):
    for _ in range(random.randint(1, 12)):
        q.put(req)
        req += 1
    time.sleep(random.random() * 0.004)
    print("dump", n, dump(), flush=True)
for w in workers:
    q.put(None)
for w in workers:
    w.join()
