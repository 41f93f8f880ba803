/* Failed calls and bad settings: results are exactly the driver's, the table does not change, the
 * OOM dump names the request, and a broken dump directory or bad variable never changes the program. */
#include <string.h>

#include "harness.h"

static void test_oom(const char *prog, const char *api, uint64_t size, const char *fn)
{
    struct run r, bare;
    struct vt_dumpfile d[4];
    const char *args[] = {"oom", NULL};
    const char *env[] = {"VRAMTRACE_FAKE_MEMORY=1M", NULL};
    run_prog(&r, prog, args, env, 1);
    run_prog(&bare, prog, args, env, 0);
    char a[32], b[32];
    ok(r.status == 0 && out_value(&r, "oom-result", a, sizeof a) && out_value(&bare, "oom-result", b, sizeof b) &&
           !strcmp(a, b) && strcmp(a, "0"),
       "%s: the failed allocation returns the driver's own error (%s)", prog, a);
    size_t n = load_dumps(&r, d, 4);
    if (ok(n == 2 && !strcmp(d[0].reason, "oom") && !strcmp(d[1].reason, "exit"), "%s: an OOM dump, then the exit dump", prog)) {
        const struct vt_df_failed *f = d[0].nfailed == 1 ? &d[0].failed[0] : NULL;
        ok(f && f->size == size && !strcmp(f->api, api) && f->count == 1, "OOM dump names size and API (%s)", api);
        ok(f && stack_has(&d[0], f->stack, fn), "OOM dump has the failed request's stack (%s)", fn);
        ok(f && f->free_then != VT_DF_UNKNOWN && f->free_then <= (1u << 20), "and the device's free memory then (%llu)",
           f ? (unsigned long long)f->free_then : 0ull);
        ok(d[1].nfailed == 1 && d[1].failed[0].size == size, "the exit dump still carries the failed request");
        is_u64(d[0].nallocs, 0, "nothing entered the table");
        const struct vt_df_api *c = vt_df_api(&d[0], api);
        ok(c && c->failed == 1 && c->allocs == 0, "the failure is counted");
        is_u64(vt_df_counter(&d[0], "oom_events"), 1, "oom_events");
    }
    free_dumps(d, n);
    run_free(&r);
    run_free(&bare);
}

static void test_frees(void)
{
    struct run r, bare;
    struct vt_dumpfile d[3];
    const char *args[] = {"frees", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    run_prog(&bare, "prog_driver", args, NULL, 0);
    static const char *const keys[] = {"free-null", "free-unknown", "freehost-unknown", "release-unknown"};
    for (int i = 0; i < 4; i++) {
        char a[32], b[32];
        ok(out_value(&r, keys[i], a, sizeof a) && out_value(&bare, keys[i], b, sizeof b) && !strcmp(a, b),
           "%s returns what the driver returns", keys[i]);
    }
    size_t n = load_dumps(&r, d, 3);
    if (ok(n == 2, "frees: API dump and exit dump")) {
        is_u64(vt_df_counter(&d[0], "unknown_frees"), 3, "three unknown pointers/handles forwarded and counted; NULL is not");
        const struct vt_df_api *f = vt_df_api(&d[0], "cuMemFree_v2");
        ok(f && f->failed == 2, "both failed cuMemFree calls counted as failed");
    }
    free_dumps(d, n);
    run_free(&r);
    run_free(&bare);
}

static void test_unwritable_dir(void)
{
    struct run r, bare;
    struct vt_dumpfile d[2];
    const char *args[] = {"exit", NULL};
    const char *env[] = {"VRAMTRACE_DIR=/nonexistent/vramtrace-test", NULL};
    run_prog(&r, "prog_driver", args, env, 1);
    run_prog(&bare, "prog_driver", args, NULL, 0);
    is_u64((uint64_t)r.status, (uint64_t)bare.status, "missing dir: exit status unchanged");
    is_str(r.out, bare.out, "missing dir: output unchanged");
    is_u64((uint64_t)count_lines(r.err, "vramtrace: "), 1, "exactly one vramtrace: message");
    char using[600];
    snprintf(using, sizeof using, "; using %s\n", r.dir);
    ok(strstr(r.err, "VRAMTRACE_DIR=/nonexistent/vramtrace-test cannot be used: No such file") && strstr(r.err, using),
       "it names the directory, why, and the directory used instead");
    size_t n = load_dumps(&r, d, 2);
    ok(n == 1 && !strcmp(d[0].reason, "exit"), "checked at start: the dump went to the working directory");
    free_dumps(d, n);
    run_free(&r);
    run_free(&bare);

    /* A directory that looks writable at start (root may write anywhere) but takes no files. */
    const char *proc[] = {"VRAMTRACE_DIR=/proc", NULL};
    const char *api[] = {"apidump", NULL};
    run_prog(&r, "prog_driver", api, proc, 1);
    is_u64((uint64_t)count_lines(r.err, "vramtrace: "), 1, "two failed dumps (API, exit): still one message");
    ok(strstr(r.out, "dump failed") != NULL, "vramtrace_dump() reports the failure to its caller");
    run_free(&r);
}

static void test_bad_values(void)
{
    struct run r;
    struct vt_dumpfile d[2];
    const char *args[] = {"direct", NULL};
    const char *env[] = {"VRAMTRACE_DEPTH=lots", "VRAMTRACE_SIGNAL=FOO", "VRAMTRACE_INTERVAL=-3",
                         "VRAMTRACE_AT_EXIT=maybe", "VRAMTRACE_ON_OOM=2", NULL};
    run_prog(&r, "prog_driver", args, env, 1);
    is_u64((uint64_t)r.status, 0, "bad values: the program runs");
    static const char *const names[] = {"VRAMTRACE_DEPTH=lots", "VRAMTRACE_SIGNAL=FOO", "VRAMTRACE_INTERVAL=-3",
                                        "VRAMTRACE_AT_EXIT=maybe", "VRAMTRACE_ON_OOM=2"};
    for (int i = 0; i < 5; i++)
        ok(strstr(r.err, names[i]) && strstr(r.err, "using"), "%s is reported with the default used", names[i]);
    size_t n = load_dumps(&r, d, 2);
    if (ok(n == 1, "default AT_EXIT=on used: the exit dump is written")) {
        is_u64((uint64_t)d[0].depth, 32, "default depth 32 used");
        const struct vt_df_alloc *a = find_alloc(&d[0], 1000003);
        ok(a && stack_has(&d[0], a->stack, "route_direct_alloc"), "stacks still taken");
    }
    free_dumps(d, n);
    run_free(&r);

    const char *off[] = {"VRAMTRACE_DEPTH=0", "VRAMTRACE_AT_EXIT=off", NULL};
    const char *api[] = {"apidump", NULL};
    run_prog(&r, "prog_driver", api, off, 1);
    n = load_dumps(&r, d, 2);
    ok(n == 1 && !strcmp(d[0].reason, "api") && d[0].depth == 0, "AT_EXIT=off: only the API dump; depth 0 recorded");
    free_dumps(d, n);
    run_free(&r);
}

static void test_errno(void)
{
    struct run r;
    char buf[64];
    const char *args[] = {"errno", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    is_str(out_value(&r, "errno-kept", buf, sizeof buf), "11 of 11", "errno is what the driver left, after every wrapper");
    run_free(&r);
}

int main(void)
{
    test_errno();
    test_oom("prog_driver", "cuMemAlloc_v2", 2u << 20, "oom_alloc");
    test_oom("prog_rt_shared", "cudaMalloc", 3u << 20, "main");
    test_frees();
    test_unwritable_dir();
    test_bad_values();
    return tap_done();
}
