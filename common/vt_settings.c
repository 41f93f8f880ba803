/* The settings table and its parser (vt_settings.h). The README's settings table is checked against
 * this one by a test, so the two cannot drift apart. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include "vt_settings.h"
#include "vt_signame.h"

static const char *const vt_history_words[] = {"off", "dump", "always", NULL};

const struct vt_setting vt_settings[] = {
    {"VRAMTRACE_DIR", "--dir", VT_SET_DIR, 0, 0, 0, "the working directory at start, else a private directory",
     NULL, "where dumps are written", NULL},
    {"VRAMTRACE_SIGNAL", "--signal", VT_SET_SIGNAL, 0, 0, 0, "USR1", NULL, "the signal that asks for a dump", NULL},
    {"VRAMTRACE_AT_EXIT", NULL, VT_SET_BOOL, 0, 1, 0, "on", NULL, "dump at exit", NULL},
    {"VRAMTRACE_ON_OOM", NULL, VT_SET_BOOL, 0, 1, 0, "on", NULL, "dump when an allocation fails for lack of memory", NULL},
    {"VRAMTRACE_INTERVAL", "--interval", VT_SET_NUMBER, 1, 86400.0 * 365, 1, "0", "seconds",
     "seconds between periodic dumps", NULL},
    {"VRAMTRACE_KEEP", "--keep", VT_SET_INT, 0, 1000000, 0, "100", "dumps",
     "periodic dumps kept: older ones of the same run are removed (0: keep all)", NULL},
    {"VRAMTRACE_DEPTH", "--depth", VT_SET_INT, 0, 128, 0, "32", "frames", "native frames kept per stack", NULL},
    {"VRAMTRACE_PYTHON", NULL, VT_SET_BOOL, 0, 1, 0, "on", NULL, "Python call sites for allocations", NULL},
    {"VRAMTRACE_PY_DEPTH", NULL, VT_SET_INT, 1, 256, 0, "32", "frames", "Python frames kept per stack", NULL},
    {"VRAMTRACE_PY_NATIVE_DEPTH", NULL, VT_SET_INT, 0, 128, 0, "1", "frames",
     "native frames kept above the Python frames of an allocation (at most VRAMTRACE_DEPTH)", NULL},
    {"VRAMTRACE_PY_WALK", NULL, VT_SET_BOOL, 0, 1, 0, "on", NULL,
     "read Python frames from the interpreter's memory on the allocating thread", NULL},
    {"VRAMTRACE_PY_PATHS", NULL, VT_SET_BOOL, 0, 1, 0, "on", NULL,
     "walk Python frames by paths (CPython 3.12, 3.13): only the frames changed since the thread's last walk "
     "looked up; off: every frame hashed into a key each walk", NULL},
    {"VRAMTRACE_PY_WAIT", NULL, VT_SET_NUMBER, 0, 10000, 0, "10", "ms",
     "how long an allocation waits for its Python frames", NULL},
    {"VRAMTRACE_BRIDGE_TIMEOUT", NULL, VT_SET_NUMBER, 0, 600, 0, "2", "seconds",
     "how long a dump waits for the GIL to read the caching allocators", NULL},
    {"VRAMTRACE_TORCH_TRACKER", NULL, VT_SET_BOOL, 0, 1, 0, "on", NULL,
     "every block of torch's caching allocator with its call site, through the allocator's own trace tracker "
     "(torch's block history only where the tracker cannot be used)", NULL},
    {"VRAMTRACE_TORCH_HISTORY", NULL, VT_SET_CHOICE, 0, 2, 0, "dump", NULL,
     "when to switch on torch's block history: at the first dump, once torch's allocator is up, or never",
     vt_history_words},
    {"VRAMTRACE_TORCH_SAMPLE", NULL, VT_SET_INT, 1, 100, 0, "5", "percent",
     "the share of each second torch's block history is on once the first dump switched it on (100: all the time)",
     NULL},
    {"VRAMTRACE_CUPY_BLOCKS", NULL, VT_SET_BOOL, 0, 1, 0, "on", NULL,
     "CuPy's blocks with their Python call sites, through a memory hook on the main thread from the first dump on",
     NULL},
    {"VRAMTRACE_ALLOC_FNS", NULL, VT_SET_NAMES, 0, 0, 0, "none", NULL,
     "functions that allocate on behalf of their callers, apart by commas: a call site is named past them "
     "(as massif's --alloc-fn); read by the reports and the metrics file", NULL},
    {"VRAMTRACE_METRICS", "--metrics", VT_SET_FILE, 0, 0, 0, "none", NULL,
     "keep this file up to date with Prometheus metrics of the process (%p in the name: its pid)", NULL},
    {"VRAMTRACE_METRICS_INTERVAL", "--metrics-interval", VT_SET_NUMBER, 1, 86400, 0, "30", "seconds",
     "seconds between two writes of the metrics file", NULL},
    {"VRAMTRACE_METRICS_TOP", NULL, VT_SET_INT, 1, 1000, 0, "10", "sites",
     "call sites in the metrics file (the largest by live bytes)", NULL},
    {"VRAMTRACE_END_NOTE_PID", NULL, VT_SET_INT, 1, 4194304, 1, "0", NULL,
     "the process (by pid) that says as it ends where its dumps are and the command to read them "
     "(vramtrace run sets it to the program's pid)",
     NULL},
};
const size_t vt_nsettings = sizeof vt_settings / sizeof vt_settings[0];

const struct vt_setting *vt_setting_find(const char *name)
{
    for (size_t i = 0; i < vt_nsettings; i++)
        if (!strcmp(vt_settings[i].name, name))
            return &vt_settings[i];
    return NULL;
}

const struct vt_setting *vt_setting_for_opt(const char *opt)
{
    for (size_t i = 0; i < vt_nsettings; i++)
        if (vt_settings[i].run_opt && !strcmp(vt_settings[i].run_opt, opt))
            return &vt_settings[i];
    return NULL;
}

/* A plain decimal: digits, at most one '.', at least one digit. Nothing strtod would also take
 * (signs, exponents, hex, inf, nan, spaces). */
int vt_parse_decimal(const char *v, double *out)
{
    int digits = 0, dots = 0;
    for (const char *c = v; *c; c++) {
        if (*c >= '0' && *c <= '9')
            digits++;
        else if (*c == '.' && !dots)
            dots++;
        else
            return -1;
    }
    if (!digits || strlen(v) > 32)
        return -1;
    double d = 0, scale = 1;
    int frac = 0;
    for (const char *c = v; *c; c++) {
        if (*c == '.') {
            frac = 1;
            continue;
        }
        if (frac) {
            scale /= 10;
            d += (*c - '0') * scale;
        } else {
            d = d * 10 + (*c - '0');
        }
    }
    *out = d;
    return 0;
}

static void vt_range_text(const struct vt_setting *s, char *buf, size_t len)
{
    snprintf(buf, len, "%.15g to %.15g%s%s%s", s->lo, s->hi, s->unit ? " " : "", s->unit ? s->unit : "",
             s->zero_off ? " (0: off)" : "");
}

int vt_setting_parse(const struct vt_setting *s, const char *v, double *num, char *why, size_t len)
{
    char range[96];
    double d;
    *num = 0;
    switch (s->type) {
    case VT_SET_CHOICE: {
        int n = 0;
        for (; s->choices[n]; n++)
            if (!strcasecmp(v, s->choices[n])) {
                *num = n;
                return 0;
            }
        double b;
        struct vt_setting as_bool = {.type = VT_SET_BOOL};
        if (vt_setting_parse(&as_bool, v, &b, why, len) == 0) {
            *num = b ? n - 1 : 0;
            return 0;
        }
        char words[128] = "";
        for (int i = 0; i < n; i++)
            snprintf(words + strlen(words), sizeof words - strlen(words), "%s%s", i ? i == n - 1 ? " or " : ", " : "",
                     s->choices[i]);
        snprintf(why, len, "is not %s", words);
        return -1;
    }
    case VT_SET_BOOL:
        if (!strcasecmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true")) {
            *num = 1;
            return 0;
        }
        if (!strcasecmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no") || !strcasecmp(v, "false"))
            return 0;
        snprintf(why, len, "is not on or off (1/0, yes/no, true/false)");
        return -1;
    case VT_SET_INT:
    case VT_SET_NUMBER:
        vt_range_text(s, range, sizeof range);
        if (vt_parse_decimal(v, &d) < 0 || (s->type == VT_SET_INT && strchr(v, '.'))) {
            snprintf(why, len, "is not a %s from %s", s->type == VT_SET_INT ? "whole number" : "decimal number", range);
            return -1;
        }
        if (!(s->zero_off && d == 0) && (d < s->lo || d > s->hi)) {
            snprintf(why, len, "is out of range: %s", range);
            return -1;
        }
        *num = d;
        return 0;
    case VT_SET_SIGNAL: {
        int sig = vt_signal_parse(v);
        if (sig < 0) {
            snprintf(why, len, "is not a signal vramtrace can use (USR1, USR2, HUP, PROF, URG, WINCH, PWR, a "
                               "real-time signal number, or none)");
            return -1;
        }
        *num = sig;
        return 0;
    }
    case VT_SET_NAMES: {
        size_t n = strlen(v);
        if (n > VT_SET_NAMES_MAX) {
            snprintf(why, len, "is longer than %d bytes", VT_SET_NAMES_MAX);
            return -1;
        }
        for (const char *c = v; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) {
                snprintf(why, len, "holds a control character");
                return -1;
            }
        return 0;
    }
    case VT_SET_FILE: {
        /* The file may not exist yet: its directory must, writable; the name itself not a directory. */
        struct stat st;
        char dir[3072];
        const char *slash = strrchr(v, '/');
        if (!*v || strlen(v) > 3000 || (slash && !slash[1])) {
            snprintf(why, len, "is %s", !*v ? "empty" : strlen(v) > 3000 ? "too long" : "a directory, not a file");
            return -1;
        }
        if (!slash)
            strcpy(dir, ".");
        else if (slash == v)
            strcpy(dir, "/");
        else
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - v), v);
        if (stat(v, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(why, len, "is a directory, not a file");
            return -1;
        }
        if (stat(dir, &st) != 0) {
            snprintf(why, len, "cannot be used: its directory %s: %s", dir, strerror(errno));
            return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
            snprintf(why, len, "cannot be used: %s is not a directory", dir);
            return -1;
        }
        if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0) {
            snprintf(why, len, "cannot be used: its directory %s is not writable: %s", dir, strerror(errno));
            return -1;
        }
        return 0;
    }
    case VT_SET_DIR: {
        struct stat st;
        if (!*v || strlen(v) > 3000) {
            snprintf(why, len, "is %s", *v ? "too long" : "empty");
            return -1;
        }
        if (stat(v, &st) != 0) {
            snprintf(why, len, "cannot be used: %s", strerror(errno));
            return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
            snprintf(why, len, "is not a directory");
            return -1;
        }
        if (faccessat(AT_FDCWD, v, W_OK | X_OK, AT_EACCESS) != 0) {
            snprintf(why, len, "is not writable: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    }
    snprintf(why, len, "has no parser");
    return -1;
}
