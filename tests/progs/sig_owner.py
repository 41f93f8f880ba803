# A Python server that takes SIGUSR1 for itself after its first CUDA call, as gunicorn and uwsgi workers
# do (tests/t_safety.c): vramtrace dump must dump it without ever running this handler, and kill -USR1
# must still reach it. The CUDA call goes through the fake runtime (LD_LIBRARY_PATH holds build/fake).
import ctypes
import signal
import sys
import time

rt = ctypes.CDLL("libcudart.so.13")
ptr = ctypes.c_void_p()
if rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(1 << 20)) != 0:
    sys.exit("cudaMalloc failed")
calls = 0


def on_usr1(sig, frame):
    global calls
    calls += 1


signal.signal(signal.SIGUSR1, on_usr1)
print("ready", flush=True)
for _ in range(400):  # until its own signal comes, at most 4 s
    if calls:
        break
    time.sleep(0.01)
print("handler-calls %d" % calls, flush=True)
