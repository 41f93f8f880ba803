/* Dumps across a process's life: signals while 8 threads allocate, the exit dump, fork, and a program
 * that owns the dump signal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

static void test_threads(void)
{
    struct run r;
    enum { MAXD = 1024 + 8 }; /* every dump: at most one a signal (1000) and the exit dump; fewer would read
                                 an arbitrary subset, without the exit dump, on a machine fast enough */
    static struct vt_dumpfile d[MAXD];
    const char *args[] = {"threads", "1000", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, MAXD);
    char buf[64];
    ok(r.status == 0 && out_value(&r, "iterations", buf, sizeof buf), "8 threads under 1000 signals: no deadlock, exit 0");
    diag("%zu dumps, %s iterations", n, buf);
    ok(n >= 2, "signal dumps were written (coalesced while one is being written) and read back complete");
    size_t consistent = 0, signals = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t allocs = 0, frees = 0;
        for (size_t j = 0; j < d[i].napis; j++) {
            allocs += d[i].apis[j].allocs;
            frees += d[i].apis[j].frees;
        }
        consistent += allocs - frees == d[i].nallocs;
        signals += !strcmp(d[i].reason, "signal");
    }
    is_u64(consistent, n, "every dump: live entries = allocations - frees");
    if (!ok(signals >= 1 && n && !strcmp(d[n - 1].reason, "exit"), "signal dumps, then the exit dump"))
        /* Seen once on a busy machine: say what the dumps were and what the library said. */
        diag("%zu signal dumps of %zu; the last: %s, seq %lu; stderr: %s", signals, n, n ? d[n - 1].reason : "-",
             n ? d[n - 1].seq : 0, r.err);
    free_dumps(d, n);
    run_free(&r);
}

static void test_exit(void)
{
    struct run r;
    struct vt_dumpfile d[2];
    const char *args[] = {"exit", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, 2);
    if (ok(n == 1 && !strcmp(d[0].reason, "exit"), "exit dump")) {
        is_u64(d[0].nallocs, 2, "exactly the two never-freed allocations");
        ok(find_alloc(&d[0], 1111111) && find_alloc(&d[0], 4444444), "the right ones");
        ok(stack_has(&d[0], find_alloc(&d[0], 4444444)->stack, "exit_leak_alloc"), "with their stacks");
        ok(d[0].pid == r.pid, "names its own pid");
        char path[700];
        struct stat st;
        snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", r.dir, r.pid);
        ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "the dump file is mode 0600");
        snprintf(path, sizeof path, "%s/.vramtrace.%ld.1.dump.tmp", r.dir, r.pid);
        ok(stat(path, &st) != 0, "no temporary file is left behind");
    }
    free_dumps(d, n);
    run_free(&r);
}

static void test_fork(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *args[] = {"fork", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    char buf[64];
    long child = atol(out_value(&r, "child", buf, sizeof buf) ? buf : "0");
    size_t n = load_dumps(&r, d, 4);
    ok(r.status == 0 && child > 0 && child != r.pid, "fork: child %ld", child);
    /* Sorted by pid, then seq: which pid is smaller varies, so look both up. */
    const struct vt_dumpfile *c_api = NULL, *c_exit = NULL, *p_exit = NULL;
    for (size_t i = 0; i < n; i++) {
        if (d[i].pid == child && !strcmp(d[i].reason, "api"))
            c_api = &d[i];
        if (d[i].pid == child && !strcmp(d[i].reason, "exit"))
            c_exit = &d[i];
        if (d[i].pid == r.pid && !strcmp(d[i].reason, "exit"))
            p_exit = &d[i];
    }
    ok(n == 3 && c_api && c_exit && p_exit, "child API + exit dumps under the child's pid, parent's exit dump");
    ok(c_api && c_api->seq == 1 && c_api->nallocs == 1 && find_alloc(c_api, 6666), "the child starts a fresh table");
    ok(c_api && c_api->ppid == r.pid, "the child's dump names its parent");
    ok(p_exit && p_exit->nallocs == 2 && find_alloc(p_exit, 5555) && find_alloc(p_exit, 5556),
       "the parent keeps its own, the one still in its thread's batch at the fork too");
    free_dumps(d, n);
    run_free(&r);
}

static void test_sigowner(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    const char *args[] = {"sigowner", NULL};
    char buf[64];
    run_prog(&r, "prog_driver", args, NULL, 1);
    is_str(out_value(&r, "handler-calls", buf, sizeof buf), "2", "a program that owns SIGUSR1 gets its handler called");
    run_free(&r);

    const char *chain[] = {"sigchain", NULL};
    const char *env[] = {"LD_PRELOAD_AFTER=libsig_early.so", NULL};
    run_prog(&r, "prog_driver", chain, env, 1);
    is_str(out_value(&r, "early-handler-calls", buf, sizeof buf), "2",
           "a handler installed before vramtrace's is still called (chained)");
    size_t n = load_dumps(&r, d, 4);
    ok(n == 3 && !strcmp(d[0].reason, "signal") && !strcmp(d[1].reason, "signal"), "and each signal gave a dump");
    free_dumps(d, n);
    run_free(&r);

    const char *none[] = {"VRAMTRACE_SIGNAL=none", "LD_PRELOAD_AFTER=libsig_early.so", NULL};
    run_prog(&r, "prog_driver", (const char *[]){"sigowner", NULL}, none, 1);
    n = load_dumps(&r, d, 4);
    ok(r.status == 0 && n == 1 && !strcmp(d[0].reason, "exit"), "VRAMTRACE_SIGNAL=none: no handler, only the exit dump");
    free_dumps(d, n);
    run_free(&r);
}

static void test_no_cuda(void)
{
    struct run r;
    struct vt_dumpfile d[3];
    char buf[64];
    run_prog(&r, "prog_plain", NULL, NULL, 1);
    size_t n = load_dumps(&r, d, 3);
    ok(r.status == 0 && !strcmp(out_value(&r, "cuda-loaded", buf, sizeof buf) ? buf : "", "0"),
       "a program that never touches CUDA: runs, and no libcuda or NVML is loaded into it");
    ok(n == 1 && !strcmp(d[0].reason, "api") && d[0].ndevices == 0 && d[0].nallocs == 0 && !r.err[0],
       "the dump it asked for, with no devices; no exit dump; nothing said on stderr");
    free_dumps(d, n);
    run_free(&r);
}

static void test_interval(void)
{
    struct run r;
    enum { MAXD = 64 };
    static struct vt_dumpfile d[MAXD];
    const char *args[] = {"sleep", "2600", NULL};
    const char *env[] = {"VRAMTRACE_INTERVAL=1", NULL};
    run_prog(&r, "prog_driver", args, env, 1);
    size_t n = load_dumps(&r, d, MAXD), interval = 0;
    for (size_t i = 0; i < n; i++)
        interval += !strcmp(d[i].reason, "interval");
    ok(interval == 2, "VRAMTRACE_INTERVAL=1 over 2.6 s: %zu interval dumps", interval);
    ok(n && !strcmp(d[n - 1].reason, "exit"), "then the exit dump");
    free_dumps(d, n);
    run_free(&r);
}

int main(void)
{
    test_threads();
    test_exit();
    test_fork();
    test_sigowner();
    test_interval();
    test_no_cuda();
    return tap_done();
}
