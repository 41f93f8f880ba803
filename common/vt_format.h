/* Words of the dump format (docs/FORMAT.md) that the library writes and the command reads: each list
 * here once, for both halves. */
#ifndef VT_FORMAT_H
#define VT_FORMAT_H

/* The first line: the magic, then the format's version (VRAMTRACE_FORMAT_VERSION, include/vramtrace.h). */
#define VT_DUMP_MAGIC "vramtrace-dump"
/* The last line: a file without it is not a whole dump. */
#define VT_DUMP_END "end"

/* Record words: the first field of each line. */
#define VT_REC_ALLOC "alloc"
#define VT_REC_API "api"
#define VT_REC_CMDLINE "cmdline"
#define VT_REC_COUNTER "counter"
#define VT_REC_DEPTH "depth"
#define VT_REC_DEVICE "device"
#define VT_REC_EXE "exe"
#define VT_REC_FAILED "failed"
#define VT_REC_FRAME "frame"
#define VT_REC_INTERPRETER "interpreter"
#define VT_REC_KIND "kind"
#define VT_REC_LIMITS "limits"
#define VT_REC_MODULE "module"
#define VT_REC_PEAK "peak"
#define VT_REC_PEAK_FREED "peak_freed"
#define VT_REC_PHYS "phys"
#define VT_REC_PID "pid"
#define VT_REC_POOL "pool"
#define VT_REC_POOL_SEGMENT "pool_segment"
#define VT_REC_PPID "ppid"
#define VT_REC_PYFRAME "pyframe"
#define VT_REC_PYSTACK "pystack"
#define VT_REC_PYTHON "python"
#define VT_REC_REASON "reason"
#define VT_REC_SEQ "seq"
#define VT_REC_STACK "stack"
#define VT_REC_START "start"
#define VT_REC_TIME "time"
#define VT_REC_UNWATCHED "unwatched"
#define VT_REC_HISTORY "history"
#define VT_REC_TRACKER "tracker"
/* Written by the bridges' Python half (lib/bridges/vt_bridge.py, which cannot include this file; it
 * writes pyframe and pystack records too), read by the command. */
#define VT_REC_BRIDGE "bridge"
#define VT_REC_ALLOCATOR "allocator"
#define VT_REC_SEGMENT "segment"
#define VT_REC_BLOCK "block"
#define VT_REC_HELD "held"
#define VT_REC_RUNNING "running"

/* Why a dump was written (the `reason` record): X(enum name, word). */
#define VT_REASONS(X)                                                                                            \
    X(VT_REASON_SIGNAL, "signal") X(VT_REASON_EXIT, "exit") X(VT_REASON_OOM, "oom")                              \
    X(VT_REASON_INTERVAL, "interval") X(VT_REASON_API, "api") X(VT_REASON_REQUEST, "request")

/* Kinds of tracked memory, with what each is, in one table both halves read:
 * X(enum name, word, record, space, reserved, bounded):
 * - record: 0 for `alloc` records, 1 for `phys` records;
 * - space: the address space it is keyed in (the library's one table, the reader's duplicate check):
 *   memory, mappings, reservations, native blocks, array handles, registered host ranges and external
 *   memory handles never collide;
 * - reserved: its live bytes count in the library's reserved total for its device (plain allocations,
 *   VMM physical memory, arrays; stream-ordered memory counts through its pool instead);
 * - bounded: counted in the reader's check that a device holds no more than it has. */
#define VT_KINDS(X)                                                                                              \
    X(VT_KIND_DEVICE, "device", 0, 0, 1, 1)               /* cuMemAlloc, cuMemAllocPitch */                      \
    X(VT_KIND_MANAGED, "managed", 0, 0, 0, 0)             /* cuMemAllocManaged */                                \
    X(VT_KIND_HOST, "host_pinned", 0, 0, 0, 0)            /* cuMemAllocHost, cuMemHostAlloc */                   \
    X(VT_KIND_ASYNC, "async", 0, 0, 0, 1)                 /* stream-ordered: lives in a pool */                  \
    X(VT_KIND_VMM_MAP, "vmm_map", 0, 1, 0, 0)             /* a physical handle mapped into reserved address space */ \
    X(VT_KIND_VA, "va_reserved", 0, 2, 0, 0)              /* cuMemAddressReserve: address space, not memory */   \
    X(VT_KIND_PHYS, "vmm_physical", 1, 0, 1, 1)           /* cuMemCreate on a device */                          \
    X(VT_KIND_PHYS_HOST, "vmm_physical_host", 1, 0, 0, 0) /* cuMemCreate on HOST or HOST_NUMA */                 \
    X(VT_KIND_BLOCK, "block", 0, 3, 0, 0)                 /* a caching allocator's block (vramtrace_block_alloc) */ \
    X(VT_KIND_ARRAY, "array", 0, 4, 1, 0)                 /* a CUDA array or mipmapped array, keyed by its handle */ \
    X(VT_KIND_HOST_REG, "host_registered", 0, 5, 0, 0)    /* host memory the program pinned itself */            \
    X(VT_KIND_IMPORTED, "imported", 0, 0, 0, 0)           /* another owner's memory mapped here: IPC, pool imports */ \
    X(VT_KIND_EXTERNAL, "external", 0, 6, 0, 0)           /* an external memory object, keyed by its handle */   \
    X(VT_KIND_GRAPH, "graph", 0, 0, 0, 0)                 /* a CUDA graph's allocation node, live from a launch */

#define VT_KIND_ENUM_ITEM(e, ...) e,
enum vt_kind { VT_KINDS(VT_KIND_ENUM_ITEM) VT_KIND_COUNT };
#undef VT_KIND_ENUM_ITEM

/* The table's columns as functions. The numbers are packed into constants at build time (3 bits of space,
 * 1 of record, reserved and bounded a kind), so a look-up is a shift, with no branch and no memory read:
 * the hooks ask for a kind's space at every allocation and free. */
#define VT_KIND_BITS_SPACE(e, word, rec, space, reserved, bounded) | ((unsigned long long)(space) << (3 * (e)))
#define VT_KIND_BITS_REC(e, word, rec, space, reserved, bounded) | ((unsigned)(rec) << (e))
#define VT_KIND_BITS_RESERVED(e, word, rec, space, reserved, bounded) | ((unsigned)(reserved) << (e))
#define VT_KIND_BITS_BOUNDED(e, word, rec, space, reserved, bounded) | ((unsigned)(bounded) << (e))
_Static_assert(VT_KIND_COUNT <= 21, "a kind's space is 3 bits of one 64-bit constant");
static inline unsigned vt_kind_space(enum vt_kind k)
{
    return (unsigned)(((0ull VT_KINDS(VT_KIND_BITS_SPACE)) >> (3 * (unsigned)k)) & 7u);
}
static inline int vt_kind_record(enum vt_kind k)
{
    return (int)(((0u VT_KINDS(VT_KIND_BITS_REC)) >> (unsigned)k) & 1u);
}
static inline int vt_kind_reserved(enum vt_kind k)
{
    return (int)(((0u VT_KINDS(VT_KIND_BITS_RESERVED)) >> (unsigned)k) & 1u);
}
static inline int vt_kind_bounded(enum vt_kind k)
{
    return (int)(((0u VT_KINDS(VT_KIND_BITS_BOUNDED)) >> (unsigned)k) & 1u);
}
#undef VT_KIND_BITS_SPACE
#undef VT_KIND_BITS_REC
#undef VT_KIND_BITS_RESERVED
#undef VT_KIND_BITS_BOUNDED
#define VT_KIND_CASE_WORD(e, word, rec, space, reserved, bounded) case e: return word;
static inline const char *vt_kind_word(enum vt_kind k) { switch (k) { VT_KINDS(VT_KIND_CASE_WORD) default: return "?"; } }
#undef VT_KIND_CASE_WORD

/* A stack's return address that lay in code unloaded since (dlclose): written in its place, named so. */
#define VT_PC_UNLOADED 0x1
#define VT_PC_UNLOADED_NAME "(code unloaded since)"

/* A counter's line, in the writer's format strings (its value a %llu). */
#define VT_COUNTER_LINE(name) VT_REC_COUNTER " " name " %llu\n"

/* Counters (`counter NAME N`) that the reports read. */
/* The process's libcuda is the bundled fake driver (tests/fake: it exports vramtrace_fake_driver), whose
 * calls cost nothing: the library's share of the CPU then looks large. */
#define VT_CTR_FAKE_DRIVER "fake_driver"
/* Some sites of memory live at a device's peak could not be kept (out of memory): its sites are not whole. */
#define VT_CTR_PEAK_LOST "peak_sites_lost"
/* CUDA graph captures that were still under way when the dump was written: the driver was asked
 * nothing of a context (free memory, pools, limits), which could have broken them. */
#define VT_CTR_CAPTURING "capturing"
#define VT_CTR_OOM_EVENTS "oom_events"
#define VT_CTR_NATIVE_REUSED "native_reused"
#define VT_CTR_SELF_HOOK_SAMPLES "self_hook_samples"
/* Timed hook calls longer than this many µs are left out of the self cost, and counted (vt_selfcost.h). */
#define VT_CTR_SELF_HOOK_OUTLIERS "self_hook_outliers"
#define VT_SELF_OUTLIER_US 50
/* One hook call in this many is timed (lib/core/vt_selfcost.h), an odd prime: a thread that alternates
 * allocations and frees has both timed. */
#define VT_SELF_EVERY 61
#define VT_CTR_SELF_HOOK_NS "self_hook_ns"
#define VT_CTR_SELF_PY_NS "self_py_ns"
#define VT_CTR_SELF_NATIVE_NS "self_native_ns"
#define VT_CTR_SELF_THREADS_NS "self_threads_ns"
#define VT_CTR_PROCESS_CPU_NS "process_cpu_ns"
/* The Python call sites' counters, in the order reports give them. */
#define VT_CTR_PY_HELD "py_held"
#define VT_CTR_PY_RELEASED "py_released"
#define VT_CTR_PY_MISSED "py_missed"
#define VT_CTR_PY_NATIVE "py_native"
#define VT_CTR_PY_WALKED "py_walked"
#define VT_CTR_PY_UNCHECKED "py_unchecked"
/* The GIL the bridge's code took to compile ahead of the first dump, and waited for it (ns; 0: not). */
#define VT_CTR_BRIDGE_WARM_NS "bridge_warm_ns"
#define VT_CTR_BRIDGE_WARM_WAIT_NS "bridge_warm_wait_ns"
#define VT_CTR_PY_FRAMES "py_frames"
#define VT_CTR_PY_CODE_READS "py_code_reads"
#define VT_CTR_PY_LOOKUPS "py_lookups"
/* 1 when the interpreter's running flags and this thread's state are read straight, 0 when asked. */
#define VT_CTR_PY_STATE_READ "py_state_read"

#endif
