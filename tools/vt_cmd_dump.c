/* vramtrace dump PID: asks a live process for a dump and waits for the complete file. Where the dump
 * goes and which signal asks for it are read from the process's own environment, so the answer is
 * right however the process was started. */
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

int vt_cmd_dump(int argc, char **argv)
{
    long pid = 0;
    double timeout = 30;
    const char *dir_opt = NULL;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
            timeout = strtod(argv[++i], &end);
            if (*end || timeout <= 0) {
                fprintf(stderr, "vramtrace dump: --timeout wants a positive number of seconds\n");
                return VT_EXIT_USAGE;
            }
        } else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir_opt = argv[++i];
        } else if (!pid && (pid = strtol(argv[i], &end, 10)) > 0 && !*end) {
            continue;
        } else {
            fprintf(stderr, "vramtrace dump: unexpected argument '%s' (usage: vramtrace dump PID [--timeout S])\n", argv[i]);
            return VT_EXIT_USAGE;
        }
    }
    if (pid <= 0) {
        fprintf(stderr, "vramtrace dump: no PID given\n");
        return VT_EXIT_USAGE;
    }
    if (kill((pid_t)pid, 0) != 0) {
        fprintf(stderr, "vramtrace dump: process %ld: %s\n", pid, strerror(errno));
        return 1;
    }
    if (vt_has_library(pid) == 0) {
        fprintf(stderr, "vramtrace dump: libvramtrace.so is not loaded in process %ld (start it with vramtrace run)\n", pid);
        return 1;
    }
    char dir[PATH_MAX], sig[64], cwd_link[64];
    if (dir_opt) {
        snprintf(dir, sizeof dir, "%s", dir_opt);
    } else if (vt_proc_env(pid, "VRAMTRACE_DIR", dir, sizeof dir) != 0 || !dir[0]) {
        /* The library's default: the process's working directory. */
        snprintf(cwd_link, sizeof cwd_link, "/proc/%ld/cwd", pid);
        ssize_t n = readlink(cwd_link, dir, sizeof dir - 1);
        dir[n > 0 ? n : 0] = 0;
        if (n <= 0 || access(dir, W_OK) != 0)
            strcpy(dir, "/tmp");
    }
    int signo = vt_proc_env(pid, "VRAMTRACE_SIGNAL", sig, sizeof sig) == 0 && sig[0] ? vt_signal_parse(sig) : SIGUSR1;
    if (signo < 0)
        signo = SIGUSR1; /* the library falls back to USR1 for a value it cannot use */
    if (!signo) {
        fprintf(stderr, "vramtrace dump: process %ld runs with VRAMTRACE_SIGNAL=none: it cannot be asked for a dump\n", pid);
        return 1;
    }
    unsigned long before = vt_latest_seq(dir, pid);
    if (kill((pid_t)pid, signo) != 0) {
        fprintf(stderr, "vramtrace dump: cannot signal process %ld: %s\n", pid, strerror(errno));
        return 1;
    }
    struct timespec nap = {0, 20 * 1000 * 1000};
    for (double waited = 0; waited < timeout; waited += 0.02) {
        unsigned long now = vt_latest_seq(dir, pid);
        if (now > before) {
            printf("%s/vramtrace.%ld.%lu.dump\n", dir, pid, now);
            return 0;
        }
        nanosleep(&nap, NULL);
    }
    fprintf(stderr,
            "vramtrace dump: no new dump from process %ld in %s after %gs. Possible reasons: the program replaced "
            "the dump signal's handler (set VRAMTRACE_SIGNAL to another signal), the directory is not writable "
            "(see the program's stderr for a 'vramtrace:' line), or the process is stopped.\n",
            pid, dir, timeout);
    return 1;
}
