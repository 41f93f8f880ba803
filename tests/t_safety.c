/* Never harm the process observed (issue 13): vramtrace dump signals only a process that catches the
 * signal, waits for one still starting, and refuses bad PIDs; the library cannot hang its host at exit
 * or in a fork child, raises no SIGPIPE or SIGXFSZ, keeps the program's signal semantics, its file
 * descriptors and threads, is silent in processes that never use CUDA, survives planted names in a
 * shared directory, cleans up after killed processes, keeps failed requests, and bounds its dumps. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static char lib[1100], cmd[1100], fake[2300];

static void nap_ms(int ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Starts argv in dir with the fake driver (and the library when preload), stdout and stderr into
 * dir/NAME.out and dir/NAME.err, extra "NAME=VALUE" settings in env; returns its pid. */
static pid_t spawn(const char *dir, const char *name, char *const argv[], const char *const *env, int preload)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.out", dir, name);
    int o = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    snprintf(path, sizeof path, "%s/%s.err", dir, name);
    int e = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1);
    dup2(e, 2);
    close(o);
    close(e);
    if (chdir(dir) != 0)
        _exit(126);
    setenv("LD_LIBRARY_PATH", fake, 1);
    unsetenv("VRAMTRACE_DIR");
    if (preload)
        setenv("LD_PRELOAD", lib, 1);
    else
        unsetenv("LD_PRELOAD");
    for (const char *const *p = env; p && *p; p++)
        putenv((char *)*p);
    execv(argv[0], argv);
    _exit(127);
}

/* Waits for pid at most seconds; its status (128 + signal when killed), or -1 when it did not end. */
static int wait_for(pid_t pid, double seconds)
{
    double until = now_s() + seconds;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 || now_s() > until)
            return -1;
        nap_ms(5);
    }
}

static char *file_text(const char *dir, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *t = read_text(path);
    return t ? t : strdup("");
}

/* Waits until dir/NAME.out holds word (a program's "ready"); 0, or -1 after seconds. */
static int wait_output(const char *dir, const char *name, const char *word, double seconds)
{
    char file[300];
    snprintf(file, sizeof file, "%s.out", name);
    for (double until = now_s() + seconds; now_s() < until; nap_ms(5)) {
        char *t = file_text(dir, file);
        int hit = strstr(t, word) != NULL;
        free(t);
        if (hit)
            return 0;
    }
    return -1;
}

static int count_files(const char *dir, const char *prefix, const char *suffix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name), sl = strlen(suffix);
        n += !strncmp(e->d_name, prefix, strlen(prefix)) && l >= sl && !strcmp(e->d_name + l - sl, suffix);
    }
    if (d)
        closedir(d);
    return n;
}

static void make_dir(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/vramtrace-safety.XXXXXX");
    if (!mkdtemp(dir))
        dir[0] = 0;
}

static void remove_tree(const char *dir)
{
    char c[1300];
    snprintf(c, sizeof c, "rm -rf '%s'", dir);
    if (system(c) != 0)
        diag("could not remove %s", dir);
}

/* vramtrace dump of numbers that are not process ids: exit 2, nothing signalled. */
static void test_pid_ranges(void)
{
    char dir[64];
    make_dir(dir, sizeof dir);
    char *sleeper[] = {"/bin/sleep", "20", NULL};
    pid_t victim = spawn(dir, "victim", sleeper, NULL, 0);
    char wrapped[32];
    snprintf(wrapped, sizeof wrapped, "%lld", (1LL << 32) + victim);
    const char *bad[] = {"4294967295", "99999999999999999999", "0", "-1", "-5", wrapped, "12abc", "+5", "0x10", " 7"};
    int all = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct run r;
        const char *args[] = {"dump", bad[i], "--timeout", "1", NULL};
        run_prog(&r, "../vramtrace", args, NULL, 0);
        int good = r.status == 2 && strstr(r.err, "not a process id") && count_lines(r.err, "") == 1;
        if (!good)
            diag("dump %s: status %d, %s", bad[i], r.status, r.err);
        all &= good;
        run_free(&r);
    }
    ok(all, "dump of 10 numbers that are no process id (2^32-1, 2^32+a live pid, 0, -1, 12abc, 0x10...): exit 2, one line");
    ok(kill(victim, 0) == 0 && waitpid(victim, NULL, WNOHANG) == 0, "and the process whose pid it wraps to is alive");
    kill(victim, SIGKILL);
    waitpid(victim, NULL, 0);
    remove_tree(dir);
}

/* The README's own sequence, with no delay: vramtrace run ... &, then vramtrace dump $! at once. */
static void test_run_then_dump(void)
{
    enum { PAIRS = 40, BATCH = 8 };
    char dir[64];
    make_dir(dir, sizeof dir);
    int killed = 0, dumps = 0, other = 0;
    double slowest = 0;
    for (int b = 0; b < PAIRS; b += BATCH) {
        pid_t target[BATCH], dumper[BATCH];
        double t0[BATCH];
        for (int i = 0; i < BATCH; i++) {
            char name[32];
            snprintf(name, sizeof name, "t%d", b + i);
            char prog[1200];
            snprintf(prog, sizeof prog, "%s/tests/prog_safety", build_dir());
            char *run[] = {cmd, "run", "--dir", "dumps", "--", prog, "sleep", "2500", NULL};
            target[i] = spawn(dir, name, run, NULL, 0);
            char pid[32];
            snprintf(pid, sizeof pid, "%ld", (long)target[i]);
            snprintf(name, sizeof name, "d%d", b + i);
            char *dump[] = {cmd, "dump", pid, "--timeout", "20", NULL};
            t0[i] = now_s();
            dumper[i] = spawn(dir, name, dump, NULL, 0);
        }
        int dstat[BATCH];
        for (int i = 0; i < BATCH; i++) {
            dstat[i] = wait_for(dumper[i], 30);
            double took = now_s() - t0[i];
            slowest = took > slowest ? took : slowest;
        }
        for (int i = 0; i < BATCH; i++) {
            int ds = dstat[i], ts = wait_for(target[i], 30);
            char name[32];
            snprintf(name, sizeof name, "d%d.out", b + i);
            char *out = file_text(dir, name);
            out[strcspn(out, "\n")] = 0;
            struct stat st;
            dumps += ds == 0 && out[0] && stat(out, &st) == 0;
            killed += ts == 128 + SIGUSR1;
            other += ts != 0 && ts != 128 + SIGUSR1;
            if (ds != 0 || ts != 0) {
                snprintf(name, sizeof name, "d%d.err", b + i);
                char *err = file_text(dir, name);
                diag("pair %d: dump %d (%s), target %d", b + i, ds, err, ts);
                free(err);
            }
            free(out);
        }
    }
    diag("%d pairs: %d dumps, %d targets killed by the signal, %d ended otherwise; slowest dump %.2f s", PAIRS,
         dumps, killed, other, slowest);
    ok(killed == 0 && other == 0, "40 immediate run & / dump $! pairs: no target killed");
    ok(dumps >= 38, "at least 38 dumps (%d)", dumps);
    struct stat st;
    char dumps_dir[128];
    snprintf(dumps_dir, sizeof dumps_dir, "%s/dumps", dir);
    ok(stat(dumps_dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
       "run --dir made the missing directory, mode 0700");
    remove_tree(dir);
}

/* Starts prog_safety MODE under the library in a fresh directory and waits for its "ready". */
static pid_t start_safety(char *dir, size_t len, const char *mode, const char *const *env)
{
    make_dir(dir, len);
    char prog[1200];
    snprintf(prog, sizeof prog, "%s/tests/prog_safety", build_dir());
    char *argv[] = {prog, (char *)mode, "3000", NULL};
    pid_t pid = spawn(dir, "target", argv, env, 1);
    if (wait_output(dir, "target", "ready", 10) < 0)
        diag("%s never said ready", mode);
    return pid;
}

static void dump_of(struct run *r, pid_t pid, const char *timeout)
{
    char p[32];
    snprintf(p, sizeof p, "%ld", (long)pid);
    const char *args[] = {"dump", p, "--timeout", timeout, NULL};
    run_prog(r, "../vramtrace", args, NULL, 0);
}

/* vramtrace dump never signals: a program that took SIGUSR1 back (its default, which kills) or ignores
 * it is dumped all the same, over the library's socket, and runs on; the library says once that the
 * signal is no longer its own. Anything that cannot be asked is refused, never signalled. */
static void test_refusals(void)
{
    char dir[64];
    struct run r;
    pid_t pid = start_safety(dir, sizeof dir, "sigreset", NULL);
    dump_of(&r, pid, "3");
    ok(r.status == 0 && strstr(r.out, "/vramtrace.") && strstr(r.out, ".dump\n"),
       "a program that reset SIGUSR1 to its default (which would kill it): dumped over the socket (%s)", r.err);
    run_free(&r);
    ok(wait_for(pid, 10) == 0, "and it runs on to its normal end");
    char *err = file_text(dir, "target.err");
    ok(strstr(err, "took signal USR1 over") && strstr(err, "vramtrace dump PID still does"),
       "the library said the signal is no longer its own, and what still works (%s)", err);
    free(err);
    remove_tree(dir);

    pid = start_safety(dir, sizeof dir, "sigignore", NULL);
    char *out = file_text(dir, "target.out");
    err = file_text(dir, "target.err");
    ok(strstr(out, "usr1 ignored") != NULL, "SIGUSR1 ignored before CUDA stays ignored: sigaction() shows SIG_IGN");
    ok(strstr(err, "ignores signal 10") != NULL, "said once on stderr: no dumps on signal");
    free(out);
    free(err);
    dump_of(&r, pid, "3");
    ok(r.status == 0 && strstr(r.out, ".dump\n"), "vramtrace dump still dumps it, over the socket (%s)", r.err);
    run_free(&r);
    ok(wait_for(pid, 10) == 0, "it ends normally");
    remove_tree(dir);

    /* A process without the library, young (still starting) or not. */
    make_dir(dir, sizeof dir);
    char *sleeper[] = {"/bin/sleep", "10", NULL};
    pid = spawn(dir, "plain", sleeper, NULL, 0);
    double t0 = now_s();
    dump_of(&r, pid, "20");
    ok(r.status == 1 && strstr(r.err, "is not loaded") && now_s() - t0 < 5,
       "a young process without the library: waited for while it starts, then refused (%.1f s)", now_s() - t0);
    run_free(&r);
    ok(kill(pid, 0) == 0 && waitpid(pid, NULL, WNOHANG) == 0, "and not signalled");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);

    /* A process whose memory map we may not read (non-dumpable, of another user): never signalled. */
    if (geteuid() != 0) {
        skip("a non-dumpable process of another user needs root to set up");
    } else {
        pid_t victim = fork();
        if (victim == 0) {
            if (setgid(65534) != 0 || setuid(65534) != 0)
                _exit(1);
            prctl(PR_SET_DUMPABLE, 0);
            for (;;)
                pause();
        }
        nap_ms(100);
        int fds[2];
        if (pipe(fds) != 0)
            fds[0] = fds[1] = -1;
        pid_t asker = fork();
        if (asker == 0) {
            dup2(fds[1], 2);
            dup2(fds[1], 1);
            if (setgid(65534) != 0 || setuid(65534) != 0)
                _exit(1);
            char v[32];
            snprintf(v, sizeof v, "%ld", (long)victim);
            execl(cmd, cmd, "dump", v, "--timeout", "2", (char *)NULL);
            _exit(127);
        }
        close(fds[1]);
        int st = wait_for(asker, 20);
        char text[2048] = "";
        ssize_t n = read(fds[0], text, sizeof text - 1);
        text[n > 0 ? n : 0] = 0;
        close(fds[0]);
        if (st == 127) {
            skip("the command cannot be run as user nobody from %s", cmd);
        } else {
            ok(st == 1 && strstr(text, "cannot read /proc/") && strstr(text, "not asked"),
               "a non-dumpable process (maps unreadable): refused, not asked (%s)", text);
            ok(kill(victim, 0) == 0 && waitpid(victim, NULL, WNOHANG) == 0, "and it is alive");
        }
        kill(victim, SIGKILL);
        waitpid(victim, NULL, 0);
    }
    remove_tree(dir);
}

/* A program that takes the dump signal for itself after its first CUDA call (C, and Python's
 * signal.signal): vramtrace dump dumps it without ever running its handler, and kill -USR1 still reaches
 * the handler. */
static void test_signal_owner(void)
{
    for (int py = 0; py < 2; py++) {
        char dir[64], script[1200];
        struct run r;
        pid_t pid;
        if (py) {
            make_dir(dir, sizeof dir);
            snprintf(script, sizeof script, "%s/../tests/progs/sig_owner.py", build_dir());
            char *argv[] = {"/usr/bin/python3", script, NULL};
            pid = spawn(dir, "target", argv, NULL, 1);
            if (wait_output(dir, "target", "ready", 10) < 0)
                diag("sig_owner.py never said ready");
        } else {
            pid = start_safety(dir, sizeof dir, "sigtake", NULL);
        }
        const char *what = py ? "Python" : "C";
        dump_of(&r, pid, "5");
        struct vt_dumpfile d;
        char path[1200];
        snprintf(path, sizeof path, "%.*s", (int)strcspn(r.out, "\n"), r.out);
        int loaded = r.status == 0 && load_dump(path, &d) == 0;
        ok(loaded && !strcmp(d.reason, "request") && d.pid == pid,
           "%s: a program that took SIGUSR1 after its first CUDA call is dumped by vramtrace dump (%s)", what, r.err);
        if (loaded)
            vt_dumpfile_free(&d);
        run_free(&r);
        nap_ms(200);
        char *out = file_text(dir, "target.out");
        ok(kill(pid, 0) == 0 && !strstr(out, "handler-calls"), "%s: and its handler was never run by it", what);
        free(out);
        kill(pid, SIGUSR1);
        int st = wait_for(pid, 10);
        out = file_text(dir, "target.out");
        ok(st == 0 && strstr(out, "handler-calls 1"), "%s: kill -USR1 still reaches its own handler (%d, %s)", what,
           st, out);
        free(out);
        remove_tree(dir);
    }
}

/* Directories as the target sees them, and an answer instead of a 30 s wait when a dump fails. */
static void test_directories(void)
{
    char dir[64];
    struct run r;
    const char *rel[] = {"VRAMTRACE_DIR=rel-dumps", NULL};
    char sub[128];
    pid_t pid = start_safety(dir, sizeof dir, "sleep", rel);
    snprintf(sub, sizeof sub, "%s/rel-dumps", dir);
    mkdir(sub, 0700); /* made after start: the library fell back to the working directory, and said so */
    dump_of(&r, pid, "10");
    char want[256];
    snprintf(want, sizeof want, "%s/vramtrace.%ld.1.dump\n", dir, (long)pid);
    ok(r.status == 0 && !strcmp(r.out, want), "a relative VRAMTRACE_DIR that did not exist at start: the working "
                                             "directory, as the process saw it (%s)", r.out);
    run_free(&r);
    wait_for(pid, 10);
    remove_tree(dir);

    make_dir(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/rel-dumps", dir);
    mkdir(sub, 0700);
    char prog[1200];
    snprintf(prog, sizeof prog, "%s/tests/prog_safety", build_dir());
    char *argv[] = {prog, "sleep", "3000", NULL};
    pid = spawn(dir, "target", argv, rel, 1);
    wait_output(dir, "target", "ready", 10);
    dump_of(&r, pid, "10");
    snprintf(want, sizeof want, "%s/rel-dumps/vramtrace.%ld.1.dump\n", dir, (long)pid);
    ok(r.status == 0 && !strcmp(r.out, want), "a relative VRAMTRACE_DIR: resolved against the target's directory, "
                                             "not dump's (%s)", r.out);
    run_free(&r);
    wait_for(pid, 10);
    remove_tree(dir);

    if (geteuid() != 0) {
        skip("a directory that passes the start check but takes no files needs root (/proc)");
        return;
    }
    const char *proc[] = {"VRAMTRACE_DIR=/proc", NULL};
    pid = start_safety(dir, sizeof dir, "sleep", proc);
    double t0 = now_s();
    dump_of(&r, pid, "30");
    ok(r.status == 1 && strstr(r.err, "no dump: cannot write dumps in /proc") && now_s() - t0 < 5,
       "a dump that cannot be written: the library's reason, at once (%.1f s), not a 30 s wait", now_s() - t0);
    run_free(&r);
    wait_for(pid, 10);
    remove_tree(dir);
}

/* exit() from a SIGTERM handler while the main thread allocates: the exit dump never hangs it. */
static void test_termexit(void)
{
    enum { RUNS = 100 };
    char dir[64], prog[1200];
    make_dir(dir, sizeof dir);
    snprintf(prog, sizeof prog, "%s/tests/prog_safety", build_dir());
    const char *env[] = {NULL, NULL};
    char dirset[128];
    snprintf(dirset, sizeof dirset, "VRAMTRACE_DIR=%s", dir);
    env[0] = dirset;
    int hangs = 0, clean = 0;
    unsigned seed = 12345;
    double worst = 0;
    for (int i = 0; i < RUNS; i++) {
        char *argv[] = {prog, "termexit", NULL}, name[32];
        snprintf(name, sizeof name, "term%d", i);
        pid_t pid = spawn(dir, name, argv, env, 1);
        wait_output(dir, name, "ready", 10);
        nap_ms(1 + (int)(rand_r(&seed) % 20));
        double t0 = now_s();
        kill(pid, SIGTERM);
        int st = wait_for(pid, 10);
        double took = now_s() - t0;
        worst = took > worst ? took : worst;
        if (st < 0) {
            hangs++;
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        clean += st == 0;
        if (st != 0) {
            strcat(name, ".err");
            char *err = file_text(dir, name);
            diag("run %d: status %d: %s", i, st, err);
            free(err);
        }
    }
    int dumps = count_files(dir, "vramtrace.", ".dump");
    diag("%d runs: %d hangs, %d exit 0, %d exit dumps; slowest exit %.2f s", RUNS, hangs, clean, dumps, worst);
    ok(hangs == 0 && clean == RUNS, "100 SIGTERM-handler exits while allocating: no hang, all exit 0");
    ok(dumps >= RUNS / 2, "most of them still wrote their exit dump (%d)", dumps);
    remove_tree(dir);
}

static void test_forkload(void)
{
    struct run r;
    const char *args[] = {"forkload", "200", NULL};
    run_prog(&r, "prog_safety", args, NULL, 1);
    char buf[64];
    ok(r.status == 0 && out_value(&r, "forks", buf, sizeof buf) && !strcmp(buf, "200 hangs 0 bad 0"),
       "200 forks while four threads take stacks: no child hangs (%s)", buf);
    run_free(&r);
}

/* Our writes never raise a signal in the program. */
static void test_no_signals(void)
{
    struct run r, bare;
    const char *env[] = {"STDERR_PIPE_CLOSED=1", "VRAMTRACE_DEPTH=lots", NULL};
    const char *args[] = {"direct", NULL};
    run_prog(&r, "prog_driver", args, env, 1);
    ok(r.status == 0 && strstr(r.out, "done"), "stderr a closed pipe and a bad setting to report: no SIGPIPE, the "
                                               "program runs (status %d)", r.status);
    run_free(&r);

    struct vt_dumpfile d[2];
    const char *fsize[] = {"RLIMIT_FSIZE=4096", NULL};
    const char *big[] = {"bigdump", NULL};
    run_prog(&r, "prog_safety", big, fsize, 1);
    run_prog(&bare, "prog_safety", big, fsize, 0);
    ok(r.status == 0 && strstr(r.out, "dump failed") && strstr(r.out, "done"),
       "a dump past ulimit -f: no SIGXFSZ, the API call fails, the program runs on (status %d)", r.status);
    ok(strstr(r.err, "file size limit") && count_lines(r.err, "vramtrace: ") == 1, "said once: %s", r.err);
    ok(count_files(r.dir, ".vramtrace.", ".tmp") == 0 && load_dumps(&r, d, 2) == 0,
       "no temporary file and no partial dump left");
    ok(bare.status == r.status, "the same status as without the library");
    run_free(&r);
    run_free(&bare);
}

/* What the library takes from the process: none of the low file descriptors a program counts on (the
 * ones it keeps, its dump socket and libunwind's pipe, sit at the top of the range, vt_fd.h), none at all
 * under a limit below 64 (no socket, no stacks: said), and two threads once CUDA is used (the dumper and
 * the socket's listener). */
static void test_footprint(void)
{
    struct run r, bare, nostack;
    const char *fds[] = {"fds", NULL};
    char a[32], b[32], c[32];
    static const char *const limits[] = {"RLIMIT_NOFILE=16", "RLIMIT_NOFILE=5", "RLIMIT_NOFILE=256"};
    for (int i = 0; i < 3; i++) {
        const char *lim[] = {limits[i], NULL}, *lim0[] = {limits[i], "VRAMTRACE_DEPTH=0", NULL};
        run_prog(&r, "prog_safety", fds, lim, 1);
        run_prog(&nostack, "prog_safety", fds, lim0, 1);
        run_prog(&bare, "prog_safety", fds, lim, 0);
        int got = out_value(&r, "opened", a, sizeof a) && out_value(&bare, "opened", b, sizeof b) &&
                  out_value(&nostack, "opened", c, sizeof c);
        if (i < 2) {
            ok(got && !strcmp(a, b) && !strcmp(c, b),
               "%s: the program opens as many files as without the library, with stacks or not (%s %s %s)", limits[i],
               a, c, b);
            ok(strstr(r.err, "ulimit -n") != NULL, "%s: and hears why it has no call sites", limits[i]);
        } else {
            /* Its dump socket and libunwind's pipe: three descriptors, all above 3/4 of the limit. */
            ok(got && atoi(a) == atoi(b) - 3 && strstr(r.out, "first 3"),
               "%s: three fewer (the socket, libunwind's pipe), none of them low: the program's next file is "
               "still descriptor 3 (%s of %s)", limits[i], a, b);
        }
        run_free(&r);
        run_free(&nostack);
        run_free(&bare);
    }

    const char *th[] = {"threads", NULL};
    run_prog(&r, "prog_safety", th, NULL, 1);
    is_str(out_value(&r, "threads-added", a, sizeof a), "2",
           "two threads of ours once CUDA is used (the dumper, the socket's listener)");
    run_free(&r);
}

/* The library's own functions are not the program's: a program that defines functions of the same names
 * (vt_table_add, vt_now_ns, vt_stack_capture) keeps them, and the library keeps recording. */
static void test_names(void)
{
    struct run r;
    const char *args[] = {"clash", NULL};
    char a[32], b[32];
    run_prog(&r, "prog_safety", args, NULL, 1);
    is_str(out_value(&r, "clash-calls", a, sizeof a), "0", "the library made no call to the program's vt_* functions");
    is_str(out_value(&r, "own", b, sizeof b), "1", "the program's own vt_now_ns is the one it calls");
    struct vt_dumpfile d[4];
    size_t n = load_dumps(&r, d, 4);
    ok(n >= 1 && count_allocs(&d[0], "device", "cuMemAlloc_v2", 1 << 20) == 1,
       "its allocation recorded all the same (the first of %zu dumps)", n);
    free_dumps(d, n);
    run_free(&r);
}

/* A process that never makes a CUDA call hears nothing and leaves nothing. */
static void test_quiet(void)
{
    struct run r;
    const char *bad[] = {"VRAMTRACE_INTERVAL=oops", NULL};
    run_prog(&r, "/bin/true", NULL, bad, 1);
    ok(r.status == 0 && !r.err[0] && count_files(r.dir, "vramtrace.", ".dump") == 0,
       "/bin/true with a bad setting: nothing said, no dump");
    run_free(&r);
    const char *sh[] = {"-c", "ls >/dev/null; i=0; while [ $i -lt 200 ]; do /bin/echo x >/dev/null; i=$((i+1)); done",
                        NULL};
    run_prog(&r, "/bin/sh", sh, NULL, 1);
    ok(r.status == 0 && !r.err[0] && count_files(r.dir, "vramtrace.", ".dump") == 0,
       "a shell, ls and 200 fork+exec of echo: no dump, nothing said");
    run_free(&r);

    char line[1600];
    snprintf(line, sizeof line, "ls >/dev/null; %s/tests/prog_safety twodumps", build_dir());
    const char *sh2[] = {"run", "--", "/bin/sh", "-c", line, NULL};
    run_prog(&r, "../vramtrace", sh2, NULL, 0);
    struct vt_dumpfile d[8];
    size_t n = load_dumps(&r, d, 8);
    int one_pid = n == 3;
    for (size_t i = 0; i < n; i++)
        one_pid &= d[i].pid == d[0].pid && strstr(d[i].exe, "prog_safety") != NULL;
    ok(one_pid, "run -- sh -c 'ls; prog': only the CUDA program's dumps (two asked for and its exit dump): %zu", n);
    free_dumps(d, n);
    run_free(&r);
}

/* Another user's files in a shared directory: planted names are skipped, never followed or replaced;
 * temporary files of processes killed mid-dump are removed. */
static void test_shared_dir(void)
{
    char dir[64], path[256], target[256];
    make_dir(dir, sizeof dir);
    snprintf(target, sizeof target, "%s/precious", dir);
    FILE *f = fopen(target, "w");
    if (f) {
        fputs("precious\n", f);
        fclose(f);
    }
    /* A temporary file of a process that is gone, and one of a process that lives (this one). */
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    char stale[256], live[256];
    snprintf(stale, sizeof stale, "%s/.vramtrace.%ld.aB3xQz.tmp", dir, (long)gone);
    snprintf(live, sizeof live, "%s/.vramtrace.%ld.kL9pWe.tmp", dir, (long)getpid());
    close(open(stale, O_WRONLY | O_CREAT, 0600));
    close(open(live, O_WRONLY | O_CREAT, 0600));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* Names planted before the program starts: its first two dump names. */
        snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", dir, (long)getpid());
        f = fopen(path, "w");
        if (f) {
            fputs("planted\n", f);
            fclose(f);
        }
        snprintf(path, sizeof path, "%s/vramtrace.%ld.2.dump", dir, (long)getpid());
        if (symlink(target, path) != 0)
            _exit(125);
        snprintf(path, sizeof path, "%s/.vramtrace.%ld.1.dump.tmp", dir, (long)getpid());
        if (symlink(target, path) != 0)
            _exit(125);
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        if (chdir(dir) != 0)
            _exit(126);
        setenv("LD_LIBRARY_PATH", fake, 1);
        setenv("LD_PRELOAD", lib, 1);
        setenv("VRAMTRACE_DIR", dir, 1);
        char prog[1200];
        snprintf(prog, sizeof prog, "%s/tests/prog_safety", build_dir());
        execl(prog, prog, "twodumps", (char *)NULL);
        _exit(127);
    }
    int st = wait_for(pid, 30);
    ok(st == 0, "a program whose dump names were planted runs (status %d)", st);
    char *precious = file_text(dir, "precious");
    ok(!strcmp(precious, "precious\n"), "a planted link was never followed");
    free(precious);
    int seqs_ok = 1;
    for (int seq = 3; seq <= 5; seq++) {
        struct vt_dumpfile d;
        snprintf(path, sizeof path, "%s/vramtrace.%ld.%d.dump", dir, (long)pid, seq);
        if (load_dump(path, &d) != 0) {
            seqs_ok = 0;
            continue;
        }
        seqs_ok &= d.seq == (unsigned long)seq;
        vt_dumpfile_free(&d);
    }
    ok(seqs_ok, "its dumps took the next free names, 3 to 5, each header's seq the same as its name");
    snprintf(path, sizeof path, "vramtrace.%ld.1.dump", (long)pid);
    char *planted = file_text(dir, path);
    ok(!strcmp(planted, "planted\n"), "a planted file was left as it was");
    free(planted);
    struct stat sb;
    ok(stat(stale, &sb) != 0 && stat(live, &sb) == 0,
       "the temporary file of a dead process was removed, that of a live one kept");
    remove_tree(dir);
}

/* Failed requests: every one kept and counted, OOM dumps rate-limited, carried into the exit dump. */
static void test_oom_burst(void)
{
    struct run r;
    struct vt_dumpfile d[8];
    const char *args[] = {"oomburst", NULL};
    run_prog(&r, "prog_safety", args, NULL, 1);
    size_t n = load_dumps(&r, d, 8), ooms = 0;
    for (size_t i = 0; i < n; i++)
        ooms += !strcmp(d[i].reason, "oom");
    char buf[32];
    ok(r.status == 0 && out_value(&r, "failed", buf, sizeof buf) && !strcmp(buf, "65"), "65 failed requests in a burst");
    ok(ooms == 1, "one OOM dump for the burst, not 65 (%zu)", ooms);
    const struct vt_dumpfile *last = n ? &d[n - 1] : NULL;
    ok(last && !strcmp(last->reason, "exit") && last->nfailed == 1 && last->failed[0].count == 65 &&
           last->failed[0].size == (1ull << 40),
       "the exit dump, right after, holds the request: 1 TiB, 65 times");
    if (n) {
        char path[1200];
        snprintf(path, sizeof path, "%s/vramtrace.%ld.%lu.dump", r.dir, last->pid, last->seq);
        struct run rep;
        const char *rargs[] = {"report", path, NULL};
        run_prog(&rep, "../vramtrace", rargs, NULL, 0);
        ok(strstr(rep.out, "failed requests (out of memory): 65") && strstr(rep.out, "1.0 TiB × 65 cuMemAlloc_v2"),
           "report shows it");
        run_free(&rep);
    }
    free_dumps(d, n);
    run_free(&r);
}

/* Settings are checked at start; interval dumps have a floor and a retention. */
static void test_bounds(void)
{
    struct run r;
    struct vt_dumpfile d[16];
    const char *args[] = {"sleep", "600", NULL};
    static const char *const bad[] = {"VRAMTRACE_INTERVAL=1e-9", "VRAMTRACE_INTERVAL=0x10", "VRAMTRACE_INTERVAL=0.5",
                                      "VRAMTRACE_INTERVAL=nan"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *env[] = {bad[i], NULL};
        run_prog(&r, "prog_safety", args, env, 1);
        size_t n = load_dumps(&r, d, 16);
        ok(strstr(r.err, bad[i]) && strstr(r.err, "using 0") && n == 1, "%s: refused, said, no interval dumps", bad[i]);
        free_dumps(d, n);
        run_free(&r);
    }
    const char *keep[] = {"VRAMTRACE_INTERVAL=1", "VRAMTRACE_KEEP=2", NULL};
    const char *longer[] = {"sleep", "4400", NULL};
    run_prog(&r, "prog_safety", longer, keep, 1);
    size_t n = load_dumps(&r, d, 16), interval = 0;
    unsigned long first = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(d[i].reason, "interval")) {
            first = interval++ ? first : d[i].seq;
        }
    ok(interval == 2 && first == 3, "VRAMTRACE_KEEP=2 over four interval dumps: the newest two are kept (%zu, from #%lu)",
       interval, first);
    free_dumps(d, n);
    run_free(&r);

    const char *typo[] = {"VRAMTRACE_INTERVALS=5", NULL};
    run_prog(&r, "prog_safety", args, typo, 1);
    ok(strstr(r.err, "VRAMTRACE_INTERVALS is not a vramtrace setting") != NULL, "a misspelt setting is named");
    run_free(&r);

    const char *run_bad[] = {"run", "--interval", "0.5", "--", "/bin/true", NULL};
    run_prog(&r, "../vramtrace", run_bad, NULL, 0);
    ok(r.status == 2 && strstr(r.err, "VRAMTRACE_INTERVAL=0.5 is out of range"), "vramtrace run refuses a bad value before "
                                                                                 "starting the program");
    run_free(&r);
}

/* The program's own handler keeps its semantics: called once when one-shot, with its mask. */
static void test_signal_semantics(void)
{
    struct run r;
    struct vt_dumpfile d[4];
    char buf[64];
    const char *one[] = {"sigoneshot", NULL};
    struct run bare;
    char bbuf[64];
    run_prog(&r, "prog_safety", one, NULL, 1);
    run_prog(&bare, "prog_safety", one, NULL, 0);
    size_t n = load_dumps(&r, d, 4);
    ok(r.status == 0 && out_value(&r, "handler-calls", buf, sizeof buf) && !strncmp(buf, "1 ", 2) &&
           strstr(r.out, "after default") && n == 2,
       "a one-shot (SA_RESETHAND) handler of the program: called once, the signal a dump, then the default action "
       "back (%s)", buf);
    ok(bare.status == 0 && out_value(&bare, "handler-calls", bbuf, sizeof bbuf) && !strcmp(buf, bbuf),
       "as without the library (%s)", bbuf);
    free_dumps(d, n);
    run_free(&r);
    run_free(&bare);
    const char *mask[] = {"sigmask", NULL};
    run_prog(&r, "prog_safety", mask, NULL, 1);
    ok(r.status == 0 && out_value(&r, "handler-calls", buf, sizeof buf) && !strcmp(buf, "2 usr2-blocked-in-handler 1 after handled"),
       "the program's handler runs with its own mask (%s)", buf);
    run_free(&r);
}

/* Dumps copy the table a chunk at a time while threads change it: each must still be the table at one
 * moment (no entry twice, live entries = allocations - frees). */
static void test_snapshot_consistency(void)
{
    struct run r;
    enum { MAXD = 64 };
    static struct vt_dumpfile d[MAXD];
    const char *args[] = {"snapchurn", "30", NULL};
    run_prog(&r, "prog_safety", args, NULL, 1);
    size_t n = load_dumps(&r, d, MAXD), consistent = 0, files = (size_t)count_files(r.dir, "vramtrace.", ".dump");
    for (size_t i = 0; i < n; i++) {
        uint64_t allocs = 0, frees = 0;
        for (size_t j = 0; j < d[i].napis; j++) {
            allocs += d[i].apis[j].allocs;
            frees += d[i].apis[j].frees;
        }
        consistent += allocs - frees == d[i].nallocs && d[i].nallocs >= 200000;
    }
    ok(r.status == 0 && n >= 5 && n == files, "dumps of a 200,000-entry table under four churning threads: %zu, all read "
       "back (no entry twice)", n);
    is_u64(consistent, n, "each the table at one moment: live entries = allocations - frees");
    free_dumps(d, n);
    run_free(&r);
}

int main(void)
{
    snprintf(lib, sizeof lib, "%s/libvramtrace.so", build_dir());
    snprintf(cmd, sizeof cmd, "%s/vramtrace", build_dir());
    snprintf(fake, sizeof fake, "%s/fake:%s/tests", build_dir(), build_dir());
    test_pid_ranges();
    test_refusals();
    test_signal_owner();
    test_directories();
    test_run_then_dump();
    test_termexit();
    test_forkload();
    test_no_signals();
    test_footprint();
    test_names();
    test_quiet();
    test_shared_dir();
    test_oom_burst();
    test_bounds();
    test_signal_semantics();
    test_snapshot_consistency();
    return tap_done();
}
