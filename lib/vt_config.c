/* VRAMTRACE_* variables. Each is parsed strictly; anything unexpected is said on stderr with the
 * default that is used instead, so a typo never silently changes what gets recorded. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vt_config.h"
#include "vt_log.h"
#include "vt_pystack.h"
#include "vt_signame.h"

struct vt_config vt_cfg;

static int vt_parse_bool(const char *name, const char *v, int dflt)
{
    if (!strcasecmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true"))
        return 1;
    if (!strcasecmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no") || !strcasecmp(v, "false"))
        return 0;
    vt_say("%s=%s is not on/off (1/0, yes/no, true/false); using %s", name, v, dflt ? "on" : "off");
    return dflt;
}

static int vt_parse_signal(const char *v)
{
    int sig = vt_signal_parse(v);
    if (sig >= 0)
        return sig;
    vt_say("VRAMTRACE_SIGNAL=%s is not a signal vramtrace can use (USR1, USR2, HUP, PROF, URG, WINCH, "
           "PWR, a real-time signal number, or none); using USR1", v);
    return SIGUSR1;
}

static double vt_parse_interval(const char *v)
{
    char *end;
    double d = strtod(v, &end);
    if (*v && !*end && d >= 0 && d <= 86400.0 * 365)
        return d;
    vt_say("VRAMTRACE_INTERVAL=%s is not a number of seconds (0 for off); using 0 (off)", v);
    return 0;
}

static double vt_parse_timeout(const char *v)
{
    char *end;
    double d = strtod(v, &end);
    if (*v && !*end && d >= 0 && d <= 600)
        return d;
    vt_say("VRAMTRACE_BRIDGE_TIMEOUT=%s is not a number of seconds from 0 to 600 (0: no bridges); using 2", v);
    return 2;
}

static int vt_parse_int(const char *name, const char *v, long lo, long hi, int dflt)
{
    char *end;
    long d = strtol(v, &end, 10);
    if (*v && !*end && d >= lo && d <= hi)
        return (int)d;
    vt_say("%s=%s is not a number from %ld to %ld; using %d", name, v, lo, hi, dflt);
    return dflt;
}

static double vt_parse_wait(const char *v)
{
    char *end;
    double d = strtod(v, &end);
    if (*v && !*end && d >= 0 && d <= 10000)
        return d;
    vt_say("VRAMTRACE_PY_WAIT=%s is not a number of milliseconds from 0 to 10000 (0: only threads holding the "
           "GIL); using %d", v, VT_PY_WAIT_DEFAULT);
    return VT_PY_WAIT_DEFAULT;
}

void vt_config_load(void)
{
    const char *v;
    memset(&vt_cfg, 0, sizeof vt_cfg);
    vt_cfg.signal = SIGUSR1;
    vt_cfg.at_exit = 1;
    vt_cfg.on_oom = 1;
    vt_cfg.depth = VT_DEPTH_DEFAULT;
    vt_cfg.bridge_timeout = 2;
    vt_cfg.torch_history = 1;
    vt_cfg.python = 1;
    vt_cfg.py_depth = VT_PY_DEPTH_DEFAULT;
    vt_cfg.py_wait = VT_PY_WAIT_DEFAULT;

    if ((v = getenv("VRAMTRACE_DIR")) && *v) {
        if (strlen(v) >= sizeof vt_cfg.dir - 64)
            vt_say("VRAMTRACE_DIR is too long; using the working directory");
        else
            strcpy(vt_cfg.dir, v);
    }
    if ((v = getenv("VRAMTRACE_SIGNAL")) && *v)
        vt_cfg.signal = vt_parse_signal(v);
    if ((v = getenv("VRAMTRACE_AT_EXIT")) && *v)
        vt_cfg.at_exit = vt_parse_bool("VRAMTRACE_AT_EXIT", v, 1);
    if ((v = getenv("VRAMTRACE_ON_OOM")) && *v)
        vt_cfg.on_oom = vt_parse_bool("VRAMTRACE_ON_OOM", v, 1);
    if ((v = getenv("VRAMTRACE_INTERVAL")) && *v)
        vt_cfg.interval = vt_parse_interval(v);
    if ((v = getenv("VRAMTRACE_DEPTH")) && *v)
        vt_cfg.depth = vt_parse_int("VRAMTRACE_DEPTH", v, 0, VT_DEPTH_MAX, VT_DEPTH_DEFAULT);
    if ((v = getenv("VRAMTRACE_BRIDGE_TIMEOUT")) && *v)
        vt_cfg.bridge_timeout = vt_parse_timeout(v);
    if ((v = getenv("VRAMTRACE_TORCH_HISTORY")) && *v)
        vt_cfg.torch_history = vt_parse_bool("VRAMTRACE_TORCH_HISTORY", v, 1);
    if ((v = getenv("VRAMTRACE_PYTHON")) && *v)
        vt_cfg.python = vt_parse_bool("VRAMTRACE_PYTHON", v, 1);
    if ((v = getenv("VRAMTRACE_PY_DEPTH")) && *v)
        vt_cfg.py_depth = vt_parse_int("VRAMTRACE_PY_DEPTH", v, 1, VT_PY_DEPTH_MAX, VT_PY_DEPTH_DEFAULT);
    if ((v = getenv("VRAMTRACE_PY_WAIT")) && *v)
        vt_cfg.py_wait = vt_parse_wait(v);
}
