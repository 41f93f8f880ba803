/* Reading the settings into vt_cfg: each setting of the table (vt_settings.c) lands in its field here;
 * defaults come from the table too, so they are written once. The dump directory is fixed at start,
 * as an absolute path, so a program that changes its working directory later still dumps where it
 * was told to (and where vramtrace dump looks). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt_config.h"
#include "vt_log.h"
#include "vt_text.h"
#include "vt_settings.h"
#include "vt_module.h"

extern char **environ;

struct vt_config vt_cfg __attribute__((aligned(64)));

static const struct {
    const char *name;
    size_t off;
    int is_double;
} vt_fields[] = {
    {"VRAMTRACE_SIGNAL", offsetof(struct vt_config, signal), 0},
    {"VRAMTRACE_AT_EXIT", offsetof(struct vt_config, at_exit), 0},
    {"VRAMTRACE_ON_OOM", offsetof(struct vt_config, on_oom), 0},
    {"VRAMTRACE_INTERVAL", offsetof(struct vt_config, interval), 1},
    {"VRAMTRACE_KEEP", offsetof(struct vt_config, keep), 0},
    {"VRAMTRACE_DEPTH", offsetof(struct vt_config, depth), 0},
    {"VRAMTRACE_PYTHON", offsetof(struct vt_config, python), 0},
    {"VRAMTRACE_PY_DEPTH", offsetof(struct vt_config, py_depth), 0},
    {"VRAMTRACE_PY_NATIVE_DEPTH", offsetof(struct vt_config, py_native_depth), 0},
    {"VRAMTRACE_PY_WALK", offsetof(struct vt_config, py_walk), 0},
    {"VRAMTRACE_PY_PATHS", offsetof(struct vt_config, py_paths), 0},
    {"VRAMTRACE_PY_WAIT", offsetof(struct vt_config, py_wait), 1},
    {"VRAMTRACE_BRIDGE_TIMEOUT", offsetof(struct vt_config, bridge_timeout), 1},
    {"VRAMTRACE_TORCH_TRACKER", offsetof(struct vt_config, torch_tracker), 0},
    {"VRAMTRACE_TORCH_HISTORY", offsetof(struct vt_config, torch_history), 0},
    {"VRAMTRACE_TORCH_SAMPLE", offsetof(struct vt_config, torch_sample), 0},
    {"VRAMTRACE_CUPY_BLOCKS", offsetof(struct vt_config, cupy_blocks), 0},
    {"VRAMTRACE_METRICS_INTERVAL", offsetof(struct vt_config, metrics_interval), 1},
    {"VRAMTRACE_METRICS_TOP", offsetof(struct vt_config, metrics_top), 0},
    {"VRAMTRACE_END_NOTE_PID", offsetof(struct vt_config, end_note_pid), 0},
};

static void vt_store(size_t i, double v)
{
    char *field = (char *)&vt_cfg + vt_fields[i].off;
    if (vt_fields[i].is_double)
        *(double *)field = v;
    else
        *(int *)field = (int)v;
}

/* path made absolute against the working directory; 0, or -1 when it does not fit. */
static int vt_absolute(const char *path, char *out, size_t len)
{
    if (path[0] == '/')
        return strlen(path) < len ? (strcpy(out, path), 0) : -1;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    size_t n = strlen(cwd);
    if (n + 1 + strlen(path) >= len)
        return -1;
    memcpy(out, cwd, n);
    out[n] = '/';
    strcpy(out + n + 1, path);
    return 0;
}

/* A setting's value as a message shows it: escaped (it may hold anything), and cut after 100 bytes with
 * its length said, so that a value of any length is named in a line of its own. */
static const char *vt_shown(const char *v, char *out, size_t len)
{
    size_t n = strlen(v), k = vt_text_escape(out, len - 40, v, n < 100 ? n : 100, 0);
    if (n > 100)
        snprintf(out + k, len - k, "... (%zu characters)", n);
    return out;
}

static void vt_config_dir(void)
{
    const struct vt_setting *s = vt_setting_find("VRAMTRACE_DIR");
    const char *v = getenv(s->name);
    char why[256];
    double unused;
    int bad = 0;
    if (v && *v) {
        if (vt_setting_parse(s, v, &unused, why, sizeof why) == 0 && vt_absolute(v, vt_cfg.dir, sizeof vt_cfg.dir) == 0)
            return;
        if (vt_cfg.dir[0])
            snprintf(why, sizeof why, "is too long");
        vt_cfg.dir[0] = 0;
        bad = 1;
    }
    /* The working directory when it is writable, else the private directory. */
    char cwd[PATH_MAX], unusable[256];
    if (getcwd(cwd, sizeof cwd) && vt_setting_parse(s, cwd, &unused, unusable, sizeof unusable) == 0)
        strcpy(vt_cfg.dir, cwd);
    char shown[512];
    if (bad)
        vt_say("%s=%s %s; using %s", s->name, vt_shown(v, shown, sizeof shown), why,
               vt_cfg.dir[0] ? vt_cfg.dir : "the private directory $TMPDIR/vramtrace-<uid>");
}

/* VRAMTRACE_METRICS: checked and made absolute now, like the dump directory; a bad one is said and
 * no file is kept. */
static void vt_config_metrics(void)
{
    const struct vt_setting *s = vt_setting_find("VRAMTRACE_METRICS");
    const char *v = getenv(s->name);
    char why[256];
    double unused;
    if (!v || !*v)
        return;
    if (vt_setting_parse(s, v, &unused, why, sizeof why) == 0) {
        if (vt_absolute(v, vt_cfg.metrics, sizeof vt_cfg.metrics) == 0)
            return;
        snprintf(why, sizeof why, "is too long");
    }
    vt_cfg.metrics[0] = 0;
    char shown[512];
    vt_say("%s=%s %s; no metrics file is kept", s->name, vt_shown(v, shown, sizeof shown), why);
}

/* VRAMTRACE_ALLOC_FNS: kept as given, for the metrics file's names (analyze/vt_labels.h). */
static void vt_config_alloc_fns(void)
{
    const struct vt_setting *s = vt_setting_find("VRAMTRACE_ALLOC_FNS");
    const char *v = getenv(s->name);
    char why[256], shown[512];
    double unused;
    if (!v || !*v)
        return;
    if (vt_setting_parse(s, v, &unused, why, sizeof why) == 0)
        snprintf(vt_cfg.alloc_fns, sizeof vt_cfg.alloc_fns, "%s", v);
    else
        vt_say("%s=%s %s; using none", s->name, vt_shown(v, shown, sizeof shown), why);
}

void vt_config_load(void)
{
    memset(&vt_cfg, 0, sizeof vt_cfg);
    char why[256];
    for (size_t i = 0; i < sizeof vt_fields / sizeof vt_fields[0]; i++) {
        const struct vt_setting *s = vt_setting_find(vt_fields[i].name);
        double v;
        vt_setting_parse(s, s->dflt, &v, why, sizeof why);
        vt_store(i, v);
        const char *env = getenv(s->name);
        if (!env || !*env)
            continue;
        char shown[512];
        if (vt_setting_parse(s, env, &v, why, sizeof why) == 0)
            vt_store(i, v);
        else
            vt_say("%s=%s %s; using %s", s->name, vt_shown(env, shown, sizeof shown), why, s->dflt);
    }
    vt_config_dir();
    vt_config_metrics();
    vt_config_alloc_fns();
    /* A misspelt setting would be ignored without a word. */
    for (char **e = environ; *e; e++) {
        char name[128];
        size_t n = strcspn(*e, "=");
        if (strncmp(*e, "VRAMTRACE_", 10) || !strncmp(*e, "VRAMTRACE_FAKE_", 15) || n >= sizeof name)
            continue;
        memcpy(name, *e, n);
        name[n] = 0;
        if (!vt_setting_find(name))
            vt_say("%s is not a vramtrace setting (ignored)", name);
    }
}

VT_MODULE(config, .init = vt_config_load);
