/* What a report says besides where the memory is: the process and the dump, its Python (the interpreter
 * and how its call sites were read, the bridges, torch's block history), the requests that failed for
 * lack of memory, and the counters the reports show. Built with the model (vt_model_build) from the
 * dump, so that every renderer (text, JSON, pprof, HTML, Prometheus) reads the model and this, never the
 * parsed dump. Short words are copied; longer strings point into what the dump allocated, which outlives
 * the model and stays where it is when the dump itself is moved (vt_cmd_html.c moves them). */
#ifndef VT_RESULT_H
#define VT_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "vt_dumpfile.h"

struct vt_result_bridge {
    const char *name, *status, *detail; /* detail NULL: none */
};

struct vt_result_python {
    int present;                   /* the bridges ran, or said why not */
    char status[16];               /* ok, timeout, busy, finalizing, skipped, error */
    const char *detail;            /* NULL: none */
    uint64_t gil_wait_ns, run_ns;
    uint64_t warm_ns; /* the GIL held to compile the bridge's code ahead of the first dump (0: not done) */
    char history[16];              /* torch's block history: on, off, later, waiting; "" when not said */
    const char *history_detail;    /* NULL: none */
    struct vt_result_bridge *bridges;
    size_t nbridges;
};

/* Allocations by how their Python frames were read, and the frame walk's own counts. */
struct vt_result_interp {
    int present;
    char version[32], capture[16]; /* capture: on, off or unsupported */
    uint64_t held, released, missed, native, walked, native_reused;
    uint64_t unchecked; /* of walked: by the careful walk before the helper could check it */
    uint64_t frames, code_reads, lookups, state_read;
};

/* A failed request's figures, beside its site (the model's failed[i]). */
struct vt_result_failed {
    int device, result;
    uint64_t size, count, first_ns, last_ns;
    uint64_t free_then; /* VT_DF_UNKNOWN when not read */
    uint64_t ago_ns;    /* from its last time to the dump; VT_DF_UNKNOWN when the clock says after */
};

/* How much of the device memory handed to the program has a call site, by who handed it out: a caching
 * allocator's blocks by its name, the program's own driver and runtime allocations as "driver". */
#define VT_RESULT_COVERAGE 16
struct vt_result_coverage {
    char allocator[48];
    uint64_t allocated, with_stack; /* bytes */
};

struct vt_result {
    long pid;
    const char *exe; /* NULL: not known */
    char reason[16];
    int at_exit;     /* the exit dump: its live sites are leaks */
    unsigned long seq;
    uint64_t time_wall, uptime_ns;
    struct vt_result_python python;
    char tracker[16];           /* torch's trace tracker: on, off, waiting; "" when the dump says nothing */
    const char *tracker_detail; /* NULL: none */
    struct vt_result_interp interp;
    struct vt_result_failed *failed;
    size_t nfailed;
    uint64_t oom_events, capturing;       /* counters */
    uint64_t api_allocs, api_frees, api_failed; /* summed over the dump's entry points */
    struct vt_result_coverage coverage[VT_RESULT_COVERAGE]; /* largest first; the last collects the rest */
    int ncoverage;
    uint64_t allocated, with_stack; /* over all of them */
};

struct vt_site;
/* The coverage, from the model's sites (allocated memory on a device). */
void vt_result_coverage(struct vt_result *r, const struct vt_site *sites, size_t n);

/* 0, or -1 when out of memory (nothing left to free then). */
int vt_result_build(const struct vt_dumpfile *d, struct vt_result *r);
void vt_result_free(struct vt_result *r);

#endif
