/* What every verb of the command shares: loading a dump with a one-line error (and how far the reading
 * is, for a large one on a terminal), usage errors, and when a process started. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vt_cmd.h"
#include "vt_dumpfile.h"
#include "vt_format.h"
#include "vt_model.h"

/* A dump this large (~500,000 allocations, half a second or more to read) says how far its reading is,
 * on a terminal only: never into a pipe or a file. */
#define VT_PROGRESS_BYTES (64u << 20)

struct vt_progress {
    const char *path;
    int shown; /* the last percentage shown; -1: none yet */
};

static void vt_progress_say(void *arg, uint64_t done, uint64_t size)
{
    struct vt_progress *p = arg;
    int pct = size ? (int)(100.0 * (double)done / (double)size) : 0;
    if (size < VT_PROGRESS_BYTES || pct == p->shown)
        return;
    p->shown = pct;
    fprintf(stderr, "\rvramtrace: reading %s: %d %% of %.0f MiB", p->path, pct, (double)size / (1 << 20));
}

int vt_load(const char *path, struct vt_dumpfile *d)
{
    char err[1024];
    struct vt_progress pr = {path, -1};
    int r = vt_dumpfile_read_progress(path, d, err, sizeof err, isatty(2) ? vt_progress_say : NULL, &pr);
    if (pr.shown >= 0)
        fputs("\r\033[K", stderr); /* the line taken away again */
    if (r == 0)
        return 0;
    fprintf(stderr, "vramtrace: %s\n", err);
    return -1;
}

int vt_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "vramtrace %s: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (vramtrace --help for usage)\n", stderr);
    return VT_EXIT_USAGE;
}

static void vt_self_cost_figures(const struct vt_self_cost *v, const char *when)
{
    uint64_t ours = v->hook_ns + v->threads_ns;
    printf("  %-13s ~%.3f s of the process's %.3f s of CPU%s", "vramtrace", (double)ours / 1e9, (double)v->process_ns / 1e9,
           when);
    if (v->process_ns)
        printf(" (~%.2f %%)", 100.0 * (double)ours / (double)v->process_ns);
    printf(": hooks ~%.3f s", (double)v->hook_ns / 1e9);
    if (v->calls)
        printf(" (%.0f ns a call, %llu calls", (double)v->hook_ns / (double)v->calls, (unsigned long long)v->calls);
    if (v->has_parts)
        printf("%sof that reading Python frames ~%.3f s, native frames ~%.3f s", v->calls ? "; " : " (",
               (double)v->py_ns / 1e9, (double)v->native_ns / 1e9);
    if (v->outliers)
        printf("%s%llu of %llu timed calls over %d us left out: the thread did not run all that time",
               v->calls || v->has_parts ? "; " : " (", (unsigned long long)v->outliers,
               (unsigned long long)(v->samples + v->outliers), VT_SELF_OUTLIER_US);
    if (v->calls || v->has_parts || v->outliers)
        putchar(')');
    printf(", its own threads %.3f s\n", (double)v->threads_ns / 1e9);
}

void vt_self_cost_text(const struct vt_self_cost *v, const char *when)
{
    if (!v->has)
        return;
    if (!v->samples && !v->outliers && v->calls) {
        /* No call was timed (one in VT_SELF_EVERY is: a thread's first calls are not): the hooks' time is
         * not known, and a share without it would read as the library costing nothing. */
        printf("  %-13s hooks not measured (no call of the %llu%s was timed: one in %d is), its own threads %.3f s "
               "of the process's %.3f s of CPU\n", "vramtrace", (unsigned long long)v->calls, when, VT_SELF_EVERY,
               (double)v->threads_ns / 1e9, (double)v->process_ns / 1e9);
    } else {
        vt_self_cost_figures(v, when);
    }
    if (v->fake_driver)
        printf("  %-13s (on the bundled fake CUDA driver, whose calls cost nothing: any share of the CPU looks large "
               "here; on a GPU the driver's own calls take most of it)\n", "");
}

void vt_self_cost_json(FILE *f, const struct vt_self_cost *v)
{
    if (!v->has) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"hook_ns\":%llu,\"threads_ns\":%llu,\"process_cpu_ns\":%llu,\"calls\":%llu,\"timed_calls\":%llu,"
            "\"timed_outliers\":%llu,",
            (unsigned long long)v->hook_ns, (unsigned long long)v->threads_ns, (unsigned long long)v->process_ns,
            (unsigned long long)v->calls, (unsigned long long)v->samples, (unsigned long long)v->outliers);
    if (v->has_parts)
        fprintf(f, "\"python_ns\":%llu,\"native_ns\":%llu}", (unsigned long long)v->py_ns,
                (unsigned long long)v->native_ns);
    else
        fputs("\"python_ns\":null,\"native_ns\":null}", f);
}

unsigned long long vt_proc_start(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* After the command (which may hold spaces and parentheses): state is field 3, starttime field 22. */
    const char *p = strrchr(buf, ')');
    unsigned long long start = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                     &start) != 1)
        return 0;
    return start;
}
