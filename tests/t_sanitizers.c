/* The library under AddressSanitizer with UBSan and under ThreadSanitizer, preloaded into the test
 * programs, and the command under both: every scenario runs as it does without them, and no sanitizer
 * reports anything. The sanitizers' runtimes are those of the compiler that built them (build/san.env). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static char rt[2][1024];
static const char *const san_name[2] = {"asan", "tsan"};

/* A report of either sanitizer (ASan's own notes, such as a stack it cannot follow after fork, are not). */
static int clean(const struct run *r)
{
    return !strstr(r->err, "ERROR: AddressSanitizer") && !strstr(r->err, "ERROR: LeakSanitizer") &&
           !strstr(r->err, "runtime error") && !strstr(r->err, "ThreadSanitizer:");
}

static void load_runtimes(void)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/san.env", build_dir());
    char *env = read_text(path);
    for (int i = 0; i < 2 && env; i++) {
        char key[16];
        snprintf(key, sizeof key, "%s=", san_name[i]);
        const char *at = strstr(env, key);
        if (at)
            sscanf(at + strlen(key), "%1023s", rt[i]);
    }
    free(env);
}

struct scenario {
    const char *prog;
    const char *args[4];
    const char *env[4];
    int status;
    int dumps;      /* at least */
    int which;      /* bit 0: under ASan, bit 1: under TSan. libunwind 1.6 frees its per-thread cache in a
                       thread-exit hook that TSan has already torn down (a crash inside TSan): scenarios whose
                       threads exit run under ASan only. gcc 12's ASan does not lock its allocator across
                       fork(): a child forked while another thread was inside it (the dumper starting) may
                       deadlock in ASan's allocator, so the fork scenario runs under TSan only (ASan still
                       sees forks in forkload, whose child hangs are counted, not failed) */
};
#define ASAN 1
#define TSAN 2
#define BOTH 3

static const struct scenario scenarios[] = {
    {"prog_driver", {"exit"}, {NULL}, 0, 1, BOTH},
    {"prog_driver", {"fork"}, {NULL}, 0, 3, TSAN},
    {"prog_driver", {"pool"}, {NULL}, 0, 5, BOTH},
    {"prog_driver", {"vmm"}, {NULL}, 0, 7, BOTH},
    {"prog_driver", {"kinds"}, {NULL}, 0, 3, BOTH},
    {"prog_driver", {"oom"}, {"VRAMTRACE_FAKE_MEMORY=1M"}, 0, 2, BOTH},
    {"prog_driver", {"twodev"}, {"VRAMTRACE_FAKE_DEVICES=2"}, 0, 2, BOTH},
    {"prog_driver", {"frees"}, {NULL}, 0, 2, BOTH},
    {"prog_driver", {"sigchain"}, {"LD_PRELOAD_AFTER=libsig_early.so"}, 0, 3, BOTH},
    {"prog_driver", {"threads", "300"}, {NULL}, 0, 2, ASAN},
    {"prog_driver", {"xthread"}, {NULL}, 0, 3, ASAN},
    /* Batches of stream-ordered allocations (lib/table/vt_pending.h): under TSan without stacks, whose
     * unwinder's thread-exit hook TSan cannot take (above). */
    {"prog_driver", {"batch"}, {NULL}, 0, 3, ASAN},
    {"prog_driver", {"batch"}, {"VRAMTRACE_DEPTH=0"}, 0, 3, TSAN},
    {"prog_driver", {"threads", "300"}, {"VRAMTRACE_DEPTH=0"}, 0, 2, TSAN},
    {"prog_driver", {"sleep", "2200"}, {"VRAMTRACE_INTERVAL=1"}, 0, 3, BOTH},
    /* The metrics file: the reader's parser, model and renderer inside the library, every second. */
    {"prog_driver", {"sleep", "2200"}, {"VRAMTRACE_METRICS=san-%p.prom", "VRAMTRACE_METRICS_INTERVAL=1"}, 0, 1, BOTH},
    {"prog_safety", {"mix"}, {NULL}, 0, 6, BOTH},
    {"prog_safety", {"oomburst"}, {NULL}, 0, 2, BOTH},
    {"prog_safety", {"sigoneshot"}, {NULL}, 0, 2, BOTH},
    {"prog_safety", {"bigdump"}, {"RLIMIT_FSIZE=4096"}, 0, 0, BOTH},
    {"prog_safety", {"forkload", "20"}, {NULL}, 0, 1, ASAN},
    {"prog_rt_shared", {"oom"}, {"VRAMTRACE_FAKE_MEMORY=1M"}, 0, 2, BOTH},
    {"prog_plain", {NULL}, {NULL}, 0, 1, BOTH},
    {"native_pool", {NULL}, {NULL}, 0, 1, BOTH},
};

static void run_library(int s)
{
    char lib[1200], preload[2400];
    snprintf(lib, sizeof lib, "%s/%s/libvramtrace.so", build_dir(), san_name[s]);
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        const struct scenario *c = &scenarios[i];
        if (!(c->which & (1 << s)))
            continue;
        const char *env[8];
        int n = 0;
        const char *after = NULL;
        for (int k = 0; k < 4 && c->env[k]; k++) {
            if (!strncmp(c->env[k], "LD_PRELOAD_AFTER=", 17))
                after = c->env[k] + 17;
            else
                env[n++] = c->env[k];
        }
        if (after)
            snprintf(preload, sizeof preload, "LD_PRELOAD=%s:%s:%s/tests/%s", rt[s], lib, build_dir(), after);
        else
            snprintf(preload, sizeof preload, "LD_PRELOAD=%s:%s", rt[s], lib);
        env[n++] = preload;
        /* fork() holds every lock of the library and of the fake driver at once (their shards), more
         * than TSan's deadlock detector can follow (64 at a time: it aborts with a CHECK), so that
         * scenario runs without it; every other one keeps it. */
        int forks = c->args[0] && !strcmp(c->args[0], "fork");
        env[n++] = !s ? "ASAN_OPTIONS=detect_leaks=0"
                   : forks ? "TSAN_OPTIONS=die_after_fork=0:detect_deadlocks=0" : "TSAN_OPTIONS=die_after_fork=0";
        env[n] = NULL;
        struct run r;
        struct vt_dumpfile d[32];
        run_prog(&r, c->prog, c->args, env, 0);
        size_t got = load_dumps(&r, d, 32);
        int good = r.status == c->status && clean(&r) && got >= (size_t)c->dumps;
        if (!ok(good, "%s library: %s %s: status %d, %zu dumps, no report", san_name[s], c->prog, c->args[0] ? c->args[0] : "",
                r.status, got))
            /* On stderr, so that prove shows it without -v. */
            fprintf(stderr, "t_sanitizers: %s %s under %s: status %d, %zu dumps (want %d)\nstdout:\n%s\nstderr:\n%s\n", c->prog,
                    c->args[0] ? c->args[0] : "", san_name[s], r.status, got, c->dumps, r.out, r.err);
        free_dumps(d, got);
        run_free(&r);
    }
}

/* Python frames read by the allocating thread (the walk, its careful first check, the names and lines
 * it copies) under ASan and UBSan: the shapes of tests/progs/py_sites.py on the system python, every
 * allocation's frames walked. ASan only: its threads exit (above). */
static void run_python(void)
{
    char script[1200], runtime[1200], helper[1200], preload[2600];
    snprintf(script, sizeof script, "%s/../tests/progs/py_sites.py", build_dir());
    snprintf(runtime, sizeof runtime, "%s/fake/libcudart.so.13", build_dir());
    snprintf(helper, sizeof helper, "%s/tests/libpy_helpers.so", build_dir());
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s:%s/asan/libvramtrace.so", rt[0], build_dir());
    const char *args[] = {script, runtime, helper, "shapes", NULL};
    const char *env[] = {preload, "ASAN_OPTIONS=detect_leaks=0", NULL};
    struct run r;
    struct vt_dumpfile d[4];
    run_prog(&r, "/usr/bin/python3", args, env, 0);
    size_t got = load_dumps(&r, d, 4);
    uint64_t walked = got ? vt_df_counter(&d[0], "py_walked") : 0;
    if (!ok(r.status == 0 && clean(&r) && got >= 1 && walked == 10,
            "asan library: python py_sites.py shapes: status %d, %zu dumps, %llu of 10 allocations walked, no report",
            r.status, got, (unsigned long long)walked))
        fprintf(stderr, "t_sanitizers: python shapes under asan:\nstdout:\n%s\nstderr:\n%s\n", r.out, r.err);
    free_dumps(d, got);
    run_free(&r);
}

static void run_command(int s)
{
    struct run g, r;
    const char *args[] = {"grow", NULL};
    run_prog(&g, "prog_driver", args, NULL, 1);
    char p[4][700];
    for (int i = 0; i < 4; i++)
        snprintf(p[i], sizeof p[i], "%s/vramtrace.%ld.%d.dump", g.dir, g.pid, i + 1);
    char prog[64];
    snprintf(prog, sizeof prog, "../%s/vramtrace", san_name[s]);
    const char *verbs[][8] = {
        {"report", p[2], NULL},
        {"report", p[3], "--json", NULL},
        {"report", p[0], p[3], "--folded", NULL},
        {"diff", p[0], p[2], "--json", NULL},
        {"diff", p[2], p[0], NULL},
        {"trend", p[0], p[1], p[2], NULL},
        {"report", "/dev/zero", NULL},
    };
    static const int want[] = {0, 0, 2, 0, 0, 0, 2};
    const char *tenv[] = {"TSAN_OPTIONS=report_signal_unsafe=0", NULL};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        run_prog(&r, prog, verbs[i], s ? tenv : NULL, 0);
        if (!ok(r.status == want[i] && clean(&r), "%s command: %s (exit %d)", san_name[s], verbs[i][0], r.status))
            diag("%s", r.err);
        run_free(&r);
    }
    run_free(&g);
}

int main(void)
{
    load_runtimes();
    for (int s = 0; s < 2; s++) {
        if (!rt[s][0] || !strchr(rt[s], '/')) {
            ok(0, "the %s runtime was found (build/san.env)", san_name[s]);
            continue;
        }
        run_library(s);
        if (s == 0)
            run_python();
        run_command(s);
    }
    return tap_done();
}
