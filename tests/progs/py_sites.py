# CPU test program for Python call sites (tests/t_pysites.c): allocates through the fake CUDA runtime
# with ctypes from named functions, a method, a Python thread and a native thread, and prints
# "site SIZE LINE" for each allocation (the line of the call that allocated), "at NAME LINE" for the
# line of each call to NAME, and "dump PATH" for each dump it takes. PyDLL keeps the GIL during a call, CDLL releases it: both must give the Python line.
#   py_sites.py RUNTIME NATIVE_HELPER MODE
#   MODE basic: one allocation of each kind, one dump
#        grow:  basic, then twice: Server.handle three more times and a dump
#        gil:   an allocation on a thread that released the GIL while another thread holds it for 1 s
#        fork:  basic, then in a forked child a GIL-holding and a GIL-releasing allocation, a dump there
import ctypes
import os
import sys
import threading
import time

held = ctypes.PyDLL(sys.argv[1])
released = ctypes.CDLL(sys.argv[1])
released_helpers = ctypes.CDLL(sys.argv[2])
native = ctypes.PyDLL(sys.argv[2])
self_lib = ctypes.PyDLL(None)
mode = sys.argv[3]
kept = []


def site(size, p):
    kept.append(p)
    print("site", size, sys._getframe(1).f_lineno, flush=True)


def dump():
    buf = ctypes.create_string_buffer(4096)
    ok = self_lib.vramtrace_dump(buf, ctypes.c_size_t(4096)) == 0
    print("dump", buf.value.decode() if ok else "failed", flush=True)


def load_weights():
    p = ctypes.c_void_p(); held.cudaMalloc(ctypes.byref(p), 1 << 20); site(1 << 20, p)


class Server:
    def handle(self):
        p = ctypes.c_void_p(); released.cudaMalloc(ctypes.byref(p), 2 << 20); site(2 << 20, p)


def worker():
    p = ctypes.c_void_p(); held.cudaMalloc(ctypes.byref(p), 3 << 20); site(3 << 20, p)


def inner():
    p = ctypes.c_void_p(); held.cudaMalloc(ctypes.byref(p), 5 << 20); site(5 << 20, p)


def at(name):
    print("at", name, sys._getframe(1).f_lineno, flush=True)


def outer():
    inner(); at("inner")


def basic():
    load_weights(); at("load_weights")
    Server().handle(); at("handle")
    t = threading.Thread(target=worker, name="worker")
    t.start()
    t.join()
    p = ctypes.c_void_p()
    native.native_thread_alloc(ctypes.c_size_t(4 << 20), ctypes.byref(p))
    kept.append(p)
    outer(); at("outer")


def hold_gil(go):
    go.wait()
    held.usleep(1000000)  # a C call that keeps the GIL for a second


print("qualname", "Server.handle" if sys.version_info >= (3, 11) else "handle", flush=True)
if mode in ("basic", "grow", "fork"):
    basic(); at("basic")
    dump()
if mode == "grow":
    for _ in range(2):
        for _ in range(3):
            Server().handle()
        dump()
if mode == "gil":
    # The main thread releases the GIL in a native call that allocates 0.3 s later; meanwhile the other
    # thread takes the GIL and keeps it for a second.
    go = threading.Event()
    t = threading.Thread(target=hold_gil, args=(go,))
    t.start()
    go.set()
    p = ctypes.c_void_p()
    released_helpers.delayed_alloc.restype = ctypes.c_long
    print("alloc_us", released_helpers.delayed_alloc(ctypes.c_size_t(2 << 20), ctypes.byref(p), 300000), flush=True)
    kept.append(p)
    t.join()
    dump()
if mode == "fork":
    pid = os.fork()
    if pid == 0:
        load_weights()
        Server().handle()
        dump()
        sys.stdout.flush()
        os._exit(0)
    os.waitpid(pid, 0)
