# The Python half of libvramtrace.so's caching-allocator bridges: lib/bridges/vt_bridge.c compiles this file
# into a private namespace of the program's own interpreter and calls it with the GIL held, collect()
# (collect_tracked() where torch's trace tracker gives torch's blocks) from the dumper's helper thread at
# each dump, arm_history(), arm_cupy(), history_on() and history_off() as pending calls on the main
# thread (lib/bridges/vt_history.c).
# The formats of the records it writes (_FMT_*) come before this file, made from their field lists
# (common/vt_records.h) by lib/bridges/gen/vt_bridge_fmt.c at build time.
# Both return text (dump records, docs/FORMAT.md) and never raise, print, import a module the program
# has not imported itself, or initialise CUDA: they only read what the allocators already know.
import sys


def _give_back_interrupt():
    # A Ctrl-C that arrived while our code ran belongs to the program: raise it there again.
    try:
        sys.modules["_thread"].interrupt_main()
    except Exception:
        pass


def _esc(s, word):
    # A dump's text field (docs/FORMAT.md, "Text fields"): a control character, a backslash, a byte
    # that was not UTF-8 (surrogateescape), a lone surrogate, a C1 control, and in a word a space, written \xHH.
    out = []
    for ch in str(s):
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append("\\x%02x" % (o - 0xDC00))
        elif 0xD800 <= o <= 0xDFFF or 0x80 <= o <= 0x9F:
            out.extend("\\x%02x" % b for b in ch.encode("utf-8", "surrogatepass"))
        elif o < 0x20 or o == 0x7F or ch == "\\" or (word and ch == " "):
            out.append("\\x%02x" % o)
        else:
            out.append(ch)
    return "".join(out) or "-"


def _word(s):
    return _esc(s, True)


def _text(s, limit=None):
    s = str(s).strip()
    return _esc(s if limit is None else s[:limit], False)


def _num(v):
    return "-" if v is None else str(int(v))


def _torch_cuda():
    torch = sys.modules.get("torch")
    if torch is None:
        return None, "torch is not imported"
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_initialized():
        return None, "torch has not initialised CUDA"
    return torch, ""


_warm = False


class _Stacks:
    # Python stacks as dump records (pyframe, pystack), each frame and stack written once per dump.
    def __init__(self, out):
        self.out, self.frames, self.stacks = out, {}, {}

    def of(self, frs):
        # frs: (filename, line, name) innermost first; returns the pystack id, 0 for none.
        if not frs:
            return 0
        ids = []
        for key in frs:
            fid = self.frames.get(key)
            if fid is None:
                fid = self.frames[key] = len(self.frames) + 1
                self.out.append(_FMT_PYFRAME % (fid, max(0, int(key[1])), _word(key[2]), _text(key[0])))
            ids.append(fid)
        ids = tuple(ids)
        sid = self.stacks.get(ids)
        if sid is None:
            sid = self.stacks[ids] = len(self.stacks) + 1
            self.out.append("pystack %d %d %s" % (sid, len(ids), " ".join(map(str, ids))))
        return sid

    def mark(self):
        return len(self.frames), len(self.stacks)

    def undo(self, m):
        # After a part failed and its records were taken out: forget what they defined.
        self.frames = {k: v for k, v in self.frames.items() if v <= m[0]}
        self.stacks = {k: v for k, v in self.stacks.items() if v <= m[1]}


def _running(out, stacks):
    # What each of the program's threads was running while the bridges held the GIL, and its thread id
    # (the kernel's, as entries have it; "-" where the threading module does not know it): memory that a
    # statement still running then had allocated is in flight, not kept, and memory a live thread holds
    # may be its last request's (a reader's diff tells them). At most 256 threads of 256 frames. The GIL
    # is held, but not throughout: the interpreter hands it to other threads between our bytecodes, and
    # threads in native code run on, so the table the library takes after us is some microseconds
    # younger. Each record says when its thread was looked at, no later than its frames were read (the
    # monotonic clock, the entries' own): an entry its thread made after that belongs to a request we
    # did not see start.
    me = sys.modules["_thread"].get_ident()
    threading = sys.modules.get("threading")
    clock = sys.modules.get("time")
    native = {}
    for t in list(getattr(threading, "_active", {}).values()) if threading else ():
        native[getattr(t, "ident", None)] = getattr(t, "native_id", None)
    at = _num(clock.monotonic_ns() if clock else None)
    for tid, f in list(sys._current_frames().items())[:257]:
        if tid == me:
            continue
        frs = []
        while f is not None and len(frs) < 256:
            frs.append((f.f_code.co_filename, f.f_lineno or 0, f.f_code.co_name))
            f = f.f_back
        sid = stacks.of(frs)
        if sid:
            out.append(_FMT_RUNNING % (sid, _num(native.get(tid)), at))


def _torch(out, stacks, tracked):
    # tracked: torch's trace tracker gave the library its segments and blocks; only its totals are read.
    global _warm
    torch, why = _torch_cuda()
    if torch is None:
        out.append("bridge torch absent " + why)
        return
    backend = torch.cuda.get_allocator_backend()
    segments = []
    if backend == "native" and not tracked:
        segments = torch.cuda.memory._snapshot()["segments"]
        if not _warm:
            # With block history on, torch's first snapshot imports its symbolizer (seconds, measured
            # on the H200) after taking the state, which is stale by then: take a fresh one. Reset when
            # arm_history() switches history on at a dump: the H200 then saw a 4-second-old state, with
            # an operator's new segments and temporaries missing from it, read as a leak.
            _warm = True
            segments = torch.cuda.memory._snapshot()["segments"]
    devices = {s["device"] for s in segments}
    if not devices:
        devices = {d for d in range(torch.cuda.device_count())
                   if torch.cuda.memory_stats(d).get("reserved_bytes.all.current")}
    for d in sorted(devices):
        st = torch.cuda.memory_stats(d)
        out.append(_FMT_ALLOCATOR % ("torch", d, _word(backend), _num(st.get("allocated_bytes.all.current")),
                                     _num(st.get("reserved_bytes.all.current"))))
    def stack_of(frs):
        return stacks.of([(f.get("filename", "?"), f.get("line", 0), f.get("name", "?")) for f in frs or ()])

    for s in segments:
        pool = s.get("segment_pool_id", (0, 0))
        lines = [_FMT_SEGMENT % (
            s["address"], s["total_size"], s["device"], "torch", _word(s.get("segment_type", "-")),
            "%d.%d" % (pool[0], pool[1]), "expandable" if s.get("is_expandable") else "fixed")]
        for b in s["blocks"]:
            lines.append(_FMT_BLOCK % (b["address"], b["size"], b.get("requested_size", 0), _word(b["state"]),
                                       stack_of(b.get("frames"))))
        out.extend(lines)
    if tracked:
        out.append("bridge torch ok %s allocator: its totals (its segments and blocks through its trace tracker)" % backend)
    else:
        out.append("bridge torch ok %s allocator, %d segments" % (backend, len(segments)))


def _cupy(out, stacks):
    cupy = sys.modules.get("cupy")
    if cupy is None:
        out.append("bridge cupy absent cupy is not imported")
        return
    pool = cupy.get_default_memory_pool()
    dev = cupy.cuda.runtime.getDevice()
    out.append(_FMT_ALLOCATOR % ("cupy", dev, "pool", _num(pool.used_bytes()), _num(pool.total_bytes())))
    pinned = cupy.get_default_pinned_memory_pool()
    out.append("bridge cupy ok default pool; pinned pool %d free blocks; %s" % (pinned.n_free_blocks(), _cupy_blocks))


# CuPy's blocks, reported through the library's public block hooks by a CuPy memory hook. CuPy keeps its
# hooks per thread, so arm_cupy() runs as a pending call on the main thread, and the hook sees the blocks
# the main thread takes from the pool and gives back (the usual serving loop; another thread's are not
# seen). The hook is a ctypes call into the library, with CuPy's own ctypes (the program imported it).
_cupy_hook = None
_cupy_blocks = "blocks not reported: before the first dump, or VRAMTRACE_CUPY_BLOCKS=0"


def _cupy_hook_make(cupy, ctypes):
    lib = ctypes.CDLL(None)
    alloc, free = lib.vramtrace_block_alloc, lib.vramtrace_block_free
    alloc.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_char_p)
    alloc.restype = None
    free.argtypes = (ctypes.c_void_p,)
    free.restype = None

    class Hook(cupy.cuda.MemoryHook):
        name = "vramtrace"

        def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id):
            if mem_ptr:
                alloc(mem_ptr, mem_size, device_id, b"cupy")

        def free_postprocess(self, device_id, mem_size, mem_ptr, pmem_id):
            free(mem_ptr)

    return Hook()


def arm_cupy():
    # "on", "later ..." (CuPy not imported yet) or "off ...".
    global _cupy_hook, _cupy_blocks
    if _cupy_hook is not None:
        return "on"
    try:
        cupy, ctypes = sys.modules.get("cupy"), sys.modules.get("ctypes")
        if cupy is None:
            return "later cupy is not imported"
        if ctypes is None:
            _cupy_blocks = "blocks not reported: ctypes is not imported"
            return "off ctypes is not imported"
        hook = _cupy_hook_make(cupy, ctypes)
        hook.__enter__()
        _cupy_hook = hook
        _cupy_blocks = "the main thread's blocks reported from the first dump on"
        return "on"
    except KeyboardInterrupt:
        _give_back_interrupt()
        return "later interrupted"
    except BaseException as e:
        _cupy_blocks = "blocks not reported: %s: %s" % (_word(type(e).__name__), _text(e, 200))
        return "off " + _cupy_blocks


def _varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def _fields(buf):
    # A protocol buffer message's fields as (number, int or bytes); fixed-width values as bytes.
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        wire = key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 2:
            size, i = _varint(buf, i)
            v, i = buf[i:i + size], i + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            v, i = buf[i:i + size], i + size
        else:
            raise ValueError("protocol buffer wire type %d" % wire)
        yield key >> 3, v


def _ints(v):
    # A repeated integer field: packed (bytes) or one value.
    if not isinstance(v, bytes):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def _pprof_samples(data):
    # pprof's profile.proto (github.com/google/pprof/proto/profile.proto): yields each sample's values by
    # sample type name, its string labels and its frames (file, line, function), innermost first.
    strings, types, samples, locations, functions = [], [], [], {}, {}
    for f, v in _fields(data):
        if f == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif f == 1:
            types.append(dict(_fields(v)).get(1, 0))
        elif f == 2:
            samples.append(v)
        elif f == 4:
            loc, lines = 0, []
            for g, w in _fields(v):
                if g == 1:
                    loc = w
                elif g == 4:
                    lines.append(dict(_fields(w)))
            locations[loc] = lines
        elif f == 5:
            fn = dict(_fields(v))
            functions[fn.get(1, 0)] = fn

    def s(i):
        return strings[i] if 0 <= i < len(strings) else "?"

    names = [s(t) for t in types]
    for raw in samples:
        locs, values, labels = [], [], {}
        for g, w in _fields(raw):
            if g == 1:
                locs.extend(_ints(w))
            elif g == 2:
                values.extend(_ints(w))
            elif g == 3:
                lab = dict(_fields(w))
                labels[s(lab.get(1, 0))] = s(lab[2]) if 2 in lab else lab.get(3)
        frames = []
        for loc in locs:
            for line in locations.get(loc, ()):
                fn = functions.get(line.get(1, 0), {})
                frames.append((s(fn.get(4, 0)), line.get(2, 0), s(fn.get(2, 0))))
        yield dict(zip(names, values)), labels, frames


def _jax(out, stacks):
    jax = sys.modules.get("jax")
    if jax is None:
        out.append("bridge jax absent jax is not imported")
        return
    # Asking JAX for its devices before it has made its backends would make them: a CUDA context and,
    # by default, a pool of 75 % of the device. So only where they exist already.
    xb = sys.modules.get("jax._src.xla_bridge")
    if xb is None or not getattr(xb, "_backends", None):
        out.append("bridge jax absent jax has not initialised its backends")
        return
    n, ordinal = 0, {}
    for d in jax.local_devices():
        if getattr(d, "platform", "") != "gpu":
            continue
        st = d.memory_stats() or {}
        pool = st.get("pool_bytes", st.get("bytes_reserved"))
        dev = getattr(d, "local_hardware_id", None)
        ordinal[str(d)] = d.id if dev is None else dev
        out.append(_FMT_ALLOCATOR % ("jax", ordinal[str(d)], "bfc", _num(st.get("bytes_in_use")), _num(pool)))
        n += 1
    # Its live buffers by the Python line that made them: JAX's own device memory profile (a pprof, a
    # sample per stack), gzipped; both modules only as the program loaded them (`import jax` does).
    profiler, zlib, held = sys.modules.get("jax.profiler"), sys.modules.get("zlib"), 0
    if n and profiler is not None and zlib is not None and hasattr(profiler, "device_memory_profile"):
        for values, labels, frames in _pprof_samples(zlib.decompress(profiler.device_memory_profile(), 47)):
            count, nbytes = values.get("allocations", 0), values.get("space", 0)
            if labels.get("kind") != "buffer" or not nbytes or labels.get("device") not in ordinal:
                continue
            out.append(_FMT_HELD % ("jax", ordinal[labels["device"]], count, nbytes, stacks.of(frames)))
            held += count
    out.append("bridge jax ok %d GPU device%s, %d live buffers by call site" % (n, "" if n == 1 else "s", held))


def collect():
    return _collect(False)


def collect_tracked():
    return _collect(True)


def _collect(tracked):
    out = []
    stacks = _Stacks(out)
    torch_part = lambda o, s: _torch(o, s, tracked)
    for name, part in (("running", _running), ("torch", torch_part), ("cupy", _cupy), ("jax", _jax)):
        mark, smark = len(out), stacks.mark()
        try:
            part(out, stacks)
        except KeyboardInterrupt:
            del out[mark:]
            stacks.undo(smark)
            if name != "running":
                out.append("bridge %s error interrupted" % name)
            _give_back_interrupt()
        except BaseException as e:
            del out[mark:]
            stacks.undo(smark)
            if name != "running":  # no threads' stacks: nothing is read as in flight
                out.append("bridge %s error %s: %s" % (name, _word(type(e).__name__), _text(e, 300)))
    return "\n".join(out) + "\n"


# Torch's block history as the library switches it on: the blocks' state and their Python stacks.
_HISTORY = dict(enabled="state", context="alloc", stacks="python")


def arm_history():
    # "on", "later ..." (ask again after the next allocation) or "off ..." (never again).
    global _warm
    try:
        torch, why = _torch_cuda()
        if torch is None:
            return "later " + why
        backend = torch.cuda.get_allocator_backend()
        if backend != "native":
            return "off the %s allocator keeps no block history" % backend
        for s in torch.cuda.memory._snapshot()["segments"]:
            if any(b.get("frames") for b in s["blocks"]):
                return "off already on: left as the program set it"
        torch.cuda.memory._record_memory_history(**_HISTORY)
        # The next snapshot is the first with history on: the slow one (_torch), stale when it returns.
        _warm = False
        return "on"
    except KeyboardInterrupt:
        _give_back_interrupt()
        return "later interrupted"
    except BaseException as e:
        return "off error %s: %s" % (_word(type(e).__name__), _text(e, 300))


def _history_switch(on):
    # A window of the sampled history begins or ends: "on", "off", "later ..." or "stop ...".
    try:
        torch, why = _torch_cuda()
        if torch is None:
            return "stop " + why
        if on:
            torch.cuda.memory._record_memory_history(**_HISTORY)
        else:
            torch.cuda.memory._record_memory_history(enabled=None)
        return "on" if on else "off"
    except KeyboardInterrupt:
        _give_back_interrupt()
        return "later interrupted"
    except BaseException as e:
        return "stop error %s: %s" % (_word(type(e).__name__), _text(e, 300))


def history_on():
    return _history_switch(True)


def history_off():
    return _history_switch(False)
