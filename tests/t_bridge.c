/* Caching allocators' views on the CPU. The native hooks: examples/native_pool.c reports its blocks
 * through vramtrace_block_alloc/free. The torch bridge: a Python program (tests/progs/torch_prog.py) allocates through a fake
 * torch (tests/fake/torch) whose segments come from the fake CUDA runtime, and every bridge path is
 * driven: success with block history, cache growth, a GIL held past the timeout, an allocator that
 * raises, a finalizing interpreter, the cudaMallocAsync backend, history and bridges switched off, and
 * a Python process without torch. Figures are compared with what the fake torch says of itself. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PYTHON "/usr/bin/python3"

static char script[1200], pypath[1200];

static void py(struct run *r, const char *mode, const char *const *more_env)
{
    const char *env[8] = {pypath};
    int n = 1;
    for (const char *const *e = more_env; e && *e && n < 7; e++)
        env[n++] = *e;
    const char *args[] = {script, mode, NULL};
    run_prog(r, PYTHON, args, env, 1);
}

/* vramtrace VERB ARGS... with output in r. */
static void cmd(struct run *r, const char *a0, const char *a1, const char *a2, const char *a3)
{
    const char *args[] = {a0, a1, a2, a3, NULL};
    run_prog(r, "../vramtrace", args, NULL, 0);
}

/* The four figures the program printed for a dump: allocated, reserved, releasable, fragmented. */
struct figures {
    char path[700];
    uint64_t allocated, reserved, releasable, fragmented;
};

static int get_figures(const struct run *r, const char *tag, struct figures *f)
{
    char want[32];
    snprintf(want, sizeof want, "figures %s ", tag);
    const char *p = strstr(r->out, want);
    return p && sscanf(p + strlen(want), "%699s %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, f->path, &f->allocated,
                       &f->reserved, &f->releasable, &f->fragmented) == 5;
}

static const char *record(const struct run *r, const char *path, const char *prefix, char *buf, size_t len)
{
    (void)r;
    char *text = read_text(path);
    const char *p = text ? strstr(text, prefix) : NULL;
    if (!p) {
        free(text);
        return NULL;
    }
    size_t n = strcspn(p, "\n");
    snprintf(buf, len, "%.*s", (int)n, p);
    free(text);
    return buf;
}

static void test_leak(void)
{
    struct run r, c;
    struct figures f1, f2, f3;
    char buf[512];
    const char *always[] = {"VRAMTRACE_TORCH_HISTORY=always", NULL};
    py(&r, "leak", always);
    int ran = r.status == 0 && get_figures(&r, "first", &f1) && get_figures(&r, "second", &f2) &&
              get_figures(&r, "third", &f3);
    if (!ok(ran, "leak: the program ran under the library, with two dumps")) {
        diag("status %d, out: %s, err: %s", r.status, r.out, r.err);
        run_free(&r);
        return;
    }
    ok(!strstr(r.err, "Traceback") && !strstr(r.err, "vramtrace:"), "leak: nothing on the program's stderr");
    ok(record(&r, f1.path, "python ok ", buf, sizeof buf) != NULL, "dump: the interpreter was reached (python ok)");
    ok(record(&r, f1.path, "bridge torch ok", buf, sizeof buf) && record(&r, f1.path, "bridge cupy absent", buf, sizeof buf),
       "dump: torch bridged, cupy said absent");
    ok(strstr(r.out, "history calls [('state', 'alloc', 'python')]") != NULL,
       "history: switched on once, with enabled=state, context=alloc, stacks=python");
    ok(record(&r, f1.path, "history torch on", buf, sizeof buf) != NULL, "dump: history on");

    cmd(&c, "report", f2.path, "--json", NULL);
    const char *torch = "\"allocators\":[{\"name\":\"torch\"";
    ok(c.status == 0 && strstr(c.out, torch), "report --json: a torch view");
    is_u64(json_num(c.out, torch, "allocated"), f2.allocated, "torch allocated = memory_allocated()");
    is_u64(json_num(c.out, torch, "reserved"), f2.reserved, "torch reserved = memory_reserved()");
    is_u64(json_num(c.out, torch, "releasable"), f2.releasable, "releasable = the snapshot's wholly free segments");
    is_u64(json_num(c.out, torch, "fragmented"), f2.fragmented, "fragmented = free blocks inside used segments");
    is_u64(json_num(c.out, torch, "segments_unmatched"), 0, "cross-check: every torch segment is a driver allocation");
    is_u64(json_num(c.out, "\"devices\":[", "allocated"), f2.allocated,
           "device allocated: torch's segments replaced by their live blocks");
    is_u64(json_num(c.out, "\"devices\":[", "cached"), f2.reserved - f2.allocated, "device cached = reserved - allocated");
    is_u64(json_num(c.out, torch, "blocks_without_stack"), 1, "the block allocated before history was on has no stack");
    run_free(&c);

    cmd(&c, "report", f2.path, NULL, NULL);
    ok(strstr(c.out, "keep_request (torch_prog.py:") && strstr(c.out, "(no stack: allocated while torch's block history was off)"),
       "report: block sites by Python frames (torch's own frames folded away)");
    ok(strstr(c.out, "caching allocators' segments") != NULL, "report: the segments listed apart");
    run_free(&c);

    cmd(&c, "diff", f1.path, f2.path, "--json");
    char delta[64];
    snprintf(delta, sizeof delta, "\"delta_bytes\":%" PRIu64 ",", f2.allocated - f1.allocated);
    const char *first = strstr(c.out, "\"sites\":[{");
    ok(first && strstr(first, "keep_request (torch_prog.py:") < strstr(first, "\"class\"") &&
           !strncmp(strstr(first, "\"class\""), "\"class\":\"allocated\"", 19) && strstr(first, delta) &&
           strstr(first, delta) < strstr(first, "},{"),
       "diff: the top site is keep_request's Python line, class allocated, delta = memory_allocated() growth");
    ok(strstr(c.out, "\"verdict\":\"leak-suspect\"") != NULL, "diff: leak-suspect");
    run_free(&c);

    const char *targs[] = {"trend", f1.path, f2.path, f3.path, "--json", NULL};
    run_prog(&c, "../vramtrace", targs, NULL, 0);
    const char *site = strstr(c.out, "\"sites\":[{\"stack\":[\"keep_request (torch_prog.py:");
    ok(site && !strncmp(strstr(site, "\"class\""), "\"class\":\"allocated\"", 19) &&
           strstr(c.out, "\"verdict\":\"leak-suspect\""),
       "trend: the growing block site first, class allocated, verdict leak-suspect");
    run_free(&c);
    run_free(&r);
}

/* A request's temporary that a dump catches in flight is not a leak; memory kept meanwhile still is. */
static void test_in_flight(void)
{
    struct run r, c;
    struct figures f1, f2, f3;
    const char *always[] = {"VRAMTRACE_TORCH_HISTORY=always", NULL};
    py(&r, "inflight", always);
    int ran = r.status == 0 && get_figures(&r, "first", &f1) && get_figures(&r, "second", &f2) &&
              get_figures(&r, "third", &f3);
    if (!ok(ran, "in flight: the program ran under the library, with three dumps")) {
        diag("status %d, out: %s, err: %s", r.status, r.out, r.err);
        run_free(&r);
        return;
    }
    char buf[512];
    ok(record(&r, f2.path, "running ", buf, sizeof buf) != NULL, "dump: the threads' running stacks");
    /* The report says how much of the allocated memory has a call site, torch's blocks apart: all of it
     * exactly when torch's view counts no block without a stack. */
    cmd(&c, "report", f3.path, NULL, NULL);
    int nostack = strstr(c.out, " without a stack)") != NULL, full = strstr(c.out, ": torch 100.0 % of ") != NULL;
    ok(c.status == 0 && strstr(c.out, "\n  stacks        ") && strstr(c.out, "of the allocated bytes have a call site: torch ") &&
           nostack != full,
       "report: the share of allocated bytes with a call site, torch's apart, agrees with its view's blocks without one");
    run_free(&c);
    cmd(&c, "diff", f1.path, f2.path, NULL);
    const char *site = strstr(c.out, "[in flight]");
    ok(c.status == 0 && site && strstr(site, "handle (torch_prog.py:"), "diff: the request's temporary, in flight, at handle");
    /* The fake's allocator put it in a free segment: reserved did not grow either. */
    ok(strstr(c.out, "verdict: no-growth") && strstr(c.out, "+16.0 MiB allocated by statements still running"),
       "diff: no-growth, the 16 MiB in flight said and not counted");
    run_free(&c);
    cmd(&c, "diff", f1.path, f2.path, "--json");
    ok(strstr(c.out, "\"in_flight_delta\":16777216,") && strstr(c.out, "\"in_flight\":true}") &&
           strstr(c.out, "\"verdict\":\"no-growth\""),
       "diff --json: in_flight_delta 16 MiB, the site in_flight, no-growth");
    run_free(&c);
    cmd(&c, "diff", f1.path, f3.path, NULL);
    /* keep_request is called from two lines by then, so the line that called it names the site (vt_labels.h). */
    ok(strstr(c.out, "verdict: leak-suspect") && strstr(c.out, "most at <module> (torch_prog.py:93)") &&
           strstr(c.out, "(in flight), not counted"),
       "diff: memory kept meanwhile is still a leak suspect, with another request in flight, named by the calling line");
    run_free(&c);
    run_free(&r);
}

/* CuPy's pool (the fake, tests/fake/cupy) reports its totals, and from the first dump on the main thread's
 * blocks, through the memory hook the library installs there: allocated memory that grew is a leak
 * suspect named by the blocks' Python line (with the hook off, VRAMTRACE_CUPY_BLOCKS=0, by the segments
 * that grew); a pool that grows while what is used does not is cache; with the hook on before any array,
 * releasable is what free_all_blocks() gives back. */
static void test_cupy(void)
{
    static const struct {
        const char *mode, *setting;
    } runs[] = {{"leak", NULL}, {"cache", NULL}, {"leak", "VRAMTRACE_CUPY_BLOCKS=0"}, {"blocks", NULL}};
    char prog[1200], lib[1200];
    snprintf(prog, sizeof prog, "%s/../tests/progs/cupy_prog.py", build_dir());
    snprintf(lib, sizeof lib, "FAKE_CUPY_LIB=%s/tests/libcupy_fake.so", build_dir());
    for (size_t m = 0; m < sizeof runs / sizeof runs[0]; m++) {
        struct run r, c;
        struct figures f1, f2, f3;
        const char *mode = runs[m].mode, *tag = runs[m].setting ? runs[m].setting : "hook on";
        int blocks = !strcmp(mode, "blocks"), leak = !strcmp(mode, "leak");
        const char *env[] = {pypath, lib, runs[m].setting, NULL};
        const char *args[] = {prog, mode, NULL};
        run_prog(&r, PYTHON, args, env, 1);
        int ran = r.status == 0 && get_figures(&r, blocks ? "zero" : "first", &f1) &&
                  get_figures(&r, blocks ? "first" : "second", &f2) && (blocks || get_figures(&r, "third", &f3));
        if (!ok(ran, "cupy %s (%s): the program ran under the library, with its dumps", mode, tag)) {
            diag("status %d, out: %s, err: %s", r.status, r.out, r.err);
            run_free(&r);
            continue;
        }
        /* get_figures reads the pool's used bytes as "allocated", its total as "reserved". */
        cmd(&c, "report", f2.path, "--json", NULL);
        const char *view = "\"allocators\":[{\"name\":\"cupy\"";
        ok(c.status == 0 && strstr(c.out, view), "cupy %s: report --json has CuPy's view", mode);
        is_u64(json_num(c.out, view, "allocated"), f2.allocated, "its allocated = used_bytes()");
        is_u64(json_num(c.out, view, "reserved"), f2.reserved, "its reserved = total_bytes()");
        is_u64(json_num(c.out, "\"devices\":[", "allocated"), f2.allocated, "device allocated = used_bytes()");
        if (blocks) {
            ok(!strstr(r.out, "no memory hook"),
               "cupy blocks: a first dump made before any CUDA call installs the hook at once");
            const char *rel = strstr(r.out, "releasable ");
            uint64_t truth = rel ? strtoull(rel + 11, NULL, 10) : 0;
            ok(truth > 0, "cupy blocks: free_all_blocks() gave back %" PRIu64 " bytes", truth);
            is_u64(json_num(c.out, view, "releasable"), truth, "cupy blocks: releasable = what free_all_blocks() gave back");
            is_u64(json_num(c.out, view, "fragmented"), f2.reserved - f2.allocated - truth,
                   "cupy blocks: fragmented = the rest of the pool's free bytes");
            is_u64(json_num(c.out, view, "blocks"), 4, "cupy blocks: the 4 kept arrays are its live blocks");
        }
        run_free(&c);
        if (blocks) {
            cmd(&c, "report", f2.path, NULL, NULL);
            const char *site = strstr(c.out, "top call sites by live bytes:");
            ok(site && strstr(site, "block (cupy), device 0\n             keep_request (cupy_prog.py:") &&
                   strstr(c.out, "the main thread's blocks reported from the first dump on"),
               "cupy blocks: the top site is the kept arrays' Python line, with nothing of the hook's above it");
            run_free(&c);
            run_free(&r);
            continue;
        }
        cmd(&c, "diff", f1.path, f2.path, NULL);
        char want[160];
        if (leak) {
            /* Without the blocks, the segments of both calls of keep_request are sites: its callers name them. */
            const char *by = runs[m].setting ? "its segments grew most at <module> (cupy_prog.py:61)"
                                             : "; most at keep_request (cupy_prog.py:";
            ok(strstr(c.out, "verdict: leak-suspect") && strstr(c.out, "allocated +16.0 MiB") && strstr(c.out, by),
               "cupy leak (%s): diff says leak-suspect, +16 MiB allocated, named by the %s' Python line", tag,
               runs[m].setting ? "segments" : "blocks");
        } else {
            snprintf(want, sizeof want, "verdict: cache-growth: reserved +%.1f MiB, allocated +0 B",
                     (double)(f2.reserved - f1.reserved) / 1048576.0);
            ok(strstr(c.out, want) != NULL, "cupy cache: diff says cache-growth, allocated +0");
        }
        run_free(&c);
        const char *targs[] = {"trend", f1.path, f2.path, f3.path, NULL};
        run_prog(&c, "../vramtrace", targs, NULL, 0);
        /* Named by the blocks, trend gives the site's rate; by segments only, the allocated growth. */
        const char *said = !leak ? "verdict: cache-growth"
                           : runs[m].setting ? "verdict: leak-suspect: allocated +32.0 MiB"
                                             : "at keep_request (cupy_prog.py:";
        ok(strstr(c.out, said) && (!leak || strstr(c.out, "verdict: leak-suspect")),
           "cupy %s (%s): trend over three dumps agrees", mode, tag);
        run_free(&c);
        run_free(&r);
    }
}

/* A native pool's segments stay its own when all its blocks are back (they held a block at their start,
 * or the pool declared them): an idle pool that grew is cache; kept blocks are a leak at the keeping
 * function. */
static void test_native_pool_verdicts(void)
{
    /* "nvtx": the pool says nothing to vramtrace itself, only describes its heaps and regions through
     * NVTX's memory API, which comes to the library as NVTX's tool. */
    static const char *const runs[][2] = {{"idle", ""}, {"idle", "declare"}, {"leak", ""}, {"idle", "nvtx"},
                                          {"leak", "nvtx"}};
    char nvtx[1200];
    snprintf(nvtx, sizeof nvtx, "NVTX_INJECTION64_PATH=%s/libvramtrace.so", build_dir());
    for (int i = 0; i < 5; i++) {
        struct run r, c;
        const char *args[] = {"200", runs[i][0], runs[i][1][0] ? runs[i][1] : NULL, NULL};
        const char *env[] = {nvtx, NULL};
        run_prog(&r, "native_pool", args, !strcmp(runs[i][1], "nvtx") ? env : NULL, 1);
        char p1[700], p2[700];
        const char *a = strstr(r.out, "dump first "), *b = strstr(r.out, "dump second ");
        unsigned segs = 0;
        const char *f = strstr(r.out, "segments ");
        if (!ok(r.status == 0 && a && b && sscanf(a, "dump first %699s", p1) == 1 &&
                    sscanf(b, "dump second %699s", p2) == 1 && f && sscanf(f, "segments %u", &segs) == 1,
                "native pool %s %s: two dumps", runs[i][0], runs[i][1])) {
            diag("status %d, out: %s, err: %s", r.status, r.out, r.err);
            run_free(&r);
            continue;
        }
        cmd(&c, "diff", p1, p2, NULL);
        if (!strcmp(runs[i][0], "idle"))
            ok(strstr(c.out, "verdict: cache-growth: reserved +8.0 MiB") &&
                   strstr(c.out, "the caching allocators hold 16.0 MiB in wholly free segments"),
               "native pool idle %s: its new segment, all blocks back, is cache: cache-growth, said without "
               "torch's words", runs[i][1]);
        else
            ok(strstr(c.out, "verdict: leak-suspect") && strstr(c.out, "most at keep_result (native_pool.c:"),
               "native pool leak %s: leak-suspect, named by the keeping function, not the pool's (nor NVTX's)",
               runs[i][1]);
        run_free(&c);
        if (!strcmp(runs[i][0], "idle")) {
            cmd(&c, "report", p2, "--json", NULL);
            const char *view = "\"allocators\":[{\"name\":\"example_pool\"";
            is_u64(json_num(c.out, view, "allocated"), 0, "the idle pool's view: nothing allocated");
            is_u64(json_num(c.out, view, "reserved"), (uint64_t)segs << 23, "its reserved: every segment");
            is_u64(json_num(c.out, view, "releasable"), (uint64_t)segs << 23, "releasable: every segment, none holds a block");
            is_u64(json_num(c.out, "\"devices\":[", "allocated"), 0, "device allocated: 0");
            run_free(&c);
            char *text = read_text(p2);
            size_t n = 0;
            for (const char *t = text; t && (t = strstr(t, "\npool_segment ")); t++)
                n++;
            is_u64(n, segs, "the dump names every segment as the pool's (pool_segment)");
            free(text);
        }
        run_free(&r);
    }
}

/* JAX (the fake, tests/fake/jax): its pool's totals from memory_stats(), preallocated or grown on
 * demand; a preallocated pool is cache, not memory the program holds; the bridge never makes JAX's
 * backend. */
static void test_jax(void)
{
    static const char *const runs[][2] = {{"leak", "true"}, {"cache", "false"}};
    char prog[1200], lib[1200], pre[64];
    snprintf(prog, sizeof prog, "%s/../tests/progs/jax_prog.py", build_dir());
    snprintf(lib, sizeof lib, "FAKE_XLA_LIB=%s/tests/libxla_fake.so", build_dir());
    for (int m = 0; m < 2; m++) {
        struct run r, c;
        struct figures f1, f2;
        snprintf(pre, sizeof pre, "XLA_PYTHON_CLIENT_PREALLOCATE=%s", runs[m][1]);
        const char *env[] = {pypath, lib, pre, NULL};
        const char *args[] = {prog, runs[m][0], NULL};
        run_prog(&r, PYTHON, args, env, 1);
        char before[700];
        const char *b = strstr(r.out, "before ");
        int ran = r.status == 0 && b && sscanf(b, "before %699s", before) == 1 && get_figures(&r, "first", &f1) &&
                  get_figures(&r, "second", &f2);
        if (!ok(ran, "jax %s, preallocate %s: ran, three dumps", runs[m][0], runs[m][1])) {
            diag("status %d, out: %s, err: %s", r.status, r.out, r.err);
            run_free(&r);
            continue;
        }
        char buf[512];
        ok(record(&r, before, "bridge jax absent jax has not initialised its backends", buf, sizeof buf) &&
               !record(&r, before, "alloc ", buf, sizeof buf),
           "a dump before JAX made its backend: the bridge says so and made none (no device memory)");
        /* get_figures reads bytes_in_use as "allocated", pool_bytes as "reserved". */
        cmd(&c, "report", f1.path, "--json", NULL);
        const char *view = "\"allocators\":[{\"name\":\"jax\"";
        ok(c.status == 0 && strstr(c.out, view), "jax: report --json has JAX's view");
        is_u64(json_num(c.out, view, "allocated"), f1.allocated, "its allocated = bytes_in_use");
        is_u64(json_num(c.out, view, "reserved"), f1.reserved, "its reserved = pool_bytes");
        is_u64(json_num(c.out, "\"devices\":[", "allocated"), f1.allocated,
               "device allocated = bytes_in_use, not the pool (preallocated or not)");
        run_free(&c);
        cmd(&c, "diff", f1.path, f2.path, NULL);
        if (m == 0) {
            ok(strstr(c.out, "verdict: leak-suspect: reserved +0 B, allocated +16.0 MiB") != NULL,
               "jax leak in a preallocated pool: leak-suspect, +16 MiB allocated, nothing reserved");
            /* keep_request is called from two lines (31 and 35): the line that called it names the site. */
            ok(strstr(c.out, "; most at <module> (jax_prog.py:35) (+16.0 MiB, +4 blocks)") != NULL,
               "jax leak: named by the line that made the kept arrays (JAX's device memory profile)");
        }
        else
            ok(strstr(c.out, "verdict: cache-growth") && strstr(c.out, "allocated +0 B"),
               "jax cache, grown on demand: cache-growth, allocated +0");
        run_free(&c);
        run_free(&r);
    }
}

static void test_cache(void)
{
    struct run r, c;
    struct figures f1, f2;
    py(&r, "cache", NULL);
    char buf[64];
    if (!ok(r.status == 0 && get_figures(&r, "first", &f1) && get_figures(&r, "third", &f2) &&
                out_value(&r, "empty_cache returned", buf, sizeof buf),
            "cache: the program ran")) {
        diag("status %d, err: %s", r.status, r.err);
        run_free(&r);
        return;
    }
    cmd(&c, "diff", f1.path, f2.path, NULL);
    ok(strstr(c.out, "verdict: cache-growth") && strstr(c.out, "empty_cache() would return"),
       "diff: reserved grew, allocated did not: cache-growth, with what empty_cache() would return");
    run_free(&c);
    cmd(&c, "report", f2.path, "--json", NULL);
    is_u64(json_num(c.out, "\"devices\":[", "releasable"), strtoull(buf, NULL, 10),
           "releasable = what empty_cache() then returned");
    ok(f2.reserved > f1.reserved && f2.allocated == f1.allocated, "the program's own figures: reserved up, allocated flat");
    run_free(&c);
    run_free(&r);
}

static void test_timeout(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *env[] = {"VRAMTRACE_BRIDGE_TIMEOUT=0.5", NULL};
    py(&r, "timeout", env);
    size_t n = load_dumps(&r, d, 4);
    ok(r.status == 0 && strstr(r.out, "done"), "timeout: the program ran on, exit 0");
    if (ok(n == 4, "timeout: four dumps (api, signal, api, exit), every one complete")) {
        is_str(d[1].python.status, "timeout", "the signal dump while the GIL was held: python timeout");
        ok(d[1].python.detail && strstr(d[1].python.detail, "0.5 s"), "it says why, with the timeout");
        ok(d[1].nsegments == 0 && d[1].nallocs == d[0].nallocs, "no torch view, but every driver allocation");
        is_str(d[2].python.status, "ok", "the next dump, with the GIL free again: python ok");
        ok(d[2].nsegments > 0, "and torch's segments again");
        is_str(d[3].python.status, "skipped", "the exit dump does not touch the interpreter");
    }
    free_dumps(d, n);
    run_free(&r);
}

static void test_raise(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *env[] = {"VRAMTRACE_FAKE_TORCH=raise", NULL};
    py(&r, "leak", env);
    size_t n = load_dumps(&r, d, 4);
    ok(r.status == 0 && strstr(r.out, "done") && !strstr(r.err, "Traceback"),
       "an allocator that raises: the program sees nothing, exit 0");
    int said = n > 0 && d[0].nbridges > 0 && !strcmp(d[0].bridges[0].status, "error") && d[0].bridges[0].detail &&
               strstr(d[0].bridges[0].detail, "RuntimeError: fake allocator failure");
    ok(said, "the dump says why: bridge torch error RuntimeError: ...");
    ok(n > 0 && d[0].nallocs > 0 && d[0].ndevices == 1 && d[0].nsegments == 0, "and is complete otherwise");
    free_dumps(d, n);
    run_free(&r);
}

static void test_finalizing(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    py(&r, "finalizing", NULL);
    size_t n = load_dumps(&r, d, 4);
    ok(r.status == 0 && strstr(r.out, "finalizing True"), "a dump asked for while the interpreter shuts down");
    if (ok(n == 3, "three dumps")) {
        is_str(d[1].python.status, "finalizing", "the shutdown dump does not take the GIL: python finalizing");
        ok(d[1].nallocs > 0, "and is complete");
    }
    free_dumps(d, n);
    run_free(&r);
}

static void test_async(void)
{
    struct run r, c;
    struct figures f1;
    const char *env[] = {"VRAMTRACE_FAKE_TORCH=async", NULL};
    py(&r, "leak", env);
    if (!ok(r.status == 0 && get_figures(&r, "first", &f1), "cudaMallocAsync backend: the program ran")) {
        diag("err: %s", r.err);
        run_free(&r);
        return;
    }
    cmd(&c, "report", f1.path, "--json", NULL);
    const char *torch = "\"allocators\":[{\"name\":\"torch\",\"backend\":\"cudaMallocAsync\"";
    ok(strstr(c.out, torch) != NULL, "a torch view of backend cudaMallocAsync");
    is_u64(json_num(c.out, torch, "allocated"), f1.allocated, "allocated: our live async entries = memory_allocated()");
    ok(strstr(c.out, "\"source\":\"allocated: live cudaMallocAsync allocations; reserved: the default pool") != NULL,
       "the view says where each figure comes from");
    run_free(&c);
    run_free(&r);
}

/* The default, VRAMTRACE_TORCH_HISTORY=dump: torch pays nothing for its block history until the first
 * dump, which switches it on, so that what grows after it is named by its Python line. */
static void test_history_at_dump(void)
{
    struct run r, c;
    struct figures f1, f2, f3;
    char buf[512];
    const char *whole[] = {"VRAMTRACE_TORCH_SAMPLE=100", NULL}; /* on for good once on: every block has a stack */
    py(&r, "leak", whole);
    int ran = r.status == 0 && get_figures(&r, "first", &f1) && get_figures(&r, "second", &f2) &&
              get_figures(&r, "third", &f3);
    if (!ok(ran, "history at the first dump: the program ran, three dumps")) {
        diag("status %d, out: %s, err: %s", r.status, r.out, r.err);
        run_free(&r);
        return;
    }
    ok(strstr(r.out, "history calls [('state', 'alloc', 'python')]") != NULL, "history switched on once, after all");
    ok(record(&r, f1.path, "history torch waiting switched on at this first dump", buf, sizeof buf) != NULL,
       "the first dump: history waiting, switched on by this dump");
    ok(record(&r, f2.path, "history torch on", buf, sizeof buf) != NULL, "the second dump: history on");
    cmd(&c, "report", f1.path, "--json", NULL);
    const char *torch = "\"allocators\":[{\"name\":\"torch\"";
    uint64_t before = json_num(c.out, torch, "blocks_without_stack");
    ok(before >= 5, "the first dump: its blocks have no stacks (%llu)", (unsigned long long)before);
    run_free(&c);
    cmd(&c, "report", f2.path, "--json", NULL);
    is_u64(json_num(c.out, torch, "blocks_without_stack"), before, "the second dump: only those blocks lack stacks");
    run_free(&c);
    cmd(&c, "diff", f1.path, f2.path, "--json");
    char delta[64];
    snprintf(delta, sizeof delta, "\"delta_bytes\":%" PRIu64 ",", f2.allocated - f1.allocated);
    const char *first = strstr(c.out, "\"sites\":[{");
    ok(first && strstr(first, "keep_request (torch_prog.py:") < strstr(first, "\"class\"") && strstr(first, delta) &&
           strstr(first, delta) < strstr(first, "},{") && strstr(c.out, "\"verdict\":\"leak-suspect\""),
       "diff: leak-suspect, the growth named by keep_request's Python line, delta = memory_allocated() growth");
    run_free(&c);
    run_free(&r);
}

static size_t count_of(const char *s, const char *what)
{
    size_t n = 0;
    for (; (s = strstr(s, what)); s += strlen(what))
        n++;
    return n;
}

/* From the first dump on, the history is on VRAMTRACE_TORCH_SAMPLE percent of each second: a site that
 * keeps allocating is caught in the windows, and the blocks made outside them are said apart. */
static void test_history_sampled(void)
{
    struct run r, c;
    struct figures f1, f2;
    char buf[512];
    const char *env[] = {"VRAMTRACE_TORCH_SAMPLE=20", NULL};
    py(&r, "sampled", env);
    if (!ok(r.status == 0 && get_figures(&r, "first", &f1) && get_figures(&r, "second", &f2),
            "sampled history: the program ran, two dumps")) {
        diag("status %d, out: %s, err: %s", r.status, r.out, r.err);
        run_free(&r);
        return;
    }
    size_t on = count_of(r.out, "('state', 'alloc', 'python')"), off = count_of(r.out, "(None, ");
    ok(on >= 2 && on <= 5 && (off == on || off == on - 1),
       "3 s at 20 %% of each second: switched on %zu times (a window a second), off between them (%zu)", on, off);
    ok(record(&r, f2.path, "history torch sampled on 20 % of each second from the first dump on", buf, sizeof buf) != NULL,
       "the dump says the history is sampled, and how much");
    cmd(&c, "report", f2.path, "--json", NULL);
    const char *torch = "\"allocators\":[{\"name\":\"torch\"";
    uint64_t without = json_num(c.out, torch, "blocks_without_stack"), blocks = json_num(c.out, torch, "blocks");
    /* ~300 requests, a fifth of them in windows: a third of the blocks is already a wide margin. */
    ok(without != UINT64_MAX && blocks != UINT64_MAX && without > 150 && blocks - without >= 20 &&
           blocks - without < blocks / 2,
       "some blocks carry stacks, most do not (%llu of %llu without)", (unsigned long long)without,
       (unsigned long long)blocks);
    run_free(&c);
    cmd(&c, "diff", f1.path, f2.path, NULL);
    const char *v = strstr(c.out, "verdict: leak-suspect");
    ok(v && strstr(v, "most at keep_request (torch_prog.py:") && strstr(v, "more in blocks with no stack (torch's block "
                                                                              "history is on only part of the time, sampled"),
       "diff: leak-suspect named by the sampled site, not by the blocks without stacks; the rest said apart");
    if (!v)
        diag("%s", c.out);
    run_free(&c);
    cmd(&c, "diff", f1.path, f2.path, "--json");
    uint64_t suspect = json_num(c.out, "\"verdict\"", "suspect");
    const char *site = strstr(c.out, "\"sites\":[");
    for (uint64_t i = 0; site && suspect != UINT64_MAX && i <= suspect; i++)
        site = strstr(site + 1, "{\"stack\":");
    const char *end = site ? strstr(site, "\"class\"") : NULL;
    const char *keep = site ? strstr(site, "keep_request (torch_prog.py:") : NULL;
    ok(suspect != UINT64_MAX && suspect > 0 && keep && keep < end,
       "diff --json: suspect points at keep_request's site, past the bigger one with no stack (index %lld)",
       (long long)(suspect == UINT64_MAX ? -1 : (long long)suspect));
    run_free(&c);
    run_free(&r);
}

static void test_switches(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *off[] = {"VRAMTRACE_TORCH_HISTORY=0", NULL};
    py(&r, "leak", off);
    size_t n = load_dumps(&r, d, 4);
    ok(r.status == 0 && strstr(r.out, "history calls []"), "VRAMTRACE_TORCH_HISTORY=0: history never switched on, "
                                                             "not even by a dump");
    int nostack = n > 0;
    for (size_t i = 0; n && i < d[0].nblocks; i++)
        nostack &= d[0].blocks[i].pystack == 0;
    ok(nostack && n > 0 && d[0].nblocks > 0 && !strcmp(d[0].python.history, "off"), "blocks without stacks; history off");
    free_dumps(d, n);
    run_free(&r);

    const char *nob[] = {"VRAMTRACE_BRIDGE_TIMEOUT=0", NULL};
    py(&r, "leak", nob);
    n = load_dumps(&r, d, 4);
    ok(n > 0 && !strcmp(d[0].python.status, "skipped") && d[0].nsegments == 0, "VRAMTRACE_BRIDGE_TIMEOUT=0: no bridges");
    free_dumps(d, n);
    run_free(&r);

    py(&r, "notorch", NULL);
    n = load_dumps(&r, d, 4);
    int absent = n > 0 && d[0].nbridges == 3;
    for (size_t i = 0; absent && i < 3; i++)
        absent = !strcmp(d[0].bridges[i].status, "absent");
    ok(absent && !strcmp(d[0].python.status, "ok") && d[0].nallocators == 0,
       "Python without torch: the three bridges (torch, CuPy, JAX) say absent, nothing else");
    ok(n > 0 && d[0].nallocs == 1, "and the driver allocation is there as ever");
    free_dumps(d, n);
    run_free(&r);
}

static void test_native_pool(void)
{
    struct run r, c;
    struct vt_dumpfile d[2];
    const char *args[] = {"200", NULL};
    run_prog(&r, "native_pool", args, NULL, 0);
    ok(r.status == 0 && strstr(r.out, "live_blocks"), "native pool: runs without the library (weak hooks)");
    run_free(&r);
    run_prog(&r, "native_pool", args, NULL, 1);
    unsigned segs = 0, nlive = 0;
    unsigned long long seg_bytes = 0, live = 0;
    const char *p = strstr(r.out, "segments ");
    ok(r.status == 0 && p && sscanf(p, "segments %u bytes %llu live_blocks %u live_bytes %llu", &segs, &seg_bytes, &nlive,
                                    &live) == 4, "native pool under the library: its own figures");
    size_t n = load_dumps(&r, d, 2);
    if (ok(n == 1 && !strcmp(d[0].reason, "exit"), "the exit dump")) {
        is_u64(count_allocs(&d[0], "block", "example_pool", 0), nlive, "one block entry per live block, named by its allocator");
        char path[700];
        snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", r.dir, r.pid);
        cmd(&c, "report", path, "--json", NULL);
        const char *view = "\"allocators\":[{\"name\":\"example_pool\",\"backend\":\"blocks\"";
        ok(strstr(c.out, view) != NULL, "report --json: the pool's view");
        is_u64(json_num(c.out, view, "allocated"), live, "allocated = the pool's live blocks");
        is_u64(json_num(c.out, view, "reserved"), seg_bytes, "reserved = its segments: the allocations holding blocks");
        is_u64(json_num(c.out, view, "fragmented"), seg_bytes - live, "fragmented = the free space in them");
        is_u64(json_num(c.out, "\"devices\":[", "allocated"), live, "device allocated: the blocks, not the segments");
        run_free(&c);
        cmd(&c, "report", path, NULL, NULL);
        const char *site = strstr(c.out, "block (example_pool)");
        ok(site && strstr(site, "keep_result") && strstr(site, "keep_result") < strstr(c.out, "caching allocators' segments"),
           "report: the leaked blocks' site is keep_result, above the segments");
        run_free(&c);
    }
    free_dumps(d, n);
    run_free(&r);
}

int main(void)
{
    snprintf(script, sizeof script, "%s/../tests/progs/torch_prog.py", build_dir());
    snprintf(pypath, sizeof pypath, "PYTHONPATH=%s/../tests/fake", build_dir());
    test_leak();
    test_in_flight();
    test_cupy();
    test_jax();
    test_history_at_dump();
    test_history_sampled();
    test_cache();
    test_timeout();
    test_raise();
    test_finalizing();
    test_async();
    test_switches();
    test_native_pool();
    test_native_pool_verdicts();
    return tap_done();
}
