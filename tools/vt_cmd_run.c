/* vramtrace run: becomes the program, with libvramtrace.so preloaded and the VRAMTRACE_* settings
 * given on the command line. The library is looked for beside the command. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt_cmd.h"

static int vt_find_library(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = 0;
    static const char *const rel[] = {"libvramtrace.so", "../lib/libvramtrace.so", "../lib/vramtrace/libvramtrace.so"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        if (snprintf(out, len, "%s/%s", self, rel[i]) < (int)len && access(out, R_OK) == 0) {
            char *real = realpath(out, NULL);
            if (real && strlen(real) < len)
                strcpy(out, real);
            free(real);
            return 0;
        }
    }
    return -1;
}

static int vt_setenv_opt(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        fprintf(stderr, "vramtrace: cannot set %s: %s\n", name, strerror(errno));
        return -1;
    }
    return 0;
}

int vt_cmd_run(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        static const struct { const char *opt, *env; } opts[] = {
            {"--dir", "VRAMTRACE_DIR"}, {"--signal", "VRAMTRACE_SIGNAL"},
            {"--interval", "VRAMTRACE_INTERVAL"}, {"--depth", "VRAMTRACE_DEPTH"},
        };
        size_t k;
        for (k = 0; k < sizeof opts / sizeof opts[0] && strcmp(argv[i], opts[k].opt); k++)
            ;
        if (k == sizeof opts / sizeof opts[0] || i + 1 >= argc) {
            fprintf(stderr, "vramtrace run: %s '%s'\n", k == sizeof opts / sizeof opts[0] ? "unknown option" : "no value for",
                    argv[i]);
            return VT_EXIT_USAGE;
        }
        if (vt_setenv_opt(opts[k].env, argv[++i]) < 0)
            return VT_EXIT_USAGE;
    }
    if (i >= argc - 1) {
        fprintf(stderr, "vramtrace run: no command (usage: vramtrace run [options] -- CMD [ARGS...])\n");
        return VT_EXIT_USAGE;
    }
    char lib[PATH_MAX];
    if (vt_find_library(lib, sizeof lib) < 0) {
        fprintf(stderr, "vramtrace run: libvramtrace.so not found beside this command\n");
        return VT_EXIT_USAGE;
    }
    const char *old = getenv("LD_PRELOAD");
    char *preload;
    if (old && *old) {
        size_t n = strlen(lib) + strlen(old) + 2;
        if (!(preload = malloc(n)))
            return VT_EXIT_USAGE;
        snprintf(preload, n, "%s:%s", lib, old);
    } else {
        preload = lib;
    }
    if (vt_setenv_opt("LD_PRELOAD", preload) < 0)
        return VT_EXIT_USAGE;
    /* exec, not fork: the program keeps the pid a user sees (for vramtrace dump) and its own status. */
    execvp(argv[i + 1], argv + i + 1);
    fprintf(stderr, "vramtrace run: cannot run %s: %s\n", argv[i + 1], strerror(errno));
    return 127;
}
