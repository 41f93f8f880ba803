/* Reading a dump file (docs/FORMAT.md) into memory, with every field checked. Shared by the vramtrace
 * command, the library's metrics file (which reads the dump it just wrote) and the tests. */
#ifndef VT_DUMPFILE_H
#define VT_DUMPFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vt_format.h"

#define VT_DF_UNKNOWN UINT64_MAX

struct vt_df_device {
    int ordinal;
    uint64_t total, free; /* VT_DF_UNKNOWN when not known */
    uint64_t reserved, reserved_peak;
    uint64_t process_used; /* NVML, VT_DF_UNKNOWN when not known */
    uint64_t graph_reserved, graph_used; /* CUDA graphs' allocation nodes, VT_DF_UNKNOWN when not read */
    /* version 5 (the limits record): the context's malloc heap, stack per thread, resident threads,
     * printf FIFO; has_limits 0 (and these VT_DF_UNKNOWN) without it. */
    int has_limits;
    uint64_t malloc_heap, stack_per_thread, resident_threads, printf_fifo;
};

/* Version 8: a device's peak of reserved memory, and when (CLOCK_MONOTONIC; VT_DF_UNKNOWN: the dump's
 * own moment). */
struct vt_df_peak {
    unsigned long line;
    int device;
    uint64_t bytes, time_ns;
};

/* Version 8: memory live at a device's peak and freed since, by site (vt_model.c adds the entries still
 * live that were made by then). */
struct vt_df_peak_freed {
    unsigned long line;
    int device;
    uint32_t stack;
    int kind; /* enum vt_kind */
    const char *api;
    uint64_t bytes;
};

struct vt_df_pool {
    uint64_t handle;
    int device;
    int is_default;
    uint64_t reserved, used, reserved_high, used_high; /* VT_DF_UNKNOWN when not known */
    uint64_t threshold;
    int threshold_known;
};

struct vt_df_api {
    char name[48];
    uint64_t calls, allocs, frees, bytes_alloc, bytes_freed, failed;
};

struct vt_df_named {
    char name[48];
    uint64_t count, bytes;
};

struct vt_df_kind {
    char name[24];
    uint64_t count, bytes;                              /* live now */
    uint64_t allocs, frees, bytes_alloc, bytes_freed;   /* since the start */
};

struct vt_df_module {
    int index;
    uint64_t base, lo, hi;
    char build_id[132];
    char *path;
};

struct vt_df_stack {
    unsigned long line;
    uint32_t id;
    uint32_t n;
    uint64_t *pc;
    uint32_t pystack; /* version 3: the Python stack of the allocating thread, 0 for none */
};

struct vt_df_frame {
    uint64_t pc;
    char *name; /* "sym+0xoff", or NULL */
};

/* The entries of a large dump are most of the reader's memory, so an entry keeps what the reports use:
 * not its stream, offset, sequence number or time (checked as they are read), and its kind and API name
 * are the dump's own copies, one per distinct name (a dump of a million entries has a few dozen). */
/* 56 bytes: a large dump holds millions (8 more a million entries is 8 MB more in every report, and
 * trend holds two dumps' at once). The line's pool field is checked, not kept: no report reads it. */
struct vt_df_alloc {
    uint32_t line; /* where it is in the file (UINT32_MAX: past it) */
    uint32_t stack;
    int tid;
    int16_t device; /* -1 .. 1023 */
    uint8_t kind;   /* enum vt_kind (common/vt_format.h), its word at most VT_DF_KIND_LEN - 1 characters */
    uint64_t addr, size;
    uint64_t time_ns; /* when it was made, CLOCK_MONOTONIC nanoseconds */
    uint64_t handle;  /* a VMM mapping's physical handle */
    const char *api;  /* at most VT_DF_API_LEN - 1 */
};
_Static_assert(VT_KIND_COUNT <= 255, "struct vt_df_alloc keeps a kind in 8 bits");

struct vt_df_phys {
    unsigned long line;
    uint64_t handle, size, seq, time_ns;
    uint32_t stack;
    int device, refs, maps, tid;
    enum vt_kind kind;
    const char *api;
};
#define VT_DF_KIND_LEN 24
#define VT_DF_API_LEN 48

/* A request that failed for lack of memory (version 4: `failed`; versions 1-3 had only the latest one,
 * `oom`, read as a failed request of count 1). */
struct vt_df_failed {
    unsigned long line;
    uint64_t seq, size, count, first_ns, last_ns;
    uint64_t free_then; /* VT_DF_UNKNOWN when not known */
    uint32_t stack;
    int device, result;
    char api[48];
};

/* What the bridges wrote (docs/FORMAT.md, "Caching allocators"). */
struct vt_df_python {
    int present;
    char status[16];       /* ok, timeout, busy, finalizing, skipped, error */
    uint64_t wait_ns, run_ns;
    char *detail;          /* NULL for none */
    char history[16];      /* torch's block history: on, off, later, waiting */
    char *history_detail;
};

/* The CPython the process hosts (version 3), and where its code lies: native frames there are the
 * interpreter's own, which Python frames stand in for. */
struct vt_df_interpreter {
    int present;
    char version[32];
    char capture[16]; /* Python call sites: on, off or unsupported */
    uint64_t lo, hi;
};

/* Torch's trace tracker (version 7): on, the dump's torch segments come from it and torch's blocks are
 * entries of kind block (api torch), each with its stack; off or waiting, torch's blocks come as before. */
struct vt_df_tracker {
    int present, on;
    char state[16]; /* on, off, waiting */
    char *detail;
};

struct vt_df_bridge {
    char name[24];
    char status[16]; /* ok, absent, error */
    char *detail;
};

struct vt_df_allocator {
    char name[24];
    int device;
    char backend[32];
    uint64_t allocated, reserved; /* the allocator's own totals; VT_DF_UNKNOWN when not given */
};

enum vt_df_block_state { VT_BLOCK_ACTIVE, VT_BLOCK_PENDING_FREE, VT_BLOCK_INACTIVE };

struct vt_df_segment {
    unsigned long line;
    uint64_t addr, size;
    int device, expandable;
    char allocator[24];
    char type[16];  /* torch: small or large */
    char pool[24];
    size_t first_block, nblocks; /* its blocks in vt_dumpfile.blocks */
};

struct vt_df_block {
    unsigned long line;
    uint64_t addr, size, requested;
    int state;        /* enum vt_df_block_state */
    uint32_t pystack; /* 0: no stack */
    size_t segment;
};

struct vt_df_pyframe {
    uint32_t id, line;
    char *func, *file;
};

struct vt_df_pystack {
    unsigned long line;
    uint32_t id, n;
    uint32_t *frames; /* pyframe ids, innermost first */
};

/* version 5: a device allocation that a native allocator holds as its segment. */
struct vt_df_pool_segment {
    uint64_t addr;
    char allocator[32];
};

/* version 5: live memory an allocator reports by call site without addresses (JAX's device memory
 * profile): COUNT buffers of BYTES in all, allocated at Python stack PYSTACK. */
struct vt_df_held {
    unsigned long line;
    char allocator[24];
    int device;
    uint64_t count, bytes;
    uint32_t pystack;
};

/* version 5: the Python stack a thread of the program was running when the bridges ran. */
struct vt_df_running {
    unsigned long line;
    uint32_t pystack;
    int tid; /* version 7: the thread's kernel id; -1 when not known */
    /* version 7: CLOCK_MONOTONIC nanoseconds no later than when its stack was read; VT_DF_UNKNOWN when
     * not known. Its entries stamped after that were made after we looked (vt_model.c). */
    uint64_t at;
};

struct vt_dumpfile {
    int version;
    long pid, ppid;
    char *exe;
    char *cmdline; /* version 4: the command line as written (arguments apart by spaces, \xHH escapes); NULL before */
    char reason[16];
    unsigned long seq;
    uint64_t time_wall, time_mono, start_wall, start_mono;
    int depth;
    struct vt_df_device *devices;
    size_t ndevices;
    struct vt_df_peak *peaks;
    size_t npeaks;
    struct vt_df_peak_freed *peak_freed;
    size_t npeak_freed;
    struct vt_df_pool *pools;
    size_t npools;
    struct vt_df_named *counters;
    size_t ncounters;
    struct vt_df_api *apis;
    size_t napis;
    struct vt_df_kind *kinds;
    size_t nkinds;
    struct vt_df_named *unwatched;
    size_t nunwatched;
    struct vt_df_failed *failed; /* newest first */
    size_t nfailed;
    struct vt_df_module *modules;
    size_t nmodules;
    struct vt_df_stack *stacks;
    size_t nstacks;
    struct vt_df_frame *frames;
    size_t nframes;
    struct vt_df_alloc *allocs;
    size_t nallocs;
    struct vt_df_phys *phys;
    size_t nphys;
    struct vt_df_python python;
    struct vt_df_tracker tracker;
    struct vt_df_interpreter interpreter;
    struct vt_df_bridge *bridges;
    size_t nbridges;
    struct vt_df_allocator *allocators;
    size_t nallocators;
    struct vt_df_segment *segments;
    size_t nsegments;
    struct vt_df_block *blocks;
    size_t nblocks;
    struct vt_df_pyframe *pyframes; /* sorted by id */
    size_t npyframes;
    struct vt_df_pystack *pystacks; /* sorted by id */
    size_t npystacks;
    struct vt_df_running *running;
    size_t nrunning;
    struct vt_df_held *held;
    size_t nheld;
    struct vt_df_pool_segment *pool_segments;
    size_t npool_segments;
    struct vt_df_names *names; /* the kind and API names entries point to */
};

/* Reads path. On failure returns -1 and writes "PATH:LINE: what is wrong" into err. */
int vt_dumpfile_read(const char *path, struct vt_dumpfile *d, char *err, size_t errlen);
/* The same, telling progress(arg, bytes read, file size) every 65,536 lines, for a long read. */
typedef void (*vt_df_progress_fn)(void *arg, uint64_t done, uint64_t size);
int vt_dumpfile_read_progress(const char *path, struct vt_dumpfile *d, char *err, size_t errlen,
                              vt_df_progress_fn progress, void *arg);
/* The same from an open stream; name is what error messages call it. */
int vt_dumpfile_parse(FILE *f, const char *name, struct vt_dumpfile *d, char *err, size_t errlen);
void vt_dumpfile_free(struct vt_dumpfile *d);
/* Gives back the entries (allocs, phys) and the native stacks and frames, most of a large dump's
 * memory, once a model is built from it (its sites have their frames): the rest stays readable. */
void vt_dumpfile_shed(struct vt_dumpfile *d);

/* Look-ups (NULL / 0 when absent). */
const struct vt_df_stack *vt_df_stack(const struct vt_dumpfile *d, uint32_t id);
const char *vt_df_frame_name(const struct vt_dumpfile *d, uint64_t pc);
uint64_t vt_df_counter(const struct vt_dumpfile *d, const char *name);
const struct vt_df_api *vt_df_api(const struct vt_dumpfile *d, const char *name);
const struct vt_df_kind *vt_df_kind(const struct vt_dumpfile *d, const char *name);
const struct vt_df_module *vt_df_module_of(const struct vt_dumpfile *d, uint64_t pc);
const struct vt_df_pystack *vt_df_pystack(const struct vt_dumpfile *d, uint32_t id);
const struct vt_df_pyframe *vt_df_pyframe(const struct vt_dumpfile *d, uint32_t id);

#endif
