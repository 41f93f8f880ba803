/* What a dump means: per-device accounting (process used, reserved, allocated, cached, overhead: the
 * README's words) and the call sites holding live memory, keyed by frames that do not depend on where the
 * modules were loaded, so sites match across dumps and across runs; and, beside it, the report's result
 * (vt_result.h). Built once per dump, in steps (vt_model.c); report, diff, trend, html and the library's
 * metrics file all read it. */
#ifndef VT_MODEL_H
#define VT_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vt_dumpfile.h"
#include "vt_result.h"
#include "vt_views.h"

#define VT_MAX_DEV 64
#define VT_MAX_LIBS 16

struct vt_symbolizer;

/* Bytes per CUDA library (cuBLAS, NCCL...), largest first. */
struct vt_libs {
    struct {
        char name[16];
        uint64_t bytes;
    } v[VT_MAX_LIBS];
    int n;
};

/* Adds bytes to name (a new name past VT_MAX_LIBS is left out). */
void vt_libs_add(struct vt_libs *l, const char *name, uint64_t bytes);

struct vt_site {
    char *key;        /* kind, api and frames: the identity matched across dumps */
    char kind[24];
    char api[48];
    char **frames;    /* innermost first, folded to useful frames unless full stacks were asked for */
    uint32_t nframes;
    const char **mangled; /* per frame, the C++ name the dump recorded where the frame shows it demangled
                             (NULL where not); NULL when no frame was (JSON's "mangled") */
    uint32_t python_at; /* frames from here on are Python frames (nframes: none) */
    uint32_t name_at;   /* the frame that names the site in one line (0 when it has none) */
    uint32_t name_base; /* name_at before allocation helpers were passed (vt_labels.h) */
    char *label;        /* "INNER via NAME" where sites that name_at's frame names alike part inside it
                           (vt_labels.h); NULL: the frame alone */
    int device;
    int role;         /* enum vt_role: allocated, a pool's cache (a pseudo-site), or an allocator's segments */
    char library[16]; /* "cuBLAS", "NCCL"...: the CUDA library the stack runs through; "" for none */
    uint64_t count, bytes;
    /* How many of the program's threads were, at the dump, still inside the call that allocated here
     * (vt_model.c, vt_running_holds): up to that many of its entries are in flight, a request's
     * temporaries rather than memory kept. 0 without Python frames. */
    uint32_t in_flight;
    /* Its entries made after their thread was looked at (the running record's time, version 7): a
     * request that started after the threads' stacks were read, in flight as surely. */
    uint32_t young;
    int unstacked;    /* an allocator's blocks it recorded no stack for (torch's history was off then) */
    /* Its entries by thread: the most one thread holds, and whether every one is held by a thread alive
     * at the dump (version 7 names them): what each live thread's last request may still hold in its
     * frames, which two dumps cannot tell from a leak (diff). tallied/dead_threads: while building. */
    uint32_t max_per_thread;
    int by_live_threads;
    uint64_t tallied, dead_threads;
    /* What it held at its device's peak of reserved memory (vt_dev.peak): its entries made by then still
     * live, and those freed since (version 8). A site with only these has no live bytes: it is kept
     * apart (vt_model.peak_only), out of every list of live memory. */
    uint64_t peak_bytes;
};

struct vt_dev {
    int device;
    uint64_t total, free;          /* VT_DF_UNKNOWN when the dump does not say */
    uint64_t process_used;         /* NVML's figure; VT_DF_UNKNOWN when the dump has none */
    uint64_t reserved, allocated;  /* always known */
    uint64_t cached, releasable, fragmented; /* VT_DF_UNKNOWN without an allocator's view */
    uint64_t overhead;             /* process used - reserved; VT_DF_UNKNOWN without process used */
    uint64_t managed;
    uint64_t plain, vmm, pool_reserved, pool_used, async_live, graph_live;
    uint64_t pool_cached;          /* free memory the pools (and the graph-memory pool) keep */
    uint64_t graph_reserved, graph_used; /* CUDA graphs' allocation nodes (0 when not read) */
    int pools_known;
    int has_views;                 /* a caching allocator's view covers this device */
    struct vt_libs libs;           /* memory CUDA libraries took for themselves here */
    /* The overhead in parts, where the context's limits are known (has_limits): what they let the
     * driver set aside for local memory (stack per thread x resident threads), the device malloc heap
     * and the printf FIFO (VT_DF_UNKNOWN where not read), and what is left (internals: VT_DF_UNKNOWN
     * without an overhead, or when the parts are more than it: they are set aside lazily). */
    int has_limits;
    uint64_t local_memory, malloc_heap, printf_fifo, internals, stack_per_thread, resident_threads;
    /* The most reserved memory the process held here, and when (CLOCK_MONOTONIC; VT_DF_UNKNOWN: not
     * said, or the dump's own moment); peak_sites: what was live then is known by site (version 8), and
     * peak_attributed of it is at sites (the rest: other threads' bytes not yet counted when the peak
     * was taken, or sites the library could not keep: vt_model.peak_lost). */
    uint64_t peak, peak_time_ns, peak_attributed;
    int peak_sites;
};

/* What vramtrace cost the process up to the dump, from its own counters (lib/core/vt_selfcost.h); has = 0
 * for a dump written before they existed. */
struct vt_self_cost {
    int has;
    uint64_t hook_ns, threads_ns, process_ns, calls;
    int has_parts;               /* the hooks' time split (dumps from this version on) */
    uint64_t py_ns, native_ns;   /* of hook_ns: reading Python frames, unwinding native ones */
    /* As the dump has them: the kept timed calls' times, and how many timed calls were kept and left
     * out (self_hook_outliers: none in older dumps); hook_ns, py_ns and native_ns are these scaled by
     * (samples + outliers) / samples, the left out taken as the kept ones' mean. */
    uint64_t hook_raw, py_raw, native_raw, samples, outliers;
    int fake_driver; /* the process ran on the bundled fake driver, whose calls cost nothing */
};

/* new - old, for two dumps of one process (has = 0 unless both have the counters and new is later). */
struct vt_self_cost vt_self_cost_between(const struct vt_self_cost *old, const struct vt_self_cost *new);

struct vt_model {
    const struct vt_dumpfile *d;
    struct vt_dev dev[VT_MAX_DEV + 1]; /* the last slot collects entries of no known device */
    int ndev;                           /* devices in use: indexes of dev[] below */
    int devidx[VT_MAX_DEV + 1];
    uint64_t host_pinned, va_reserved;
    uint64_t host_registered;           /* host memory the program pinned itself (cuMemHostRegister) */
    uint64_t imported, external;        /* other owners' memory mapped here; external memory objects */
    struct vt_site *sites;              /* sorted by live bytes, largest first */
    size_t nsites;
    size_t npeak_only;                  /* sites[nsites...] hold memory at a peak only (vt_site.peak_bytes) */
    int peak_lost;                      /* the library could not keep every site of a peak */
    void *index;                        /* key -> site */
    struct vt_site *failed;             /* the dump's failed requests (kind "failed", bytes: the size
                                           asked for, count: how often), in the dump's order: newest first */
    size_t nfailed;
    struct vt_symbolizer *sym;          /* NULL: the names recorded in the dump only */
    void *names;                        /* the frames' strings, one copy each (vt_model.c) */
    struct vt_views views;              /* the caching allocators' views (vt_views.h) */
    struct vt_self_cost self;
    struct vt_result result;            /* what the reports say besides the memory (vt_result.h) */
};

/* What the model asks for a PC's frames, innermost inlined call first, each "function (file:line)",
 * joined by '\n' (NULL: not known). The command gives it libdw's (tools/vt_symbols.c) once at its start;
 * the library's metrics file the same, built on its own as VT_SYMBOLIZER_SO beside the library and found
 * there by the name VT_SYMBOLIZER_OPS, where it can be loaded; else frames keep the names the dump
 * carries. */
#define VT_SYMBOLIZER_SO "libvramtrace-symbols.so"
#define VT_SYMBOLIZER_OPS "vt_libdw_symbolizer"
struct vt_symbolizer_ops {
    struct vt_symbolizer *(*open)(const struct vt_dumpfile *d); /* NULL when nothing could be opened */
    const char *(*frames)(struct vt_symbolizer *s, uint64_t pc); /* valid until close */
    void (*close)(struct vt_symbolizer *s);
};
void vt_model_use_symbolizer(const struct vt_symbolizer_ops *ops);
/* A C++ demangler for the names a dump records (dladdr's "_ZN...+0x1c"), where no symbolizer names a
 * frame: fn returns the demangled name (malloc'd) or NULL. The command gives libstdc++'s; the library
 * the process's own, where it has one loaded. */
void vt_model_use_demangler(char *(*fn)(const char *mangled));

#define VT_MODEL_FULL_STACKS 1 /* keep every frame (--full-stacks) */
#define VT_MODEL_NO_SYMBOLS 2  /* do not read the modules' files */

/* Returns 0, or -1 when out of memory. */
int vt_model_build(const struct vt_dumpfile *d, int flags, struct vt_model *m);
void vt_model_free(struct vt_model *m);
/* Gives back what only building needed (the views' role of each entry, the symbolizer): for a reader
 * that keeps many models at once (trend). */
void vt_model_shed(struct vt_model *m);
/* Whether some allocator keeps a cache in this dump (an allocator's segments, a pool's free memory, not
 * empty): only then can reserved growth without allocated growth be called cache. */
int vt_model_keeps_cache(const struct vt_model *m);
/* "allocated", "cache" or "segment": how diff and trend class a site's growth. */
const char *vt_site_class(const struct vt_site *s);
const struct vt_site *vt_model_find(const struct vt_model *m, const char *key);
/* The one frame that names a site ("handle (serve.py:88)"), or NULL when it has none. */
const char *vt_site_name(const struct vt_site *s);
/* The sites that held memory at device dev's peak, largest part first, into out (at most max); returns
 * how many there are. */
size_t vt_model_peak_sites(const struct vt_model *m, int dev, const struct vt_site **out, size_t max);
/* The device accounting for ordinal dev (-1: entries of no known device), or NULL. */
const struct vt_dev *vt_model_dev(const struct vt_model *m, int dev);

#endif
