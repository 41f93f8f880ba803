/* vramtrace dump PID... | --children PID: asks live processes for a dump each and waits for it.
 *
 * The request goes over the process's dump socket (the protocol, and why each side can trust the
 * other: common/vt_ctl.h), never by a signal: a program may have taken SIGUSR1 over for its own use
 * (gunicorn and uwsgi workers do), and its handler must never be run by us. The socket is found among
 * the process's own open files, the answer accepted only from that process (SO_PEERCRED), and the dump
 * taken from the descriptor it sends: no path is opened, no directory searched, nothing unlinked.
 * A PID is a positive number that fits pid_t; libvramtrace.so must be in its memory map (a map that
 * cannot be read is a refusal, never a guess). While a process is still starting (vramtrace run before
 * its exec, the library loading, no CUDA call yet) it is waited for, within the timeout, so
 * `vramtrace run ... &` followed at once by `vramtrace dump $!` just works. A process in another
 * network namespace (a container) is asked from inside it, which takes root. All targets are handled
 * together, so the dumps of a job's ranks are as close in time as they can be. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vt_cmd.h"
#include "vt_ctl.h"
#include "vt_paths.h"
#include "vt_settings.h"
#include "vt_text.h"
#include "vt_verb.h"

#define VT_DUMP_MAX 1024
/* A process younger than this may still be loading its libraries. */
#define VT_STARTUP_S 2.0

enum vt_state { VT_T_WAIT, VT_T_SENT, VT_T_DONE, VT_T_FAILED };

/* One process to dump. */
struct vt_target {
    long pid;
    enum vt_state state;
    const char *waiting;  /* while waiting: what is said if the time runs out */
    double no_socket_since; /* its dumper runs but no socket was found, since then (0: not so) */
    int sock;             /* the connection, while the request is out */
    int peek;             /* a dump in memory was asked for */
    double sent_at;       /* when the request went out */
    char doing[600];      /* what its dumper said it was doing ("busy"), escaped; "" for nothing */
    unsigned peer_uid;    /* who answers on it */
    struct vt_dump_got *got;
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

/* The first child of pid (a launcher: `sh -c`, a subshell's $!) that has the library loaded; 0 for none. */
static long vt_child_with_library(long pid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    long found = 0;
    while (!found && (e = readdir(d))) {
        char *end;
        long child = strtol(e->d_name, &end, 10);
        if (*end || child <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", child);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        /* "pid (comm) state ppid ...": comm may hold spaces and parentheses, so after the last ')'. */
        const char *rp = strrchr(buf, ')');
        long ppid = 0;
        if (rp && sscanf(rp + 1, " %*c %ld", &ppid) == 1 && ppid == pid && vt_has_library(child) == 1)
            found = child;
    }
    closedir(d);
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

static double vt_mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
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
    if (t->sock >= 0)
        close(t->sock);
    t->sock = -1;
    t->state = VT_T_FAILED;
}

/* The socket inode a /proc/PID/fd link names ("socket:[N]"), 0 for anything else. */
static unsigned long vt_socket_inode(const char *dir, const char *entry)
{
    char path[PATH_MAX], target[64];
    snprintf(path, sizeof path, "%s/%s", dir, entry);
    ssize_t n = readlink(path, target, sizeof target - 1);
    unsigned long ino = 0;
    if (n <= 0)
        return 0;
    target[n] = 0;
    return sscanf(target, "socket:[%lu]", &ino) == 1 ? ino : 0;
}

/* pid's listening dump socket, found among its own open files (a name someone else bound is never
 * among them): 1 with its abstract name (no leading NUL), 0 when it has none, -1 when its files cannot
 * be read. */
static int vt_find_socket(long pid, char *name, size_t len)
{
    char dir[64], path[64];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", pid);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t n = 0, cap = 64;
    unsigned long *inos = malloc(cap * sizeof *inos);
    struct dirent *e;
    while (inos && (e = readdir(d))) {
        unsigned long ino = e->d_name[0] >= '0' && e->d_name[0] <= '9' ? vt_socket_inode(dir, e->d_name) : 0;
        if (!ino)
            continue;
        if (n == cap) {
            unsigned long *grown = realloc(inos, 2 * cap * sizeof *inos);
            if (!grown)
                break;
            inos = grown;
            cap *= 2;
        }
        inos[n++] = ino;
    }
    closedir(d);
    snprintf(path, sizeof path, "/proc/%ld/net/unix", pid);
    FILE *f = inos && n ? fopen(path, "re") : NULL;
    int found = 0;
    char line[512];
    /* Num RefCount Protocol Flags Type St Inode Path; a listening socket has __SO_ACCEPTCON (0x10000). */
    while (f && !found && fgets(line, sizeof line, f)) {
        unsigned flags;
        unsigned long ino;
        char sockname[256];
        if (sscanf(line, "%*s %*s %*s %x %*s %*s %lu %255s", &flags, &ino, sockname) != 3 || !(flags & 0x10000) ||
            strncmp(sockname, "@" VT_CTL_PREFIX, 1 + strlen(VT_CTL_PREFIX)) || strlen(sockname + 1) >= len)
            continue;
        for (size_t i = 0; i < n && !found; i++)
            if (inos[i] == ino) {
                strcpy(name, sockname + 1);
                found = 1;
            }
    }
    if (f)
        fclose(f);
    free(inos);
    return found;
}

/* A socket in pid's network namespace (entered for the call when it is not ours: root only). */
static int vt_socket_in(long pid, char *why, size_t len)
{
    char path[64];
    struct stat mine, its;
    snprintf(path, sizeof path, "/proc/%ld/ns/net", pid);
    if (stat("/proc/self/ns/net", &mine) != 0 || stat(path, &its) != 0 ||
        (mine.st_dev == its.st_dev && mine.st_ino == its.st_ino))
        return socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int back = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), there = open(path, O_RDONLY | O_CLOEXEC), s = -1;
    if (back < 0 || there < 0 || setns(there, CLONE_NEWNET) != 0) {
        snprintf(why, len, "it runs in another network namespace (a container), which only root can enter (%s): run "
                 "vramtrace dump inside its container, or as root", strerror(errno));
    } else {
        /* A socket belongs to the namespace it was made in: make it there, then come back. */
        s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (setns(back, CLONE_NEWNET) != 0) {
            fprintf(stderr, "vramtrace dump: cannot return to its own network namespace: %s\n", strerror(errno));
            exit(1);
        }
        if (s < 0)
            snprintf(why, len, "no socket: %s", strerror(errno));
    }
    if (back >= 0)
        close(back);
    if (there >= 0)
        close(there);
    return s;
}

/* Connects to pid's dump socket and sends the request: 0, 1 to try again later (its queue is full), or -1
 * with why. The peer must be pid itself. */
static int vt_ask(struct vt_target *t, const char *name, int peek, char *why, size_t len)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    if (n + 1 >= sizeof a.sun_path) {
        snprintf(why, len, "its socket's name is too long");
        return -1;
    }
    memcpy(a.sun_path + 1, name, n);
    int s = vt_socket_in(t->pid, why, len);
    if (s < 0)
        return -1;
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (connect(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0) {
        int again = errno == EAGAIN;
        snprintf(why, len, "cannot connect to its dump socket: %s", strerror(errno));
        close(s);
        return again ? 1 : -1;
    }
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || (long)cr.pid != t->pid) {
        snprintf(why, len, "its dump socket is held by another process (pid %ld): not trusted, not asked",
                 (long)cr.pid);
        close(s);
        return -1;
    }
    char req[16];
    snprintf(req, sizeof req, "%s\n", peek ? VT_CTL_PEEK : VT_CTL_DUMP);
    if (vt_ctl_send(s, req, -1) != 0) {
        snprintf(why, len, "cannot send the request: %s", strerror(errno));
        close(s);
        return -1;
    }
    t->sock = s;
    t->peer_uid = cr.uid;
    return 0;
}

/* Whether the dump signal would reach vramtrace's handler, as far as /proc/PID/status tells: for the
 * advice given when the socket cannot be used. */
static const char *vt_signal_hint(long pid)
{
    char v[64];
    int sig = SIGUSR1;
    if (vt_proc_env(pid, "VRAMTRACE_SIGNAL", v, sizeof v) == 0 && v[0]) {
        double d;
        char why[256];
        if (vt_setting_parse(vt_setting_find("VRAMTRACE_SIGNAL"), v, &d, why, sizeof why) == 0)
            sig = (int)d;
    }
    if (!sig)
        return "it runs with VRAMTRACE_SIGNAL=none, so no signal dumps it either";
    static char hint[200];
    int caught = vt_sigmask_has(pid, "SigCgt", sig);
    snprintf(hint, sizeof hint, "kill -%d %ld %s", sig, pid,
             caught == 1 ? "asks through the signal instead, if the program leaves it to vramtrace (its log says when "
                           "it does not)"
                         : "would not reach vramtrace (the signal is not caught): do not send it");
    return hint;
}

/* Moves a waiting target on: refused (said), still waiting, or asked. */
static void vt_target_step(struct vt_target *t, int peek)
{
    long pid = t->pid;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
        vt_fail_target(t, "no such process");
        return;
    }
    int lib = vt_has_library(pid);
    if (lib < 0) {
        vt_fail_target(t, "cannot read /proc/%ld/maps (%s), so whether libvramtrace.so is loaded cannot be told: not "
                          "asked (another user's process, a setuid or non-dumpable one: run vramtrace dump as "
                          "its user, or as root)", pid, strerror(errno));
        return;
    }
    if (!lib) {
        if (vt_is_launcher(pid) || vt_age(pid) < VT_STARTUP_S) {
            t->waiting = "libvramtrace.so is not loaded (it was waited for while the process started)";
            return;
        }
        long child = vt_child_with_library(pid);
        if (child)
            vt_fail_target(t, "libvramtrace.so is not loaded in it, but in its child %ld (it launched the program: "
                              "a shell, a subshell's $!): vramtrace dump %ld", child, child);
        else
            vt_fail_target(t, "libvramtrace.so is not loaded (start the program with vramtrace run, or with "
                              "LD_PRELOAD=libvramtrace.so): not asked");
        return;
    }
    char name[128], why[512];
    int found = vt_find_socket(pid, name, sizeof name);
    if (found < 0) {
        vt_fail_target(t, "cannot read its open files (%s): run vramtrace dump as its user, or as root",
                       strerror(errno));
        return;
    }
    if (!found) {
        if (!vt_has_dumper(pid)) {
            t->waiting = "it has made no CUDA call yet: libvramtrace.so is loaded, but listens for requests only from "
                         "the first CUDA call on (there is nothing to dump before)";
            t->no_socket_since = 0;
            return;
        }
        /* The socket is bound right after the dumper thread starts: a moment, never a second. */
        if (!t->no_socket_since)
            t->no_socket_since = vt_mono();
        else if (vt_mono() - t->no_socket_since >= 1.0)
            vt_fail_target(t, "its libvramtrace.so has no dump socket (it is older than this command, or could not "
                              "open one: the program's stderr says why); %s", vt_signal_hint(pid));
        t->waiting = "its libvramtrace.so has no dump socket yet";
        return;
    }
    t->peek = peek;
    t->sent_at = vt_mono();
    int r = vt_ask(t, name, peek, why, sizeof why);
    if (r < 0)
        vt_fail_target(t, "%s", why);
    else if (r == 0)
        t->state = VT_T_SENT;
    else
        t->waiting = "its dump socket's queue stayed full";
}

/* The answer on t's connection, when one came: "ok PATH" with the dump's descriptor, or "error WHY". */
static void vt_take_answer(struct vt_target *t)
{
    char line[VT_CTL_LINE], shown[4 * 512];
    int fd = -1;
    if (vt_ctl_recv(t->sock, line, sizeof line, &fd, 1) != 0) {
        if (errno != ETIMEDOUT)
            vt_fail_target(t, "its answer could not be read (%s): it may be exiting",
                           errno == ECONNRESET ? "it closed the connection" : strerror(errno));
        return;
    }
    size_t bl = strlen(VT_CTL_BUSY " ");
    if (!strncmp(line, VT_CTL_BUSY " ", bl) && fd < 0) {
        /* Its dumper is at work already: the answer comes later; what it said is kept for a timeout. */
        vt_text_escape(t->doing, sizeof t->doing, line + bl, strlen(line + bl) < 140 ? strlen(line + bl) : 140, 0);
        return;
    }
    struct stat st;
    size_t okl = strlen(VT_CTL_OK " ");
    const char *path = line + okl, *base = strrchr(path, '/');
    long p;
    unsigned long seq;
    /* The name is only ever shown, never opened; still, it must be one the library gives. */
    int named = !strncmp(line, VT_CTL_OK " ", okl) &&
                (t->peek ? !strcmp(path, "-") : base && vt_dump_name_parse(base + 1, &p, &seq) == 0);
    if (named && fd >= 0 && vt_text_is_escaped(line + okl) &&
        strlen(line + okl) < sizeof t->got->path && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_uid == t->peer_uid && lseek(fd, 0, SEEK_SET) == 0) {
        strcpy(t->got->path, line + okl);
        t->got->fd = fd;
        close(t->sock);
        t->sock = -1;
        t->state = VT_T_DONE;
        return;
    }
    if (fd >= 0)
        close(fd);
    size_t el = strlen(VT_CTL_ERROR " ");
    if (!strncmp(line, VT_CTL_ERROR " ", el)) {
        /* The process's words, shown safely: it may not be ours to trust. */
        vt_text_escape(shown, sizeof shown, line + el, strlen(line + el) < 500 ? strlen(line + el) : 500, 0);
        vt_fail_target(t, "no dump: %s", shown);
    } else {
        vt_fail_target(t, "its answer is not one vramtrace gives (no regular file of its user came with it): not "
                          "trusted");
    }
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

int vt_dump_request(const long *pids, size_t npids, int peek, double timeout, int quiet_waiting, struct vt_dump_got *got)
{
    struct vt_target *t = calloc(npids ? npids : 1, sizeof *t);
    struct pollfd *pf = calloc(npids ? npids : 1, sizeof *pf);
    if (!t || !pf) {
        free(t);
        free(pf);
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < npids; i++) {
        t[i] = (struct vt_target){.pid = pids[i], .sock = -1, .got = &got[i]};
        got[i].path[0] = 0;
        got[i].fd = -1;
    }
    double start = vt_mono();
    for (;;) {
        size_t open = 0, npf = 0;
        for (size_t i = 0; i < npids; i++) {
            if (t[i].state == VT_T_WAIT)
                vt_target_step(&t[i], peek);
            if (t[i].state == VT_T_SENT)
                vt_take_answer(&t[i]);
            /* A stopped process (SIGSTOP, a debugger) cannot answer: said now, not at the timeout. */
            char state[64];
            if (t[i].state == VT_T_SENT && vt_mono() - t[i].sent_at > 0.5 &&
                vt_status_field(t[i].pid, "State", state, sizeof state) == 0 && (state[0] == 'T' || state[0] == 't'))
                vt_fail_target(&t[i], "it is stopped (%s: SIGSTOP, Ctrl-Z or a debugger): it cannot answer until it "
                                      "is continued (kill -CONT %ld)", state, t[i].pid);
            if (t[i].state == VT_T_SENT)
                pf[npf++] = (struct pollfd){.fd = t[i].sock, .events = POLLIN};
            open += t[i].state == VT_T_WAIT || t[i].state == VT_T_SENT;
        }
        if (!open || vt_mono() - start >= timeout)
            break;
        poll(pf, npf, 20);
    }
    int failed = 0;
    for (size_t i = 0; i < npids; i++) {
        if (t[i].state == VT_T_DONE)
            continue;
        failed++;
        if (t[i].state == VT_T_WAIT && !quiet_waiting)
            vt_fail_target(&t[i], "%s; waited %gs, not asked", t[i].waiting, timeout);
        else if (t[i].state == VT_T_SENT && t[i].doing[0])
            vt_fail_target(&t[i], "no dump within %gs. It was asked; its dumper was busy then (%s): a longer --timeout "
                                  "may do", timeout, t[i].doing);
        else if (t[i].state == VT_T_SENT)
            vt_fail_target(&t[i], "no dump within %gs. It was asked, and its dumper has not answered: a dump of many "
                                  "allocations can take longer (--timeout)", timeout);
        else if (t[i].sock >= 0)
            close(t[i].sock);
    }
    free(t);
    free(pf);
    return failed;
}

/* The processes to ask, in the order given (--children adds the ones under a launcher). */
struct vt_dump_args {
    long pids[VT_DUMP_MAX];
    size_t npids, without;
    double timeout;
};

static int vt_dump_children(void *args, const char *value)
{
    struct vt_dump_args *a = args;
    long pid = vt_parse_pid(value);
    if (pid < 0)
        return vt_usage_error("dump", "--children wants a process id (1 to 2147483647), not '%s'", value);
    size_t had = a->npids;
    a->npids = vt_descendants(pid, a->pids, a->npids, VT_DUMP_MAX, &a->without);
    if (a->npids == had) {
        fprintf(stderr, "vramtrace dump: no process under %ld has libvramtrace.so loaded\n", pid);
        return 1;
    }
    return 0;
}

static int vt_dump_word(void *args, int argc, char **argv, int *i)
{
    (void)argc;
    struct vt_dump_args *a = args;
    const char *w = argv[*i];
    if (w[0] != '-' || (w[1] >= '0' && w[1] <= '9')) {
        long pid = vt_parse_pid(w);
        if (pid < 0)
            return vt_usage_error("dump", "'%s' is not a process id (1 to 2147483647): nothing was signalled", w);
        if (a->npids == VT_DUMP_MAX)
            return vt_usage_error("dump", "more than %d processes", VT_DUMP_MAX);
        a->pids[a->npids++] = pid;
        return VT_WORD_TAKEN;
    }
    return vt_usage_error("dump", "unexpected argument '%s' (usage: vramtrace dump PID... | --children PID "
                                  "[--timeout S])", w);
}

static int vt_dump_run(void *args, char **operands, int n)
{
    (void)operands;
    (void)n;
    struct vt_dump_args *a = args;
    const long *pids = a->pids;
    size_t npids = a->npids, without = a->without;
    double timeout = a->timeout;
    if (!npids)
        return vt_usage_error("dump", "no process id given");
    if (without)
        fprintf(stderr, "vramtrace dump: %zu process%s under the launcher without libvramtrace.so left out\n", without,
                without == 1 ? "" : "es");
    struct vt_dump_got *got = calloc(npids, sizeof *got);
    int failed = got ? vt_dump_request(pids, npids, 0, timeout, 0, got) : -1;
    for (size_t i = 0; failed >= 0 && i < npids; i++)
        if (got[i].fd >= 0) {
            printf("%s\n", got[i].path);
            close(got[i].fd);
        }
    if (failed < 0)
        fprintf(stderr, "vramtrace dump: %s\n", got ? strerror(errno) : "out of memory");
    free(got);
    return failed != 0;
}

static const struct vt_dump_args vt_dump_dflt = {.timeout = 30};
const struct vt_verb vt_verb_dump = {
    "dump", "dump PID... | --children PID [--timeout S]",
    "Asks live processes for a dump each, over the library's own socket (never by a signal), and prints the\n"
    "dumps' paths, one a line, once each is complete.",
    NULL, sizeof(struct vt_dump_args), &vt_dump_dflt, vt_dump_word, vt_dump_run, 0, 0,
    {{"--children", "PID", "every process under PID that has the library loaded", VT_OPT_CALL, 0, 0, 0, 0, NULL,
      vt_dump_children, NULL},
     {"--timeout", "S", "seconds to wait for all the dumps (default 30)", VT_OPT_SECONDS,
      offsetof(struct vt_dump_args, timeout), 0, 86400, 1, "--timeout wants a number of seconds from 0 to 86400, not '%s'",
      NULL, NULL}}};
