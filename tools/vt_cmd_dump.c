/* vramtrace dump PID... | --children PID: asks live processes for a dump each and waits for it.
 *
 * A signal is sent only to a process that will catch it: a PID is a positive number that fits pid_t
 * (never kill() with 0 or a negative number, which mean process groups); libvramtrace.so must be in its
 * memory map (a map that cannot be read is a refusal, never a guess); its dumper thread ("vramtrace",
 * started at its first CUDA call) must be running; and the signal's bit must be set in SigCgt of
 * /proc/PID/status. While a process is still starting (vramtrace run before its exec, the library
 * loading, no CUDA call yet) it is waited for, within the timeout, so `vramtrace run ... &` followed at
 * once by `vramtrace dump $!` just works. The request goes by sigqueue with the address of a pipe of
 * ours: the library writes back where the dump is, or why there is none. Where it cannot (another
 * user's process that cannot open our pipe), the dump is looked for in the directories the library
 * may use, as the process sees them. All targets are handled together, so the dumps of a job's
 * ranks are as close in time as they can be. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vt_cmd.h"
#include "vt_paths.h"
#include "vt_settings.h"
#include "vt_reply.h"

#define VT_DUMP_MAX 1024
/* A process younger than this may still be loading its libraries. */
#define VT_STARTUP_S 2.0

enum vt_state { VT_T_WAIT, VT_T_SENT, VT_T_DONE, VT_T_FAILED };

/* One process to dump. */
struct vt_target {
    long pid;
    enum vt_state state;
    const char *waiting; /* while waiting: what is said if the time runs out */
    int signo;
    char dirs[2][PATH_MAX];  /* where its dumps may appear, when no answer comes */
    unsigned long before[2]; /* the newest dump there before we asked */
    char path[VT_DUMP_PATH];
};

static int vt_proc_env(long pid, const char *name, char *out, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[8192];
    size_t nl = strlen(name);
    int found = -1, c, n = 0;
    while ((c = fgetc(f)) != EOF) {
        if (c && n < (int)sizeof buf - 1) {
            buf[n++] = (char)c;
            continue;
        }
        buf[n] = 0;
        if (!strncmp(buf, name, nl) && buf[nl] == '=' && strlen(buf + nl + 1) < len) {
            strcpy(out, buf + nl + 1);
            found = 0;
        }
        n = 0;
    }
    fclose(f);
    return found;
}

/* 1 when libvramtrace.so is mapped, 0 when not, -1 (errno set) when the map cannot be read. */
static int vt_has_library(long pid)
{
    char path[64], line[PATH_MAX + 128];
    snprintf(path, sizeof path, "/proc/%ld/maps", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int found = 0;
    /* A map that reads empty is that of a process in the middle of exec, or ended: not loaded (yet). */
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, "/libvramtrace.so") != NULL;
    fclose(f);
    return found;
}

/* 1 when the library's dumper thread runs in pid. */
static int vt_has_dumper(long pid)
{
    char path[96], comm[32];
    snprintf(path, sizeof path, "/proc/%ld/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%ld/task/%.20s/comm", pid, e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            found = fgets(comm, sizeof comm, f) && !strcmp(comm, "vramtrace\n");
            fclose(f);
        }
    }
    closedir(d);
    return found;
}

/* A line of /proc/PID/status, after "Key:" and its blanks; 0, or -1. */
static int vt_status_field(long pid, const char *key, char *out, size_t len)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int r = -1;
    size_t kl = strlen(key);
    while (r && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            char *v = line + kl + 1;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = 0;
            snprintf(out, len, "%s", v);
            r = 0;
        }
    fclose(f);
    return r;
}

/* Whether bit sig of a /proc/PID/status signal mask (hex) is set: 1, 0, or -1 when it cannot be read. */
static int vt_sigmask_has(long pid, const char *key, int sig)
{
    char hex[64];
    if (vt_status_field(pid, key, hex, sizeof hex) < 0)
        return -1;
    size_t n = strlen(hex), digit = (size_t)(sig - 1) / 4;
    if (digit >= n)
        return 0;
    char c = hex[n - 1 - digit];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    return v < 0 ? -1 : (v >> ((sig - 1) % 4)) & 1;
}

/* Seconds since pid started; a large number when it cannot be told. */
static double vt_age(long pid)
{
    unsigned long long start = vt_proc_start(pid);
    if (!start)
        return 1e9;
    double up = 0;
    FILE *f = fopen("/proc/uptime", "r");
    if (!f || fscanf(f, "%lf", &up) != 1)
        up = 0;
    if (f)
        fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return up - (double)start / (double)(hz > 0 ? hz : 100);
}

/* 1 when pid is still the vramtrace command itself (vramtrace run before it becomes the program). */
static int vt_is_launcher(long pid)
{
    char path[64], target[PATH_MAX], self[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%ld/exe", pid);
    ssize_t a = readlink(path, target, sizeof target - 1), b = readlink("/proc/self/exe", self, sizeof self - 1);
    if (a <= 0 || b <= 0)
        return 0;
    target[a] = self[b] = 0;
    return !strcmp(target, self);
}

/* The newest complete dump of pid in dir (highest sequence number), 0 when none. */
static unsigned long vt_latest_seq(const char *dir, long pid)
{
    DIR *d = dir[0] ? opendir(dir) : NULL;
    unsigned long best = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long p;
        unsigned long seq;
        if (vt_dump_name_parse(e->d_name, &p, &seq) == 0 && p == pid && seq > best)
            best = seq;
    }
    closedir(d);
    return best;
}

/* Where the library may write pid's dumps, as pid sees them (for when no answer comes). */
static void vt_target_dirs(struct vt_target *t, const char *dir_opt)
{
    char v[PATH_MAX], cwd_link[64], cwd[PATH_MAX], uid[128], tmpdir[PATH_MAX];
    long pid = t->pid;
    snprintf(cwd_link, sizeof cwd_link, "/proc/%ld/cwd", pid);
    ssize_t n = readlink(cwd_link, cwd, sizeof cwd - 1);
    cwd[n > 0 ? n : 0] = 0;
    if (dir_opt)
        snprintf(t->dirs[0], sizeof t->dirs[0], "%s", dir_opt);
    else if (vt_proc_env(pid, "VRAMTRACE_DIR", v, sizeof v) == 0 && v[0]) {
        /* Relative: the library made it absolute against its working directory at start; the one it
         * has now is the best guess from here. */
        char joined[2 * PATH_MAX + 2];
        snprintf(joined, sizeof joined, "%s%s%s", v[0] == '/' ? "" : cwd, v[0] == '/' ? "" : "/", v);
        if (strlen(joined) < sizeof t->dirs[0])
            strcpy(t->dirs[0], joined);
    } else
        snprintf(t->dirs[0], sizeof t->dirs[0], "%s", cwd);
    unsigned long euid = 0;
    if (vt_proc_env(pid, "TMPDIR", tmpdir, sizeof tmpdir) != 0)
        tmpdir[0] = 0;
    if (vt_status_field(pid, "Uid", uid, sizeof uid) == 0 && sscanf(uid, "%*s %lu", &euid) == 1)
        vt_private_dir(t->dirs[1], sizeof t->dirs[1], (uid_t)euid, tmpdir);
    for (int i = 0; i < 2; i++)
        t->before[i] = vt_latest_seq(t->dirs[i], pid);
}

static void vt_fail_target(struct vt_target *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void vt_fail_target(struct vt_target *t, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "vramtrace dump: process %ld: ", t->pid);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    t->state = VT_T_FAILED;
}

/* Moves a waiting target on: refused (said), still waiting, or signalled. */
static void vt_target_step(struct vt_target *t, int reply_fd, const char *dir_opt)
{
    long pid = t->pid;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
        vt_fail_target(t, "no such process");
        return;
    }
    int lib = vt_has_library(pid);
    if (lib < 0) {
        vt_fail_target(t, "cannot read /proc/%ld/maps (%s), so whether libvramtrace.so is loaded cannot be told: not "
                          "signalled (another user's process, a setuid or non-dumpable one: run vramtrace dump as "
                          "its user, or as root)", pid, strerror(errno));
        return;
    }
    if (!lib) {
        if (vt_is_launcher(pid) || vt_age(pid) < VT_STARTUP_S) {
            t->waiting = "libvramtrace.so is not loaded (it was waited for while the process started)";
            return;
        }
        vt_fail_target(t, "libvramtrace.so is not loaded (start the program with vramtrace run, or with "
                          "LD_PRELOAD=libvramtrace.so): not signalled");
        return;
    }
    char sigtext[64];
    const struct vt_setting *s = vt_setting_find("VRAMTRACE_SIGNAL");
    double sig = SIGUSR1;
    char why[256];
    if (vt_proc_env(pid, s->name, sigtext, sizeof sigtext) == 0 && sigtext[0] &&
        vt_setting_parse(s, sigtext, &sig, why, sizeof why) < 0)
        sig = SIGUSR1; /* the library falls back to USR1 for a value it cannot use */
    if (sig == 0) {
        vt_fail_target(t, "it runs with VRAMTRACE_SIGNAL=none: it cannot be asked for a dump");
        return;
    }
    t->signo = (int)sig;
    if (!vt_has_dumper(pid)) {
        t->waiting = "it has made no CUDA call yet: libvramtrace.so is loaded, but handles the dump signal only from "
                     "the first CUDA call on (there is nothing to dump before)";
        return;
    }
    int caught = vt_sigmask_has(pid, "SigCgt", t->signo);
    if (caught != 1) {
        int ignored = vt_sigmask_has(pid, "SigIgn", t->signo);
        vt_fail_target(t, "%s signal %d (%s) now, so it %s: not signalled (the program changed the signal's "
                          "handling; start it with VRAMTRACE_SIGNAL set to a signal it leaves alone)",
                       ignored == 1 ? "ignores" : "does not catch", t->signo, strsignal(t->signo),
                       ignored == 1 ? "would not dump" : "would be killed");
        return;
    }
    vt_target_dirs(t, dir_opt);
    union sigval v;
    v.sival_ptr = (void *)(uintptr_t)((uint64_t)VT_REPLY_MAGIC << 32 | (uint32_t)reply_fd);
    if (sigqueue((pid_t)pid, t->signo, v) != 0) {
        vt_fail_target(t, "cannot signal it: %s", strerror(errno));
        return;
    }
    t->state = VT_T_SENT;
}

/* Answers the library wrote into our pipe: "<pid> ok <path>" or "<pid> error <why>". */
static void vt_read_replies(int fd, struct vt_target *t, size_t n, char *buf, size_t *len, size_t cap)
{
    ssize_t got;
    while ((got = read(fd, buf + *len, cap - 1 - *len)) > 0)
        *len += (size_t)got;
    buf[*len] = 0;
    char *line = buf, *nl;
    while ((nl = strchr(line, '\n'))) {
        *nl = 0;
        long pid;
        char status[16];
        int off = 0;
        if (sscanf(line, "%ld %15s %n", &pid, status, &off) >= 2 && off > 0)
            for (size_t i = 0; i < n; i++) {
                if (t[i].pid != pid || t[i].state != VT_T_SENT)
                    continue;
                if (!strcmp(status, "ok")) {
                    snprintf(t[i].path, sizeof t[i].path, "%s", line + off);
                    t[i].state = VT_T_DONE;
                } else {
                    vt_fail_target(&t[i], "no dump: %s", line + off);
                }
            }
        line = nl + 1;
    }
    *len = strlen(line);
    memmove(buf, line, *len + 1);
}

/* The parent pid of pid from /proc/PID/stat, -1 when it cannot be read. The command name (field 2)
 * may hold spaces and parentheses: the fields after it start after its last ')'. */
static long vt_ppid(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    long ppid;
    return p && sscanf(p + 1, " %*c %ld", &ppid) == 1 ? ppid : -1;
}

/* Appends the descendants of root that have the library loaded to pids (at most max in all); returns
 * the new count and sets *without to how many descendants lack the library. */
static size_t vt_descendants(long root, long *pids, size_t n, size_t max, size_t *without)
{
    DIR *d = opendir("/proc");
    if (!d)
        return n;
    /* Every process and its parent, once; then the tree below root, breadth first. */
    size_t cap = 1024, all = 0;
    long (*pp)[2] = malloc(cap * sizeof *pp);
    struct dirent *e;
    while (pp && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end)
            continue;
        if (all == cap) {
            long (*grown)[2] = realloc(pp, 2 * cap * sizeof *pp);
            if (!grown)
                break;
            pp = grown;
            cap *= 2;
        }
        pp[all][0] = pid;
        pp[all][1] = vt_ppid(pid);
        all++;
    }
    closedir(d);
    long queue[4096];
    size_t head = 0, tail = 0;
    queue[tail++] = root;
    while (pp && head < tail) {
        long parent = queue[head++];
        for (size_t i = 0; i < all; i++) {
            if (pp[i][1] != parent || tail == sizeof queue / sizeof queue[0])
                continue;
            queue[tail++] = pp[i][0];
            if (vt_has_library(pp[i][0]) != 1)
                (*without)++;
            else if (n < max)
                pids[n++] = pp[i][0];
        }
    }
    free(pp);
    return n;
}

/* A process id: decimal digits only, from 1 to the largest pid_t. -1 for anything else. */
static long vt_parse_pid(const char *s)
{
    long v = 0;
    if (!*s || strlen(s) > 10)
        return -1;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        v = v * 10 + (*c - '0');
    }
    return v >= 1 && v <= 0x7fffffffL ? v : -1;
}

static double vt_mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int vt_dump_request(const long *pids, size_t npids, const char *dir_opt, double timeout, int quiet_waiting,
                    char (*paths)[VT_DUMP_PATH])
{
    struct vt_target *t = calloc(npids, sizeof *t);
    int p[2];
    if (!t || pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        if (!t)
            errno = ENOMEM;
        free(t);
        return -1;
    }
    for (size_t i = 0; i < npids; i++)
        t[i].pid = pids[i];
    char replies[8192];
    size_t rlen = 0;
    double start = vt_mono();
    for (;;) {
        size_t open = 0;
        for (size_t i = 0; i < npids; i++) {
            if (t[i].state == VT_T_WAIT)
                vt_target_step(&t[i], p[1], dir_opt);
            if (t[i].state == VT_T_SENT) {
                vt_read_replies(p[0], t, npids, replies, &rlen, sizeof replies);
                /* No answer can come from a process that cannot open our pipe: look for the file. */
                for (int k = 0; k < 2 && t[i].state == VT_T_SENT; k++) {
                    unsigned long seq = vt_latest_seq(t[i].dirs[k], t[i].pid);
                    if (seq > t[i].before[k] && vt_dump_path(t[i].path, sizeof t[i].path, t[i].dirs[k], t[i].pid, seq) == 0)
                        t[i].state = VT_T_DONE;
                }
                /* Gone since it was signalled: no answer will come, none is waited for (after a last
                 * look at the replies: it may have answered just before it ended). */
                if (t[i].state == VT_T_SENT && kill((pid_t)t[i].pid, 0) != 0 && errno == ESRCH) {
                    vt_read_replies(p[0], t, npids, replies, &rlen, sizeof replies);
                    if (t[i].state == VT_T_SENT)
                        vt_fail_target(&t[i], "ended before its dump was written");
                }
            }
            open += t[i].state == VT_T_WAIT || t[i].state == VT_T_SENT;
        }
        if (!open || vt_mono() - start >= timeout)
            break;
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        poll(&pf, 1, 20);
    }
    int failed = 0;
    for (size_t i = 0; i < npids; i++) {
        paths[i][0] = 0;
        if (t[i].state == VT_T_DONE) {
            snprintf(paths[i], VT_DUMP_PATH, "%s", t[i].path);
            continue;
        }
        failed++;
        if (t[i].state == VT_T_WAIT && !quiet_waiting)
            vt_fail_target(&t[i], "%s; waited %gs, not signalled", t[i].waiting, timeout);
        else if (t[i].state == VT_T_SENT)
            vt_fail_target(&t[i], "no dump within %gs. It was signalled (%s); a dump of many allocations can take "
                                  "longer (--timeout), the process may be stopped, or the program took the signal's "
                                  "handler over after vramtrace installed it (set VRAMTRACE_SIGNAL to another signal)",
                           timeout, strsignal(t[i].signo));
    }
    close(p[0]);
    close(p[1]);
    free(t);
    return failed;
}

int vt_cmd_dump(int argc, char **argv)
{
    static long pids[VT_DUMP_MAX];
    size_t npids = 0, without = 0;
    double timeout = 30;
    const char *dir_opt = NULL;
    for (int i = 1; i < argc; i++) {
        char *end;
        long pid;
        if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
            timeout = strtod(argv[++i], &end);
            if (*end || !(timeout > 0 && timeout <= 86400))
                return vt_usage_error("dump", "--timeout wants a number of seconds from 0 to 86400, not '%s'", argv[i]);
        } else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir_opt = argv[++i];
        } else if (!strcmp(argv[i], "--children") && i + 1 < argc) {
            if ((pid = vt_parse_pid(argv[++i])) < 0)
                return vt_usage_error("dump", "--children wants a process id (1 to 2147483647), not '%s'", argv[i]);
            size_t had = npids;
            npids = vt_descendants(pid, pids, npids, VT_DUMP_MAX, &without);
            if (npids == had) {
                fprintf(stderr, "vramtrace dump: no process under %ld has libvramtrace.so loaded\n", pid);
                return 1;
            }
        } else if (argv[i][0] != '-' || (argv[i][1] >= '0' && argv[i][1] <= '9')) {
            if ((pid = vt_parse_pid(argv[i])) < 0)
                return vt_usage_error("dump", "'%s' is not a process id (1 to 2147483647): nothing was signalled", argv[i]);
            if (npids == VT_DUMP_MAX)
                return vt_usage_error("dump", "more than %d processes", VT_DUMP_MAX);
            pids[npids++] = pid;
        } else {
            return vt_usage_error("dump", "unexpected argument '%s' (usage: vramtrace dump PID... | --children PID "
                                          "[--dir D] [--timeout S])", argv[i]);
        }
    }
    if (!npids)
        return vt_usage_error("dump", "no process id given");
    if (without)
        fprintf(stderr, "vramtrace dump: %zu process%s under the launcher without libvramtrace.so left out\n", without,
                without == 1 ? "" : "es");
    char (*paths)[VT_DUMP_PATH] = calloc(npids, sizeof *paths);
    int failed = paths ? vt_dump_request(pids, npids, dir_opt, timeout, 0, paths) : -1;
    for (size_t i = 0; failed >= 0 && i < npids; i++)
        if (paths[i][0])
            printf("%s\n", paths[i]);
    if (failed < 0)
        fprintf(stderr, "vramtrace dump: %s\n", paths ? strerror(errno) : "out of memory");
    free(paths);
    return failed != 0;
}
