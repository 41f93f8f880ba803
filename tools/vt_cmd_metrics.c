/* vramtrace metrics --textfile FILE PID: keeps a Prometheus textfile of a live process up to date, for
 * node_exporter's textfile collector (or anything that reads the text exposition format). Every
 * interval it asks the process for a dump in memory over its dump socket (as `vramtrace dump` does, but
 * no file is written: it comes as a descriptor), reads it with the reports' own accounting, writes the
 * metrics beside FILE and renames them into place (a scrape never sees half a file). FILE must not exist
 * at start (it is created, never replaced). When the process ends, or this command is stopped, FILE is
 * removed (if it is still ours), so no stale figures are scraped. It is for a
 * process started without VRAMTRACE_METRICS, with which the library keeps such a file itself
 * (lib/roof/vt_metrics_file.c, the same renderer). */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vt_cmd.h"
#include "vt_verb.h"
#include "vt_dumpfile.h"
#include "vt_metrics.h"

static volatile sig_atomic_t vt_stop;

static void vt_on_stop(int sig)
{
    (void)sig;
    vt_stop = 1;
}

/* The metrics of the dump in fd into o's file (vt_metrics_put). */
static int vt_write_metrics(int fd, struct vt_metrics_out *o, int top)
{
    struct vt_dumpfile d;
    char why[4400];
    FILE *in = fdopen(fd, "r");
    if (!in) {
        close(fd);
        fprintf(stderr, "vramtrace metrics: %s\n", strerror(errno));
        return -1;
    }
    int r = vt_dumpfile_parse(in, "the process's dump", &d, why, sizeof why);
    fclose(in);
    if (r < 0) {
        fprintf(stderr, "vramtrace metrics: %s\n", why);
        return -1;
    }
    /* Named as report --prometheus names them: one label for one site on the command's routes. */
    r = vt_metrics_put(&d, o, top, 0, why, sizeof why);
    if (r < 0)
        fprintf(stderr, "vramtrace metrics: %s\n", why);
    vt_dumpfile_free(&d);
    return r;
}

static double vt_mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int vt_metrics_loop(long pid, const char *file, double interval, int top, double timeout, int once)
{
    struct vt_metrics_out out;
    char why[4400];
    if (vt_metrics_claim(&out, file, why, sizeof why) < 0) {
        fprintf(stderr, "vramtrace metrics: %s\n", why);
        return 1;
    }
    struct sigaction sa = {.sa_handler = vt_on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    unsigned long long born = vt_proc_start(pid);
    int failures = 0, written = 0;
    double next = vt_mono_s();
    while (!vt_stop && born && vt_proc_start(pid) == born) {
        struct vt_dump_got got;
        next += interval;
        int r = vt_dump_request(&pid, 1, 1, timeout, !written, &got);
        if (r == 0) {
            if (vt_write_metrics(got.fd, &out, top) == 0)
                written++;
            else
                failures++;
        } else {
            failures++;
            if (r < 0)
                fprintf(stderr, "vramtrace metrics: %s\n", strerror(errno));
        }
        if (once)
            break;
        /* The next one an interval after this one began (a dump's own time does not stretch the period; a
         * dump that took longer than the interval is followed at once), looking every 0.2 s whether the
         * process is still there. */
        double now = vt_mono_s();
        if (next < now)
            next = now;
        while (!vt_stop && (now = vt_mono_s()) < next) {
            double left = next - now < 0.2 ? next - now : 0.2;
            struct timespec ts = {0, (long)(left * 1e9)};
            nanosleep(&ts, NULL);
            if (vt_proc_start(pid) != born)
                break;
        }
    }
    if (once && written)
        return 0; /* --once: the file stays, for whoever asked for it */
    vt_metrics_release(&out); /* the process is gone, or we are: no stale figures */
    if (once)
        return 1;
    return vt_stop || written || !failures ? 0 : 1;
}

struct vt_metrics_args {
    const char *file;
    double interval, timeout;
    long top, pid;
    int once;
};

static int vt_metrics_word(void *args, int argc, char **argv, int *i)
{
    (void)argc;
    struct vt_metrics_args *a = args;
    char *end;
    if (argv[*i][0] != '-' && !a->pid) {
        a->pid = strtol(argv[*i], &end, 10);
        if (*end || a->pid <= 0 || a->pid > 2147483647)
            return vt_usage_error("metrics", "'%s' is not a process id (1 to 2147483647)", argv[*i]);
        return VT_WORD_TAKEN;
    }
    return vt_usage_error("metrics", "unexpected argument '%s' (usage: vramtrace metrics --textfile FILE "
                                     "[--interval S] [--top N] [--once] PID)", argv[*i]);
}

static int vt_metrics_run(void *args, char **operands, int n)
{
    (void)operands;
    (void)n;
    const struct vt_metrics_args *a = args;
    if (!a->file)
        return vt_usage_error("metrics", "no --textfile given");
    if (!a->pid)
        return vt_usage_error("metrics", "no process id given");
    if (!vt_proc_start(a->pid)) {
        fprintf(stderr, "vramtrace metrics: no process %ld\n", a->pid);
        return 1;
    }
    return vt_metrics_loop(a->pid, a->file, a->interval, (int)a->top, a->timeout, a->once);
}

#define VT_M(field) offsetof(struct vt_metrics_args, field)
static const struct vt_metrics_args vt_metrics_dflt = {.interval = 30, .timeout = 30, .top = 10};
const struct vt_verb vt_verb_metrics = {
    "metrics", "metrics --textfile FILE [OPTIONS] PID",
    "Keeps FILE, Prometheus metrics of a live process, up to date for node_exporter's textfile collector;\n"
    "FILE must not exist yet (it is created, never replaced); removed when the process ends.",
    NULL, sizeof(struct vt_metrics_args), &vt_metrics_dflt, vt_metrics_word, vt_metrics_run, 0, 0,
    {{"--textfile", "FILE", "the file to keep", VT_OPT_TEXT, VT_M(file), 0, 0, 0, NULL, NULL, NULL},
     {"--interval", "S", "seconds between two files (default 30)", VT_OPT_SECONDS, VT_M(interval), 1, 86400, 0,
      "--interval wants seconds from 1 to 86400, not '%s'", NULL, NULL},
     {"--top", "N", "call sites given as series (default 10)", VT_OPT_LONG, VT_M(top), 1, 1000, 0,
      "--top wants a number from 1 to 1000", NULL, NULL},
     {"--once", NULL, "write the file once and stop", VT_OPT_FLAG, VT_M(once), 0, 0, 0, NULL, NULL, NULL},
     {"--timeout", "S", "seconds to wait for each dump (default 30)", VT_OPT_SECONDS, VT_M(timeout), 0, 86400, 1,
      "--timeout wants seconds from 0 to 86400, not '%s'", NULL, NULL}}};
