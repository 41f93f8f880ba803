/* Dumps across a process's life: signals while 8 threads allocate, the exit dump, fork, and a program
 * that owns the dump signal. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void test_threads(void)
{
    struct run r;
    enum { MAXD = 512 };
    static struct vt_dumpfile d[MAXD];
    const char *args[] = {"threads", "200", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    size_t n = load_dumps(&r, d, MAXD);
    char buf[64];
    ok(r.status == 0 && out_value(&r, "iterations", buf, sizeof buf), "8 threads under 200 signals: no deadlock, exit 0");
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
    ok(signals >= 1 && !strcmp(d[n - 1].reason, "exit"), "signal dumps, then the exit dump");
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
    ok(p_exit && p_exit->nallocs == 1 && find_alloc(p_exit, 5555), "the parent keeps its own");
    free_dumps(d, n);
    run_free(&r);
}

static void test_sigowner(void)
{
    struct run r;
    const char *args[] = {"sigowner", NULL};
    char buf[64];
    run_prog(&r, "prog_driver", args, NULL, 1);
    is_str(out_value(&r, "handler-calls", buf, sizeof buf), "2", "a program that owns SIGUSR1 gets its handler called");
    run_free(&r);
}

int main(void)
{
    test_threads();
    test_exit();
    test_fork();
    test_sigowner();
    return tap_done();
}
