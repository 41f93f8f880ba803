/* The vramtrace command on dumps the rig produced: report (text, JSON, folded), diff (classes, verdict,
 * --fail-on-growth, across two runs), trend (monotonic sites, rate, one-process rule), and run + dump
 * end to end against a live process. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1ull << 20)

/* vramtrace with up to 6 arguments; output in r. */
static void cmd(struct run *r, const char *a0, const char *a1, const char *a2, const char *a3, const char *a4)
{
    const char *args[] = {a0, a1, a2, a3, a4, NULL};
    run_prog(r, "../vramtrace", args, NULL, 0);
}

static void dump_path(char *out, size_t len, const struct run *r, long pid, int seq)
{
    snprintf(out, len, "%s/vramtrace.%ld.%d.dump", r->dir, pid, seq);
}

static void test_report(const struct run *grow)
{
    char p3[700];
    struct run r;
    dump_path(p3, sizeof p3, grow, grow->pid, 3);
    cmd(&r, "report", p3, NULL, NULL, NULL);
    ok(r.status == 0 && strstr(r.out, "reason api, dump #3"), "report: header");
    ok(strstr(r.out, "reserved      5.0 MiB") && strstr(r.out, "allocated     5.0 MiB"),
       "report: reserved and allocated of device 0 (2 MiB kept + 3 x 1 MiB leaked)");
    ok(strstr(r.out, "process used  305.0 MiB") && strstr(r.out, "overhead      300.0 MiB"),
       "report: process used from NVML (the fake's 5 MiB + 300 MiB context), overhead = process used - reserved");
    ok(strstr(r.out, "cached        unknown") != NULL, "report: an unknown figure is said to be unknown");
    ok(strstr(r.out, "local memory 264.0 MiB (1.0 KiB of stack x 270336 resident threads), malloc heap 8.0 MiB, "
                     "printf FIFO 1.0 MiB; the rest 27.0 MiB: context") != NULL,
       "report: the overhead in parts, from the context's limits (the fake's: an H200's defaults)");
    const char *site = strstr(r.out, "3.0 MiB in 3 × device (cuMemAlloc_v2)");
    ok(site && strstr(site, "grow_leak_site (") && strstr(r.out, "2.0 MiB in 1 × device"), "report: sites by bytes, with frames");
    ok(!strstr(r.out, "__libc_start_main") && !strstr(r.out, "_start+"), "report: start-up frames folded away");
    /* The program makes fewer calls than the one in 61 that is timed. */
    const char *self = strstr(r.out, "\n  vramtrace     ");
    ok(self && strstr(self, "s of the process's") && strstr(self, "its own threads"), "report: what vramtrace cost the process");
    ok(self && strstr(self, "hooks not measured (no call of the") && !strstr(self, "0 ns a call"),
       "report: no call timed: the hooks' time said to be not measured, never 0 ns");
    run_free(&r);

    cmd(&r, "report", p3, "--json", NULL, NULL);
    ok(r.status == 0 && r.out[0] == '{' && strstr(r.out, "\"reason\":\"api\"") && strstr(r.out, "\"seq\":3"), "report --json: header");
    ok(strstr(r.out, "\"reserved\":5242880,\"allocated\":5242880,\"cached\":null") != NULL, "report --json: device figures, unknown is null");
    ok(strstr(r.out, "\"process_used\":319815680") && strstr(r.out, "\"overhead\":314572800"),
       "report --json: process used and overhead in bytes");
    ok(strstr(r.out, "\"overhead_parts\":{\"local_memory\":276824064,\"malloc_heap\":8388608,\"printf_fifo\":1048576,"
                     "\"driver_internals\":28311552}") != NULL,
       "report --json: the overhead's parts, the rest = overhead - the parts");
    ok(strstr(r.out, "\"kind\":\"device\",\"api\":\"cuMemAlloc_v2\",\"device\":0,\"library\":null,\"class\":\"allocated\",\"live_count\":3,\"live_bytes\":3145728") != NULL,
       "report --json: the leak site's count and bytes");
    ok(!strstr(r.out, "\"leaks\""), "report --json: no leaks key for a dump that is not an exit dump");
    ok(strstr(r.out, "\"self_cost\":{\"hook_ns\":") != NULL, "report --json: what vramtrace cost the process");
    uint64_t hook = json_num(r.out, "\"self_cost\":", "hook_ns"), native = json_num(r.out, "\"self_cost\":", "native_ns");
    ok(strstr(r.out, "\"python_ns\":0,") && native != UINT64_MAX && native <= hook,
       "report --json: python_ns 0 for a program without Python, native_ns within hook_ns (%llu of %llu)",
       (unsigned long long)native, (unsigned long long)hook);
    ok(json_num(r.out, "\"self_cost\":", "timed_calls") != UINT64_MAX &&
           json_num(r.out, "\"self_cost\":", "timed_outliers") == 0,
       "report --json: the timed calls, none left out");
    run_free(&r);

    /* Timed calls left out (longer than VT_SELF_OUTLIER_US: the thread did not run) count at the kept
     * ones' mean: 10 kept of 1,000 ns in all, 30 left out, make 4,000 ns. */
    char po[760], sh[3000];
    snprintf(po, sizeof po, "%s.outliers.dump", p3);
    snprintf(sh, sizeof sh,
             "sed -e 's/^counter self_hook_samples .*/counter self_hook_samples 10/' "
             "-e 's/^counter self_hook_outliers .*/counter self_hook_outliers 30/' "
             "-e 's/^counter self_hook_ns .*/counter self_hook_ns 1000/' '%s' > '%s'", p3, po);
    const char *edit[] = {"-c", sh, NULL};
    run_prog(&r, "/bin/sh", edit, NULL, 0);
    run_free(&r);
    cmd(&r, "report", po, "--json", NULL, NULL);
    ok(r.status == 0 && json_num(r.out, "\"self_cost\":", "hook_ns") == 4000 &&
           json_num(r.out, "\"self_cost\":", "timed_calls") == 10 && json_num(r.out, "\"self_cost\":", "timed_outliers") == 30,
       "report --json: 30 timed calls left out count at the 10 kept ones' mean (hooks %llu ns of 1,000 kept)",
       (unsigned long long)json_num(r.out, "\"self_cost\":", "hook_ns"));
    run_free(&r);
    cmd(&r, "report", po, NULL, NULL, NULL);
    ok(strstr(r.out, "30 of 40 timed calls over 50 us left out") != NULL, "report: says how many timed calls were left out");
    run_free(&r);

    cmd(&r, "report", p3, "--folded", NULL, NULL);
    ok(r.status == 0 && strstr(r.out, "main (") && strstr(r.out, "grow_leak_site (") && strstr(r.out, "[device cuMemAlloc_v2] 3145728\n"),
       "report --folded: root first, bytes last");
    ok(strstr(r.out, "main (") < strstr(r.out, "grow_leak_site ("), "report --folded: outermost frame first");
    run_free(&r);

    char exitp[700];
    dump_path(exitp, sizeof exitp, grow, grow->pid, 4);
    cmd(&r, "report", exitp, "--json", "--top", "1");
    ok(r.status == 0 && strstr(r.out, "\"reason\":\"exit\"") && strstr(r.out, "\"leaks\":[{") &&
           strstr(r.out, "\"live_bytes\":3145728}]"),
       "report --json of the exit dump lists the leaks; --top 1 keeps the largest");
    run_free(&r);
}

static void test_diff(const struct run *grow, const struct run *grow2)
{
    char p1[700], p2[700], q3[700];
    struct run r;
    dump_path(p1, sizeof p1, grow, grow->pid, 1);
    dump_path(p2, sizeof p2, grow, grow->pid, 2);
    cmd(&r, "diff", p1, p2, NULL, NULL);
    ok(r.status == 0 && strstr(r.out, "device 0: reserved +1.0 MiB, allocated +1.0 MiB"), "diff: device deltas");
    const char *grew = strstr(r.out, "sites that grew:");
    ok(grew && strstr(grew, "+1.0 MiB +1 blocks   allocated device (cuMemAlloc_v2)") && strstr(grew, "grow_leak_site ("),
       "diff: the leak site grew, class allocated");
    ok(!strstr(r.out, "grow_steady_site"), "diff: the steady site is not listed");
    const char *last = strrchr(r.out, '\n');
    while (last > r.out && last[-1] != '\n')
        last--;
    ok(!strncmp(last, "verdict: leak-suspect", 21), "diff: ends with the verdict line (leak-suspect)");
    const char *self = strstr(r.out, "\n  vramtrace     ");
    ok(self && strstr(self, " in between was timed") && strstr(self, "of CPU"),
       "diff: what vramtrace cost the process between the dumps");
    run_free(&r);

    cmd(&r, "diff", p1, p2, "--json", NULL);
    ok(r.status == 0 && strstr(r.out, "\"devices\":[{\"device\":0,\"reserved_delta\":1048576,\"allocated_delta\":1048576,\"cached_delta\":null,"
                                "\"peak_old\":6291456,\"peak_new\":7340032}]"),
       "diff --json: device deltas");
    ok(strstr(r.out, "\"self_cost\":{\"hook_ns\":") != NULL, "diff --json: vramtrace's cost in between");
    ok(strstr(r.out, "\"class\":\"allocated\",\"status\":\"changed\",\"old_bytes\":1048576,\"new_bytes\":2097152,"
                     "\"delta_bytes\":1048576,\"delta_count\":1") != NULL,
       "diff --json: the site's old, new and deltas");
    ok(strstr(r.out, "\"verdict\":\"leak-suspect\"") != NULL, "diff --json: verdict");
    run_free(&r);

    cmd(&r, "diff", p1, p2, "--fail-on-growth", "512K");
    is_u64((uint64_t)r.status, 3, "diff --fail-on-growth 512K: exit 3 on 1 MiB of allocated growth");
    ok(strstr(r.err, "allocated memory grew by +1.0 MiB, more than --fail-on-growth 512.0 KiB: exit 3") != NULL,
       "and says why on stderr");
    run_free(&r);
    static const char *const bad_sizes[] = {"nan", "inf", "-1M", "1e3", "0x10", "12Q"};
    int all_refused = 1;
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        cmd(&r, "diff", p1, p2, "--fail-on-growth", bad_sizes[i]);
        all_refused &= r.status == 2 && strstr(r.err, "--fail-on-growth wants a size") != NULL;
        run_free(&r);
    }
    ok(all_refused, "--fail-on-growth nan, inf, -1M, 1e3, 0x10, 12Q: each refused, exit 2");
    cmd(&r, "diff", p1, p2, "--fail-on-growth", "2M");
    is_u64((uint64_t)r.status, 0, "diff --fail-on-growth 2M: exit 0");
    run_free(&r);
    cmd(&r, "diff", p2, p1, NULL, NULL);
    ok(r.status == 0 && strstr(r.out, "verdict: leak-suspect") && strstr(r.err, "was taken after") &&
           !strstr(r.out, "18446744"),
       "diff NEW OLD: compared in the order they were taken (said), the same verdict");
    run_free(&r);
    cmd(&r, "diff", p1, p1, NULL, NULL);
    ok(r.status == 0 && strstr(r.out, "verdict: no-growth") && strstr(r.out, "no site grew"), "diff of a dump with itself: no-growth");
    run_free(&r);

    /* Two runs of the program: sites still match by frames, though every address differs. */
    dump_path(q3, sizeof q3, grow2, grow2->pid, 3);
    cmd(&r, "diff", p1, q3, "--json", NULL);
    ok(r.status == 0 && strstr(r.out, "\"status\":\"changed\",\"old_bytes\":1048576,\"new_bytes\":3145728"),
       "diff across two runs matches the leak site (changed, not new)");
    run_free(&r);

    cmd(&r, "diff", p1, NULL, NULL, NULL);
    ok(r.status == 2 && count_lines(r.err, "vramtrace diff: ") == 1, "diff with one dump: exit 2, one line");
    run_free(&r);
}

/* Dumps of two different programs say nothing about a leak: refused unless --force. */
static void test_two_programs(const struct run *grow, const char *pool_dump)
{
    struct run r;
    char g[700];
    dump_path(g, sizeof g, grow, grow->pid, 1);
    cmd(&r, "diff", g, pool_dump, NULL, NULL);
    ok(r.status == 2 && strstr(r.err, "two different programs") && strstr(r.err, "prog_driver grow") &&
           strstr(r.err, "prog_driver pool") && !r.out[0],
       "diff of two different programs: refused, exit 2, both command lines named");
    run_free(&r);
    cmd(&r, "diff", g, pool_dump, "--force", NULL);
    ok(r.status == 0 && strstr(r.out, "verdict: "), "with --force: compared by call site");
    run_free(&r);
}

static void test_pool_diff(const struct run *grow)
{
    struct run pool, r;
    const char *args[] = {"pool", NULL};
    run_prog(&pool, "prog_driver", args, NULL, 1);
    char p1[700], p2[700];
    dump_path(p1, sizeof p1, &pool, pool.pid, 1);
    dump_path(p2, sizeof p2, &pool, pool.pid, 2);
    test_two_programs(grow, p1);
    cmd(&r, "report", p2, "--json", NULL, NULL);
    ok(strstr(r.out, "\"reserved\":5242880,\"allocated\":1048576,\"cached\":4194304") != NULL,
       "report: a pool's free memory is cached (reserved 5 MiB, allocated 1 MiB, cached 4 MiB)");
    run_free(&r);
    cmd(&r, "diff", p1, p2, "--json", NULL);
    ok(strstr(r.out, "\"reserved_delta\":0,\"allocated_delta\":-4194304,\"cached_delta\":4194304") != NULL,
       "diff: freeing into a pool moves bytes from allocated to cached");
    ok(strstr(r.out, "\"kind\":\"pool_cache\",\"api\":\"explicit-pool-device-0\",\"class\":\"cache\"") &&
           strstr(r.out, "\"delta_bytes\":4194304"),
       "diff: the pool's cache shows as a cache-class site");
    run_free(&r);
    cmd(&r, "diff", p1, p2, NULL, NULL);
    ok(strstr(r.out, "sites that vanished:") && strstr(r.out, "-4.0 MiB allocated async (cuMemAllocFromPoolAsync)  [vanished]"),
       "diff: a site whose memory was all freed is marked vanished");
    run_free(&r);
    run_free(&pool);
}

static void test_trend(const struct run *grow, const struct run *grow2)
{
    char p[3][700], q1[700];
    struct run r;
    for (int i = 0; i < 3; i++)
        dump_path(p[i], sizeof p[i], grow, grow->pid, i + 1);
    const char *args[] = {"trend", p[2], p[0], p[1], "--json", NULL};
    run_prog(&r, "../vramtrace", args, NULL, 0);
    ok(r.status == 0 && strstr(r.out, "\"bytes\":[1048576,2097152,3145728],\"monotonic\":true"),
       "trend --json: the leak site, in time order whatever the argument order, grows every time");
    ok(strstr(r.out, "\"bytes\":[2097152,2097152,2097152],\"monotonic\":false") != NULL, "trend --json: the kept buffer does not");
    ok(strstr(r.out, "\"verdict\":\"leak-suspect\"") != NULL, "trend --json: verdict");
    run_free(&r);
    const char *text[] = {"trend", p[0], p[1], p[2], NULL};
    run_prog(&r, "../vramtrace", text, NULL, 0);
    ok(r.status == 0 && strstr(r.out, "sites that grew and never shrank:") &&
           strstr(r.out, "(grew in 2 of 2 intervals)") && strstr(r.out, "1.0 MiB -> 2.0 MiB -> 3.0 MiB") &&
           strstr(r.out, "verdict: leak-suspect: +"),
       "trend: text with the rate and the verdict");
    run_free(&r);

    dump_path(q1, sizeof q1, grow2, grow2->pid, 1);
    const char *mixed[] = {"trend", p[0], p[1], q1, NULL};
    run_prog(&r, "../vramtrace", mixed, NULL, 0);
    ok(r.status == 2 && count_lines(r.err, "vramtrace: ") == 1 && strstr(r.err, "trend needs dumps of one process") &&
           strstr(r.err, q1),
       "trend of two processes: exit 2, one line naming the file");
    run_free(&r);
    const char *two[] = {"trend", p[0], p[1], NULL};
    run_prog(&r, "../vramtrace", two, NULL, 0);
    ok(r.status == 2 && strstr(r.err, "at least three dumps"), "trend of two dumps: exit 2");
    run_free(&r);
}

/* vramtrace report of one dump per process: two runs of the growing program and one of the library. */
/* A leak in bursts: 10, 20, 30, 30, 40, 50 MiB. It grew overall and never shrank: a leak suspect,
 * although one interval saw no growth. Dumps written by hand, given out of order. */
static void test_trend_bursts(void)
{
    static const int mib[] = {10, 20, 30, 30, 40, 50};
    char dir[] = "/tmp/vramtrace-trend.XXXXXX", path[6][128];
    if (!ok(mkdtemp(dir) != NULL, "trend bursts: temp dir"))
        return;
    for (int i = 0; i < 6; i++) {
        snprintf(path[i], sizeof path[i], "%s/vramtrace.4242.%d.dump", dir, i + 1);
        FILE *f = fopen(path[i], "w");
        if (!f)
            continue;
        fprintf(f, "vramtrace-dump 4\npid 4242\nppid 1\nexe /bin/server\ncmdline server\nreason interval\nseq %d\n"
                   "time %d000000000 %d000000000\nstart 1000 1000\ndepth 32\nstack 1 1 0x401000 0\n"
                   "frame 0x401000 handle_request+0x10\nalloc 0x100000 %d device cuMemAlloc_v2 0 0x0 0x0 0x0 0 1 1 1 1\n"
                   "end\n", i + 1, 1700000000 + 60 * i, 60 * (i + 1), mib[i] << 20);
        fclose(f);
    }
    struct run r;
    const char *args[] = {"trend", path[5], path[0], path[1], path[2], path[3], path[4], NULL};
    run_prog(&r, "../vramtrace", args, NULL, 0);
    ok(r.status == 0 && strstr(r.out, "verdict: leak-suspect") && strstr(r.out, "(grew in 4 of 5 intervals)") &&
           strstr(r.out, "10.0 MiB -> 20.0 MiB -> 30.0 MiB -> 30.0 MiB -> 40.0 MiB -> 50.0 MiB"),
       "trend 10, 20, 30, 30, 40, 50 MiB: leak-suspect, grew in 4 of 5 intervals, in time order");
    ok(strstr(r.err, "not given in the order they were taken") != NULL, "the reordering is said");
    run_free(&r);
    for (int i = 0; i < 6; i++)
        unlink(path[i]);
    rmdir(dir);
}

static void test_report_processes(const struct run *grow, const struct run *grow2)
{
    struct run lib, r;
    const char *largs[] = {"library", NULL};
    run_prog(&lib, "prog_driver", largs, NULL, 1);
    char p1[700], p2[700], p3[700];
    dump_path(p1, sizeof p1, grow, grow->pid, 3);
    dump_path(p2, sizeof p2, grow2, grow2->pid, 3);
    dump_path(p3, sizeof p3, &lib, lib.pid, 1);
    const char *args[] = {"report", p1, p2, p3, NULL};
    run_prog(&r, "../vramtrace", args, NULL, 0);
    char want[200];
    snprintf(want, sizeof want, "6.0 MiB in 6 × device (cuMemAlloc_v2), device 0, processes %ld, %ld\n", grow->pid,
             grow2->pid);
    ok(r.status == 0 && strstr(r.out, "3 processes, one dump each\n") && count_lines(r.out, "process ") == 3,
       "report of three processes: one block per process");
    ok(strstr(r.out, "  reserved      14.4 MiB\n") && strstr(r.out, "  libraries     cuBLAS 4.4 MiB\n"),
       "all processes, per device: reserved 5 + 5 + 4.4 MiB; cuBLAS's share named");
    ok(strstr(r.out, want) != NULL, "the growing site of both runs is one site: 6 blocks, both pids");
    run_free(&r);
    const char *jargs[] = {"report", p1, p2, p3, "--json", NULL};
    run_prog(&r, "../vramtrace", jargs, NULL, 0);
    ok(r.status == 0 && strstr(r.out, "\"devices\":[{\"device\":0,\"process_used\":") &&
           strstr(r.out, ",\"reserved\":15053650,\"allocated\":15053650,") && strstr(r.out, "\"live_bytes\":6291456,\"pids\":["),
       "report --json of three processes: totals and merged sites");
    run_free(&r);
    const char *fargs[] = {"report", p1, p2, p3, "--folded", NULL};
    run_prog(&r, "../vramtrace", fargs, NULL, 0);
    char root1[64], root2[64];
    snprintf(root1, sizeof root1, "process %ld (prog_driver);", grow->pid);
    snprintf(root2, sizeof root2, "process %ld (prog_driver);", grow2->pid);
    ok(r.status == 0 && count_lines(r.out, root1) >= 1 && count_lines(r.out, root2) >= 1 &&
           count_lines(r.out, "process ") == count_lines(r.out, ""),
       "report --folded of three processes: every stack under its process's own root frame");
    run_free(&r);
    const char *same[] = {"report", p1, p1, NULL};
    run_prog(&r, "../vramtrace", same, NULL, 0);
    ok(r.status == 2 && strstr(r.err, "report takes one dump per process"), "report of two dumps of one process: exit 2");
    run_free(&r);
    run_free(&lib);
}

/* vramtrace diff of two dumps of each of two processes: one grew, the other (the same dump twice) did not. */
static void test_diff_processes(const struct run *grow, const struct run *grow2)
{
    struct run r;
    char a1[700], a3[700], b3[700], want[1600];
    dump_path(a1, sizeof a1, grow, grow->pid, 1);
    dump_path(a3, sizeof a3, grow, grow->pid, 3);
    dump_path(b3, sizeof b3, grow2, grow2->pid, 3);
    /* In any order: pairs are found by pid, the older dump of each first. */
    const char *args[] = {"diff", a3, b3, a1, b3, NULL};
    run_prog(&r, "../vramtrace", args, NULL, 0);
    snprintf(want, sizeof want, "verdict: leak-suspect: process %ld leak-suspect (most at grow_leak_site (prog_driver.c:",
             grow->pid);
    ok(r.status == 0 && strstr(r.out, "diff of 2 processes, two dumps each\n") && strstr(r.out, want) &&
           strstr(r.out, "no-growth\n"),
       "diff of two processes: each diffed, one verdict line naming each process's");
    snprintf(want, sizeof want, "diff %s -> %s\n", a1, a3);
    ok(strstr(r.out, want) && strstr(r.out, "all processes:\ndevice 0: reserved +2.0 MiB, allocated +2.0 MiB"),
       "the older dump of each process first; the devices added up");
    run_free(&r);
    const char *jargs[] = {"diff", a1, a3, b3, b3, "--json", "--fail-on-growth", "1M", NULL};
    run_prog(&r, "../vramtrace", jargs, NULL, 0);
    ok(r.status == 3 && !strncmp(r.out, "{\"processes\":[{\"old\":", 21) &&
           strstr(r.out, "}],\"devices\":[{\"device\":0,\"reserved_delta\":2097152,\"allocated_delta\":2097152,") &&
           strstr(r.out, "\"verdict\":\"leak-suspect\"}\n"),
       "diff --json of two processes, and --fail-on-growth on their total: exit 3");
    run_free(&r);
    const char *odd[] = {"diff", a1, a3, b3, NULL};
    run_prog(&r, "../vramtrace", odd, NULL, 0);
    ok(r.status == 2 && strstr(r.err, "two of each process"), "diff of three dumps: exit 2");
    run_free(&r);
    const char *three[] = {"diff", a1, a3, a3, b3, NULL};
    run_prog(&r, "../vramtrace", three, NULL, 0);
    ok(r.status == 2 && strstr(r.err, "has 3"), "diff with three dumps of one process among four: exit 2, says which");
    run_free(&r);
}

/* vramtrace dump of several processes: a launcher (sh) started by vramtrace run with two workers. */
static void test_dump_many(void)
{
    struct run r;
    char dir[] = "/tmp/vramtrace-test.XXXXXX";
    if (!ok(mkdtemp(dir) != NULL, "dump many: temp dir"))
        return;
    char self[1024], vt[1100], cmd[2400], fake[1100];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    *strrchr(self, '/') = 0;
    snprintf(vt, sizeof vt, "%s/../vramtrace", self);
    snprintf(fake, sizeof fake, "%s/../fake", self);
    snprintf(cmd, sizeof cmd, "%s/prog_driver sleep 2500 & %s/prog_driver sleep 2500 & wait", self, self);
    pid_t sh = fork();
    if (sh == 0) {
        setenv("LD_LIBRARY_PATH", fake, 1);
        execl(vt, vt, "run", "--dir", dir, "--", "/bin/sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    struct timespec nap = {0, 500 * 1000 * 1000};
    nanosleep(&nap, NULL);
    char shs[32];
    snprintf(shs, sizeof shs, "%ld", (long)sh);
    const char *kids[] = {"dump", "--children", shs, NULL};
    run_prog(&r, "../vramtrace", kids, NULL, 0);
    long pid[2] = {0, 0};
    int lines = count_lines(r.out, dir), good = 0;
    const char *p = r.out;
    for (int i = 0; i < 2 && p && (p = strstr(p, "/vramtrace.")); i++, p++) {
        pid[i] = strtol(p + 11, NULL, 10);
        char path[1200];
        snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", dir, pid[i]);
        struct vt_dumpfile d;
        if (load_dump(path, &d) == 0) {
            good += d.ppid == sh && d.pid == pid[i] && !strcmp(d.reason, "request");
            vt_dumpfile_free(&d);
        }
    }
    ok(r.status == 0 && lines == 2 && good == 2 && pid[0] != pid[1],
       "dump --children: one dump from each of the launcher's two workers, not from the launcher");
    run_free(&r);
    char a[32], b[32];
    snprintf(a, sizeof a, "%ld", pid[0]);
    snprintf(b, sizeof b, "%ld", pid[1]);
    const char *both[] = {"dump", a, b, NULL};
    run_prog(&r, "../vramtrace", both, NULL, 0);
    char want[1300];
    snprintf(want, sizeof want, "%s/vramtrace.%ld.2.dump\n%s/vramtrace.%ld.2.dump\n", dir, pid[0], dir, pid[1]);
    ok(r.status == 0 && !strcmp(r.out, want), "dump PID PID: both dumps, in the order asked");
    run_free(&r);
    const char *one_gone[] = {"dump", a, "999999", NULL};
    run_prog(&r, "../vramtrace", one_gone, NULL, 0);
    snprintf(want, sizeof want, "%s/vramtrace.%ld.3.dump\n", dir, pid[0]);
    ok(r.status == 1 && !strcmp(r.out, want) && count_lines(r.err, "vramtrace dump: process 999999") == 1,
       "dump PID GONE: the live one's dump, one line about the other, exit 1");
    run_free(&r);
    const char *none[] = {"dump", "--children", a, NULL};
    run_prog(&r, "../vramtrace", none, NULL, 0);
    ok(r.status == 1 && strstr(r.err, "no process under"), "dump --children of a process with no children: exit 1, says so");
    run_free(&r);
    int st;
    waitpid(sh, &st, 0);
    char cleanup[1300];
    snprintf(cleanup, sizeof cleanup, "rm -rf %s", dir);
    ok(system(cleanup) == 0, "dump many: cleaned up");
}

/* vramtrace run in the background, vramtrace dump against it. */
static void test_run_and_dump(void)
{
    struct run r;
    char dir[] = "/tmp/vramtrace-test.XXXXXX";
    if (!ok(mkdtemp(dir) != NULL, "run/dump: temp dir"))
        return;
    char self[1024], vt[1100], prog[1100], fake[1100];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    *strrchr(self, '/') = 0;
    snprintf(vt, sizeof vt, "%s/../vramtrace", self);
    snprintf(prog, sizeof prog, "%s/prog_driver", self);
    snprintf(fake, sizeof fake, "%s/../fake", self);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("LD_LIBRARY_PATH", fake, 1);
        unsetenv("VRAMTRACE_DIR");
        setenv("VRAMTRACE_END_NOTE_PID", "0", 1); /* its stderr is prove's */
        execl(vt, vt, "run", "--dir", dir, "--", prog, "sleep", "1500", (char *)NULL);
        _exit(127);
    }
    struct timespec nap = {0, 300 * 1000 * 1000};
    nanosleep(&nap, NULL);
    char pids[32];
    snprintf(pids, sizeof pids, "%ld", (long)pid);
    const char *args[] = {"dump", pids, NULL};
    run_prog(&r, "../vramtrace", args, NULL, 0);
    char want[200];
    snprintf(want, sizeof want, "%s/vramtrace.%ld.1.dump\n", dir, (long)pid);
    ok(r.status == 0 && !strcmp(r.out, want), "vramtrace dump PID prints the new dump's path (%s)", r.out);
    struct vt_dumpfile d;
    want[strlen(want) - 1] = 0;
    int loaded = load_dump(want, &d) == 0;
    ok(loaded && !strcmp(d.reason, "request") && d.pid == pid, "the dump is complete, reason request, that pid");
    vt_dumpfile_free(&d);
    run_free(&r);
    int st;
    waitpid(pid, &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "vramtrace run exits with the program's status (0)");
    char path[1200];
    snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", dir, (long)pid);
    unlink(path);
    snprintf(path, sizeof path, "%s/vramtrace.%ld.2.dump", dir, (long)pid);
    unlink(path);
    rmdir(dir);

    const char *bad[] = {"run", "--", "prog_does_not_exist_anywhere", NULL};
    run_prog(&r, "../vramtrace", bad, NULL, 0);
    ok(r.status == 127 && strstr(r.err, "cannot run"), "vramtrace run of a missing program: 127 and a message");
    run_free(&r);
    const char *status[] = {"run", "--", prog, "no-such-mode", NULL};
    run_prog(&r, "../vramtrace", status, NULL, 0);
    is_u64((uint64_t)r.status, 2, "vramtrace run passes the program's exit status through (2)");
    run_free(&r);

    /* An LD_PRELOAD already set is kept, after the library. */
    char early[1200], both[2600];
    snprintf(early, sizeof early, "LD_PRELOAD=%s/libsig_early.so", self);
    const char *env_early[] = {early, NULL};
    const char *chain[] = {"run", "--", prog, "sigchain", NULL};
    run_prog(&r, "../vramtrace", chain, env_early, 0);
    snprintf(both, sizeof both, "%s", r.out);
    struct vt_dumpfile dd[4];
    size_t nd = load_dumps(&r, dd, 4);
    ok(r.status == 0 && strstr(both, "early-handler-calls 2") != NULL && nd == 3,
       "vramtrace run prepends the library to an LD_PRELOAD already set (both loaded: 2 signal dumps + exit, "
       "the earlier handler chained)");
    free_dumps(dd, nd);
    run_free(&r);

    /* NVTX's tool: the library, unless the user set another (Nsight's). */
    const char *show[] = {"run", "--", "/bin/sh", "-c", "echo nvtx=$NVTX_INJECTION64_PATH", NULL};
    run_prog(&r, "../vramtrace", show, NULL, 0);
    ok(r.status == 0 && strstr(r.out, "nvtx=/") && strstr(r.out, "/libvramtrace.so\n"),
       "vramtrace run makes the library NVTX's tool (NVTX_INJECTION64_PATH)");
    run_free(&r);
    const char *nsight[] = {"NVTX_INJECTION64_PATH=/opt/nsight/libToolsInjection64.so", NULL};
    run_prog(&r, "../vramtrace", show, nsight, 0);
    ok(r.status == 0 && strstr(r.out, "nvtx=/opt/nsight/libToolsInjection64.so\n"), "and leaves another tool in place");
    run_free(&r);

    /* A process without the library. */
    pid_t plain = fork();
    if (plain == 0) {
        execl("/bin/sleep", "sleep", "3", (char *)NULL);
        _exit(127);
    }
    nanosleep(&nap, NULL);
    snprintf(pids, sizeof pids, "%ld", (long)plain);
    const char *nolib[] = {"dump", pids, "--timeout", "1", NULL};
    run_prog(&r, "../vramtrace", nolib, NULL, 0);
    ok(r.status == 1 && strstr(r.err, "is not loaded"), "vramtrace dump of a process without the library says so");
    run_free(&r);
    kill(plain, SIGKILL);
    waitpid(plain, &st, 0);
}

static void test_symbols(void)
{
    struct run prog, r;
    const char *args[] = {"symbols", NULL};
    run_prog(&prog, "prog_driver", args, NULL, 1);
    char p[700];
    dump_path(p, sizeof p, &prog, prog.pid, 1);
    cmd(&r, "report", p, "--json", NULL, NULL);
    ok(strstr(r.out, "\"stack\":[\"inline_helper_alloc (prog_driver.c:") && strstr(r.out, "\",\"route_inline_alloc (prog_driver.c:"),
       "symbols: an inlined function shows, with its caller next, both with file:line");
    ok(strstr(r.out, "\"stack\":[\"hidden_static_alloc (prog_driver.c:") != NULL,
       "symbols: a static function dladdr cannot name is named from the symbol table");
    run_free(&r);
    cmd(&r, "report", p, "--json", "--full-stacks", NULL);
    ok(strstr(r.out, "__libc_start_main") != NULL, "--full-stacks keeps the start-up frames");
    run_free(&r);
    run_free(&prog);

    const char *none[] = {NULL};
    run_prog(&prog, "prog_cxx", none, NULL, 1);
    dump_path(p, sizeof p, &prog, prog.pid, 1);
    cmd(&r, "report", p, NULL, NULL, NULL);
    ok(strstr(r.out, "vt_test::Arena::grow(unsigned long) (prog_cxx.cpp:") != NULL, "symbols: C++ names are demangled");
    run_free(&r);
    /* The same dump with its modules out of reach: the names dladdr recorded, demangled too, in every output. */
    char nosym[800], sh[2000];
    snprintf(nosym, sizeof nosym, "%s/nosym.dump", prog.dir);
    snprintf(sh, sizeof sh, "sed 's|^\\(module [0-9]* 0x[0-9a-f]* 0x[0-9a-f]* 0x[0-9a-f]* [^ ]*\\) .*|\\1 /nonexistent/x|' '%s' > '%s'",
             p, nosym);
    int sed_ok = system(sh) == 0;
    cmd(&r, "report", nosym, NULL, NULL, NULL);
    ok(sed_ok && strstr(r.out, "vt_test::Arena::grow(unsigned long)+0x") && !strstr(r.out, "_ZN7vt_test"),
       "no symbols: the recorded C++ names are demangled (report)");
    run_free(&r);
    cmd(&r, "report", nosym, "--json", NULL, NULL);
    ok(strstr(r.out, "\"stack\":[\"vt_test::Arena::grow(unsigned long)+0x") &&
           strstr(r.out, "\"mangled\":[\"_ZN7vt_test5Arena4growEm+0x"),
       "no symbols: JSON keeps the C++ name the dump recorded beside the demangled one");
    run_free(&r);
    cmd(&r, "report", p, "--json", NULL, NULL);
    ok(strstr(r.out, "\"stack\":[\"vt_test::Arena::grow(unsigned long) (prog_cxx.cpp:") &&
           strstr(r.out, "\"mangled\":[\"_ZN7vt_test5Arena4growEm+0x"),
       "symbols: JSON keeps the C++ name of the function at the frame beside its file and line");
    run_free(&r);
    cmd(&r, "report", nosym, "--prometheus", NULL, NULL);
    ok(strstr(r.out, "site=\"vt_test::Arena::grow(unsigned long)+0x") && !strstr(r.out, "_ZN7vt_test"),
       "no symbols: the recorded C++ names are demangled (Prometheus)");
    run_free(&r);
    run_free(&prog);
}

/* Many sites (the site table grows several times), through the sanitized build of the command. */
static void test_many_sites(void)
{
    struct run prog, r;
    const char *args[] = {"manysites", NULL};
    const char *env[] = {"VRAMTRACE_DEPTH=128", NULL}; /* the stacks differ only below frame 100 */
    run_prog(&prog, "prog_driver", args, env, 1);
    char p1[700], p2[700];
    dump_path(p1, sizeof p1, &prog, prog.pid, 1);
    dump_path(p2, sizeof p2, &prog, prog.pid, 2);
    const char *rep[] = {"report", p1, "--json", NULL};
    run_prog(&r, "../asan/vramtrace", rep, NULL, 0);
    ok(r.status == 0 && count_lines(r.err, "") == 0, "sanitized report of 100 sites: clean");
    int sites = 0;
    for (const char *q = r.out; (q = strstr(q, "\"live_count\":3,")); q++)
        sites++;
    is_u64((uint64_t)sites, 100, "100 sites of 3 allocations each");
    run_free(&r);
    const char *dif[] = {"diff", p1, p2, "--json", NULL};
    run_prog(&r, "../asan/vramtrace", dif, NULL, 0);
    ok(r.status == 0 && count_lines(r.err, "") == 0 && strstr(r.out, "\"verdict\":\"no-growth\"") != NULL,
       "sanitized diff of 100 sites (API dump against the exit dump): clean, no growth");
    run_free(&r);
    const char *tr[] = {"trend", p1, p2, p1, "--json", NULL};
    run_prog(&r, "../asan/vramtrace", tr, NULL, 0);
    ok(r.status == 0 && !strstr(r.err, "Sanitizer") && !strstr(r.err, "runtime error") &&
           strstr(r.err, "not given in the order they were taken"),
       "sanitized trend of 100 sites: clean (dumps out of order: said)");
    run_free(&r);
    run_free(&prog);
}

/* Without NVML the figures are unknown (null), said once on the program's stderr. */
static void test_no_nvml(void)
{
    struct run prog, r;
    const char *args[] = {"grow", NULL};
    const char *env[] = {"VRAMTRACE_FAKE_NVML=0", NULL};
    run_prog(&prog, "prog_driver", args, env, 1);
    ok(prog.status == 0 && count_lines(prog.err, "vramtrace: NVML") == 1, "no NVML: said once on stderr, over three dumps");
    char p[700];
    dump_path(p, sizeof p, &prog, prog.pid, 3);
    cmd(&r, "report", p, "--json", NULL, NULL);
    ok(strstr(r.out, "\"process_used\":null") && strstr(r.out, "\"overhead\":null"), "no NVML: process used and overhead null");
    run_free(&r);
    run_free(&prog);
}

static void test_library(void)
{
    struct run prog, r;
    const char *args[] = {"library", NULL};
    run_prog(&prog, "prog_driver", args, NULL, 1);
    char p[700];
    dump_path(p, sizeof p, &prog, prog.pid, 1);
    cmd(&r, "report", p, NULL, NULL, NULL);
    ok(prog.status == 0 && strstr(r.out, "4.4 MiB in 1 × device (cuMemAlloc_v2), device 0, taken by cuBLAS") != NULL,
       "memory a CUDA library takes for itself is named by the library");
    ok(strstr(r.out, "  libraries     cuBLAS 4.4 MiB (taken for themselves, outside any caching allocator)\n") != NULL,
       "and summed per device in one line");
    run_free(&r);
    cmd(&r, "report", p, "--json", NULL, NULL);
    ok(strstr(r.out, "\"library\":\"cuBLAS\",\"class\":\"allocated\",\"live_count\":1,\"live_bytes\":4567890") != NULL, "and in JSON");
    ok(strstr(r.out, "\"libraries\":[{\"name\":\"cuBLAS\",\"bytes\":4567890}]") != NULL, "and the device's libraries in JSON");
    run_free(&r);
    run_free(&prog);
}

/* Graph memory (what the fake says its graphs hold: 8 MiB reserved, 2 MiB used) joins reserved; with no
 * graph allocation live in the table it is the graph pool's cache, not allocated: the driver's "used"
 * keeps freed graph memory until trimmed (H200). */
static void test_graph_memory(void)
{
    struct run prog, r;
    const char *args[] = {"grow", NULL};
    const char *env[] = {"VRAMTRACE_FAKE_GRAPH_MEM=8388608,2097152", NULL};
    run_prog(&prog, "prog_driver", args, env, 1);
    char p[700];
    dump_path(p, sizeof p, &prog, prog.pid, 3);
    cmd(&r, "report", p, "--json", NULL, NULL);
    ok(strstr(r.out, "\"reserved\":13631488,\"allocated\":5242880,") != NULL,
       "graph memory: reserved 5 + 8 MiB, allocated 5 MiB (no graph allocation live)");
    run_free(&r);
    run_free(&prog);
}

int main(void)
{
    test_graph_memory();
    test_library();
    test_no_nvml();
    test_many_sites();
    test_symbols();
    struct run grow, grow2;
    const char *args[] = {"grow", NULL};
    run_prog(&grow, "prog_driver", args, NULL, 1);
    run_prog(&grow2, "prog_driver", args, NULL, 1);
    ok(grow.status == 0 && grow2.status == 0, "two runs of the growing program");
    test_report(&grow);
    test_diff(&grow, &grow2);
    test_pool_diff(&grow);
    test_trend_bursts();
    test_trend(&grow, &grow2);
    test_report_processes(&grow, &grow2);
    test_diff_processes(&grow, &grow2);
    test_run_and_dump();
    test_dump_many();
    run_free(&grow);
    run_free(&grow2);
    return tap_done();
}
