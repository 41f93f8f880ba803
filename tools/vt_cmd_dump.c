/* vramtrace dump PID... | --children PID: asks live processes for a dump each and waits for the
 * complete files. Where a dump goes and which signal asks for it are read from each process's own
 * environment, so the answer is right however the process was started. All are signalled first and
 * waited for together, so the dumps of a job's ranks are as close in time as they can be. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vt_cmd.h"
#include "vt_signame.h"

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

static int vt_has_library(long pid)
{
    char path[64], line[PATH_MAX + 128];
    snprintf(path, sizeof path, "/proc/%ld/maps", pid);
    FILE *f = fopen(path, "r");
    int found = 0;
    if (!f)
        return -1;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, "/libvramtrace.so") != NULL;
    fclose(f);
    return found;
}

/* The newest complete dump of pid in dir (highest sequence number), 0 when none. */
static unsigned long vt_latest_seq(const char *dir, long pid)
{
    DIR *d = opendir(dir);
    unsigned long best = 0;
    if (!d)
        return 0;
    char prefix[64];
    int pl = snprintf(prefix, sizeof prefix, "vramtrace.%ld.", pid);
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, prefix, (size_t)pl))
            continue;
        unsigned long seq = strtoul(e->d_name + pl, &end, 10);
        if (!strcmp(end, ".dump") && seq > best)
            best = seq;
    }
    closedir(d);
    return best;
}

/* One process to dump. */
struct vt_target {
    long pid;
    char dir[PATH_MAX];
    int signo;
    unsigned long before, seq; /* the newest dump before we asked; the one that answered */
    int done;                  /* 1: its dump is there; -1: failed (said) */
};

/* Where pid's dumps go and how to ask for one; 0, or -1 after saying why. */
static int vt_target_prepare(struct vt_target *t, const char *dir_opt)
{
    char sig[64], cwd_link[64];
    long pid = t->pid;
    if (kill((pid_t)pid, 0) != 0) {
        fprintf(stderr, "vramtrace dump: process %ld: %s\n", pid, strerror(errno));
        return -1;
    }
    if (vt_has_library(pid) == 0) {
        fprintf(stderr, "vramtrace dump: libvramtrace.so is not loaded in process %ld (start it with vramtrace run)\n", pid);
        return -1;
    }
    if (dir_opt) {
        snprintf(t->dir, sizeof t->dir, "%s", dir_opt);
    } else if (vt_proc_env(pid, "VRAMTRACE_DIR", t->dir, sizeof t->dir) != 0 || !t->dir[0]) {
        /* The library's default: the process's working directory. */
        snprintf(cwd_link, sizeof cwd_link, "/proc/%ld/cwd", pid);
        ssize_t n = readlink(cwd_link, t->dir, sizeof t->dir - 1);
        t->dir[n > 0 ? n : 0] = 0;
        if (n <= 0 || access(t->dir, W_OK) != 0)
            strcpy(t->dir, "/tmp");
    }
    int signo = vt_proc_env(pid, "VRAMTRACE_SIGNAL", sig, sizeof sig) == 0 && sig[0] ? vt_signal_parse(sig) : SIGUSR1;
    if (signo < 0)
        signo = SIGUSR1; /* the library falls back to USR1 for a value it cannot use */
    if (!signo) {
        fprintf(stderr, "vramtrace dump: process %ld runs with VRAMTRACE_SIGNAL=none: it cannot be asked for a dump\n", pid);
        return -1;
    }
    t->signo = signo;
    t->before = vt_latest_seq(t->dir, pid);
    return 0;
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

#define VT_DUMP_MAX 1024

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
            if (*end || timeout <= 0) {
                fprintf(stderr, "vramtrace dump: --timeout wants a positive number of seconds\n");
                return VT_EXIT_USAGE;
            }
        } else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir_opt = argv[++i];
        } else if (!strcmp(argv[i], "--children") && i + 1 < argc) {
            pid = strtol(argv[++i], &end, 10);
            if (pid <= 0 || *end) {
                fprintf(stderr, "vramtrace dump: --children wants a PID, not '%s'\n", argv[i]);
                return VT_EXIT_USAGE;
            }
            size_t had = npids;
            npids = vt_descendants(pid, pids, npids, VT_DUMP_MAX, &without);
            if (npids == had) {
                fprintf(stderr, "vramtrace dump: no process under %ld has libvramtrace.so loaded\n", pid);
                return 1;
            }
        } else if ((pid = strtol(argv[i], &end, 10)) > 0 && !*end && npids < VT_DUMP_MAX) {
            pids[npids++] = pid;
        } else {
            fprintf(stderr, "vramtrace dump: unexpected argument '%s' (usage: vramtrace dump PID... | --children PID "
                            "[--dir D] [--timeout S])\n", argv[i]);
            return VT_EXIT_USAGE;
        }
    }
    if (!npids) {
        fprintf(stderr, "vramtrace dump: no PID given\n");
        return VT_EXIT_USAGE;
    }
    if (without)
        fprintf(stderr, "vramtrace dump: %zu process%s under the launcher without libvramtrace.so left out\n", without,
                without == 1 ? "" : "es");
    struct vt_target *t = calloc(npids, sizeof *t);
    if (!t) {
        fprintf(stderr, "vramtrace dump: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < npids; i++) {
        t[i].pid = pids[i];
        if (vt_target_prepare(&t[i], dir_opt) != 0)
            t[i].done = -1;
    }
    for (size_t i = 0; i < npids; i++)
        if (!t[i].done && kill((pid_t)t[i].pid, t[i].signo) != 0) {
            fprintf(stderr, "vramtrace dump: cannot signal process %ld: %s\n", t[i].pid, strerror(errno));
            t[i].done = -1;
        }
    struct timespec nap = {0, 20 * 1000 * 1000};
    size_t waiting = 0;
    for (size_t i = 0; i < npids; i++)
        waiting += !t[i].done;
    for (double waited = 0; waiting && waited < timeout; waited += 0.02) {
        for (size_t i = 0; i < npids; i++)
            if (!t[i].done && (t[i].seq = vt_latest_seq(t[i].dir, t[i].pid)) > t[i].before) {
                t[i].done = 1;
                waiting--;
            }
        if (waiting)
            nanosleep(&nap, NULL);
    }
    int failed = 0;
    for (size_t i = 0; i < npids; i++) {
        if (t[i].done == 1) {
            printf("%s/vramtrace.%ld.%lu.dump\n", t[i].dir, t[i].pid, t[i].seq);
            continue;
        }
        failed = 1;
        if (!t[i].done)
            fprintf(stderr,
                    "vramtrace dump: no new dump from process %ld in %s after %gs. Possible reasons: the program "
                    "replaced the dump signal's handler (set VRAMTRACE_SIGNAL to another signal), the directory is "
                    "not writable (see the program's stderr for a 'vramtrace:' line), or the process is stopped.\n",
                    t[i].pid, t[i].dir, timeout);
    }
    free(t);
    return failed;
}
