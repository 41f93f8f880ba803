# CPU test program for Python call sites (tests/t_pysites.c): allocates through the fake CUDA runtime
# with ctypes from named functions, a method, a Python thread and a native thread, and prints
# "site SIZE LINE" for each allocation (the line of the call that allocated), "at NAME LINE" for the
# line of each call to NAME, and "dump PATH" for each dump it takes. PyDLL keeps the GIL during a call, CDLL releases it: both must give the Python line.
#   py_sites.py RUNTIME NATIVE_HELPER MODE
#   MODE basic: one allocation of each kind, one dump
#        grow:  basic, then twice: Server.handle three more times and a dump
#        gil:   an allocation on a thread that released the GIL while another thread holds it for 1 s
#        fork:  basic, then in a forked child a GIL-holding and a GIL-releasing allocation, a dump there
#        gilwalk: one allocation holding the GIL first (vramtrace checks its frame walk on it), then gil
#        shapes: allocations from a generator, a coroutine, deep recursion, a thread that exits, an
#               except block, a comprehension, a lambda, a decorator's wrapper, a class body, one dump
#        many:  1,000 allocations and frees through Server.churn (GIL released), one dump
#        alternate: 900 allocations, GIL released, kept: leaf() through via_a or via_b (frames alike), called
#               from three lines of mid() in turn (4, 8, 12 KiB), mid under 0 to 3 levels of deeper(),
#               so that consecutive stacks share their outer frames and differ at every depth; "at
#               NAME LINE" for mid's three calls; then one (16 KiB) 41 levels deep through map() (a C
#               function calling back: a shim frame at each level); one dump
#        recode: 60 functions made from one by code.replace(), each called once (an allocation of its own
#               size, 4 KiB times its number) and dropped: each new code object takes the dead one's address
#        paths: from one Python line, 100 allocations through native path a (4 KiB each), then 400 taking
#               paths a and b in turn (b: 8 KiB), all kept, one dump
#        flight: a dump, then a request on a thread that allocates 8 MiB and is still running while the
#               second dump is taken (nothing keeps a cache: no caching allocator here)
#        subinterp: an allocation in before_sub (6 MiB), one made by a subinterpreter's code (7 MiB), one in
#               after_sub (8 MiB), all holding the GIL, one dump; "nosub WHY" when no subinterpreter runs
import ctypes
import os
import sys
import threading
import time
import types

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

    def churn(self, n):
        p = ctypes.c_void_p()
        for _ in range(n):
            released.cudaMalloc(ctypes.byref(p), 4096)
            released.cudaFree(p)


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


def gen_alloc():
    p = ctypes.c_void_p(); released.cudaMalloc(ctypes.byref(p), 6 << 20); site(6 << 20, p)
    yield 1


async def coro_alloc():
    p = ctypes.c_void_p(); held.cudaMalloc(ctypes.byref(p), 7 << 20); site(7 << 20, p)


def recurse(k):
    if k == 0:
        p = ctypes.c_void_p(); released.cudaMalloc(ctypes.byref(p), 8 << 20); site(8 << 20, p)
        return
    recurse(k - 1)


def short_lived():
    p = ctypes.c_void_p(); released.cudaMalloc(ctypes.byref(p), 9 << 20); site(9 << 20, p)


def in_except():
    try:
        raise KeyError("x")
    except KeyError:
        p = ctypes.c_void_p(); held.cudaMalloc(ctypes.byref(p), 10 << 20); site(10 << 20, p)


def alloc_sized(size):
    p = ctypes.c_void_p(); released.cudaMalloc(ctypes.byref(p), size); site(size, p)
    return size


def decorate(fn):
    def wrapper(*a):
        return fn(*a)
    return wrapper


@decorate
def decorated():
    alloc_sized(13 << 20)


def shapes():
    next(gen_alloc())
    import asyncio
    asyncio.run(coro_alloc())
    recurse(50)
    for _ in range(2):  # the second thread may reuse the first one's thread state
        t = threading.Thread(target=short_lived)
        t.start()
        t.join()
    in_except()
    [alloc_sized(11 << 20) for _ in range(1)]
    (lambda: alloc_sized(12 << 20))()
    decorated()

    class Body:
        alloc_sized(14 << 20)


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
            Server().handle(); at("grow")
        dump()
if mode == "gilwalk":
    load_weights()
if mode in ("gil", "gilwalk"):
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
if mode == "shapes":
    shapes()
    dump()
def made_0():
    return alloc_sized(4096)


if mode == "recode":
    base = made_0.__code__
    for i in range(1, 61):
        names = {"co_name": "made_%d" % i}
        if sys.version_info >= (3, 11):
            names["co_qualname"] = "made_%d" % i
        code = base.replace(co_consts=tuple(4096 * i if c == 4096 else c for c in base.co_consts), **names)
        made = types.FunctionType(code, globals())
        del code
        made()
        del made
    dump()
def leaf(n):
    p = ctypes.c_void_p(); released.cudaMalloc(ctypes.byref(p), n); kept.append(p)


def via_a(n):
    leaf(n)


def via_b(n):
    leaf(n)


def mid(i):
    if i % 3 == 0:
        via_a(4096); at("mid_4096")
    elif i % 3 == 1:
        via_b(8192); at("mid_8192")
    else:
        via_a(12288); at("mid_12288")


def deeper(k, i):
    return mid(i) if k == 0 else deeper(k - 1, i)


def through_c(k):
    # each level called back from C (map), which leaves a shim frame between two Python ones
    if k == 0:
        leaf(16384)
    else:
        list(map(through_c, [k - 1]))


if mode == "alternate":
    for i in range(900):
        deeper((i // 3) % 4, i)
    through_c(40)
    dump()
if mode == "paths":
    for i in range(500):
        b = i >= 100 and i % 2
        p = ctypes.c_void_p()
        released_helpers.two_paths_alloc(b, ctypes.c_size_t(8192 if b else 4096), ctypes.byref(p))
        kept.append(p)
    dump()
def before_sub():
    p = ctypes.c_void_p(); held.cudaMalloc(ctypes.byref(p), 6 << 20); site(6 << 20, p)


def after_sub():
    p = ctypes.c_void_p(); held.cudaMalloc(ctypes.byref(p), 8 << 20); site(8 << 20, p)


def in_subinterpreter(code):
    try:
        import _interpreters as subs  # 3.13
    except ImportError:
        import _xxsubinterpreters as subs
    try:
        sub = subs.create(isolated=False)  # 3.12: ctypes loads only in a subinterpreter that is not isolated
    except TypeError:
        sub = subs.create()
    subs.run_string(sub, code)


if mode == "subinterp":
    before_sub()
    try:  # the subinterpreter keeps its allocation: it is never destroyed
        in_subinterpreter("import ctypes\np = ctypes.c_void_p()\n"
                          "ctypes.PyDLL(%r).cudaMalloc(ctypes.byref(p), 7 << 20)\n" % sys.argv[1])
        print("sub", 7 << 20, flush=True)
    except Exception as e:
        print("nosub", type(e).__name__, e, flush=True)
    after_sub()
    dump()
if mode == "flight":
    dump()
    ready, go = threading.Event(), threading.Event()

    def request():
        p = ctypes.c_void_p(); released.cudaMalloc(ctypes.byref(p), 8 << 20); site(8 << 20, p)
        ready.set()
        go.wait()  # the request still runs while the dump is taken

    t = threading.Thread(target=request, name="request")
    t.start()
    ready.wait()
    dump()
    go.set()
    t.join()
if mode == "many":
    Server().churn(1000)
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
