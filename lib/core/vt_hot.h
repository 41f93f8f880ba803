/* Marks for the code's layout. A hook runs between long stretches of the program's own work, which push
 * our code out of the near caches: every cache line of code a hook touches is a miss (docs/performance.md,
 * 2026-12-04). So what a hook rarely does is kept out of the lines it always runs: functions called
 * rarely are declared __attribute__((cold)) (the compiler also moves the blocks that call them out of
 * line), tests that are rarely true say so with VT_UNLIKELY, and the common case of a test the compiler
 * would otherwise lay out as a jump away says so with VT_LIKELY. The functions every allocation and free
 * go through are VT_HOT: the compiler puts them together (.text.hot), so the path is a few runs of
 * adjacent lines, which the processor fetches ahead, not one or two lines in each of a dozen files. */
#ifndef VT_HOT_H
#define VT_HOT_H

#define VT_HOT __attribute__((hot))
#define VT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VT_LIKELY(x) __builtin_expect(!!(x), 1)

/* The same for data. The read-mostly words every hook reads (is the library active, is a stream being
 * captured, which clock, is the Python walk trusted, ...) were scattered over the data sections, each
 * on a line of its own, and each a miss at every call (cachegrind: ~15 lines a pair of the defaults'
 * ~130, docs/performance.md 2026-12-06 third). They live here together, on two adjacent lines, as
 * Linux keeps its networking's hot read-mostly fields (net_hotdata). Each is written by the one module
 * named beside it, and rarely: a word written at every call would move these lines, and every hook's
 * reads with them, from core to core. */
#include <stdatomic.h>
#include <stdint.h>

struct vt_pylayout;
struct vt_hotdata {
    atomic_int active;         /* vt_module.h: 2 once this process has made a CUDA call */
    int tsc_mode;              /* vt_clock.h: 0 not decided, 1 the TSC, 2 nanoseconds */
    atomic_int graph_captures; /* vt_driver_graph.h: stream captures under way */
    atomic_int history_state;  /* vt_history.h */
    atomic_int torch_watch;    /* vt_torch.h: torch's trace tracker is not attached and checked yet */
    int interp_direct;         /* vt_python.c: -1 not checked, 0 ask the interpreter, 1 read straight */
    int rt_direct;             /* vt_python.c: the same, for the runtime's state */
    int pc_decided;            /* vt_pycapture.c: set once vt_pc_decide has run (a capture then reads a flag) */
    int pc_on;                 /* vt_pycapture.c: Python call sites are taken */
    int pc_walk;               /* vt_pycapture.c: 1 the walk is trusted, 0 not checked yet, -1 not used */
    int code_watched;          /* vt_pystack.c: the interpreter tells us of code objects made and freed */
    const int *rt_initialized; /* vt_python.c: the runtime's initialized flag, read straight */
    const struct vt_pylayout *layout; /* vt_pystack.c: set once the walk may be used */
    uint64_t code_gen;         /* vt_pystack.c: code objects freed so far (the memo's generation) */
    uintptr_t self_lo, self_hi; /* vt_stack.c: our own code, whose frames a stack leaves out */
} __attribute__((aligned(128)));
extern struct vt_hotdata vt_hotdata;

#endif
