/* vramtrace run: becomes the program, with libvramtrace.so preloaded and the VRAMTRACE_* settings
 * given on the command line. Every setting, from an option or already in the environment, is checked
 * here first with the library's own parser (common/vt_settings.c), so a bad value stops the run with a
 * clear message instead of being replaced by a default inside the program. --dir is created (0700) if
 * it does not exist, and made absolute, so vramtrace dump finds it whatever the program's working
 * directory becomes. The library is looked for beside the command. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vt_cmd.h"
#include "vt_verb.h"
#include "vt_paths.h"
#include "vt_settings.h"

extern char **environ;

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
        fprintf(stderr, "vramtrace run: cannot set %s: %s\n", name, strerror(errno));
        return -1;
    }
    return 0;
}

/* --dir D: made if missing (with its parents' existence required), then absolute. */
static int vt_prepare_dir(const char *dir)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "vramtrace run: cannot make the dump directory %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char *abs = realpath(dir, NULL);
    if (!abs) {
        fprintf(stderr, "vramtrace run: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int r = vt_setenv_opt("VRAMTRACE_DIR", abs);
    free(abs);
    return r;
}

/* Every VRAMTRACE_* variable now in the environment: known, and a value its parser takes. */
static int vt_check_settings(void)
{
    int bad = 0;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "VRAMTRACE_", 10))
            continue;
        const char *eq = strchr(*e, '=');
        char name[128];
        size_t nl = eq ? (size_t)(eq - *e) : strlen(*e);
        if (nl >= sizeof name)
            continue;
        memcpy(name, *e, nl);
        name[nl] = 0;
        const struct vt_setting *s = vt_setting_find(name);
        if (!s) {
            if (strncmp(name, "VRAMTRACE_FAKE_", 15)) /* the fake driver's own, for tests */
                fprintf(stderr, "vramtrace run: warning: %s is not a vramtrace setting (ignored)\n", name);
            continue;
        }
        char why[256];
        double v;
        if (eq && eq[1] && vt_setting_parse(s, eq + 1, &v, why, sizeof why) < 0) {
            fprintf(stderr, "vramtrace run: %s=%s %s\n", name, eq + 1, why);
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

/* Where the program's dumps will go, as the library will decide at its start (vt_config.c): VRAMTRACE_DIR,
 * else the working directory when it is writable, else the private directory. */
static void vt_dump_dir_said(char *out, size_t len)
{
    const struct vt_setting *s = vt_setting_find("VRAMTRACE_DIR");
    const char *env = getenv(s->name);
    char cwd[PATH_MAX], why[256];
    double unused;
    if (env && *env) {
        char *abs = realpath(env, NULL);
        snprintf(out, len, "%s", abs ? abs : env);
        free(abs);
    } else if (getcwd(cwd, sizeof cwd) && vt_setting_parse(s, cwd, &unused, why, sizeof why) == 0) {
        snprintf(out, len, "%s", cwd);
    } else if (vt_private_dir(out, len, geteuid(), getenv("TMPDIR")) < 0) {
        snprintf(out, len, "a private directory");
    }
}

struct vt_run_args {
    int quiet;
};

/* A setting's option (--dir DIR, --depth N, ...: common/vt_settings.c) and its value, set in the
 * environment the program will have; any other word before "--" is a mistake. */
/* Whether execvp would find name: a path that is an executable file, or one in a $PATH folder. errno says
 * why not (ENOENT, EACCES). */
static int vt_runnable(const char *name)
{
    struct stat st;
    if (strchr(name, '/')) {
        if (stat(name, &st) != 0)
            return 0;
        if (!S_ISREG(st.st_mode) || access(name, X_OK) != 0) {
            errno = EACCES;
            return 0;
        }
        return 1;
    }
    const char *path = getenv("PATH");
    char full[PATH_MAX];
    int denied = 0;
    for (const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; ; ) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (snprintf(full, sizeof full, "%.*s/%s", (int)len, len ? p : ".", name) < (int)sizeof full &&
            stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(full, X_OK) == 0)
                return 1;
            denied = 1;
        }
        if (!colon)
            break;
        p = colon + 1;
    }
    errno = denied ? EACCES : ENOENT;
    return 0;
}

static int vt_run_word(void *args, int argc, char **argv, int *i)
{
    (void)args;
    const struct vt_setting *s = vt_setting_for_opt(argv[*i]);
    if (!s && argv[*i][0] != '-')
        return vt_usage_error("run", "'%s' is not an option: to run a program, put -- before it (vramtrace run -- %s)",
                              argv[*i], argv[*i]);
    if (!s || *i + 1 >= argc)
        return vt_usage_error("run", "%s '%s'", s ? "no value for" : "unknown option", argv[*i]);
    const char *value = argv[++*i];
    if (s->type == VT_SET_DIR) {
        if (vt_prepare_dir(value) < 0)
            return VT_EXIT_USAGE;
    } else if (vt_setenv_opt(s->name, value) < 0) {
        return VT_EXIT_USAGE;
    }
    return VT_WORD_TAKEN;
}

static int vt_run_run(void *args, char **command, int n)
{
    int quiet = ((const struct vt_run_args *)args)->quiet;
    if (!n)
        return vt_usage_error("run", "no command (usage: vramtrace run [options] -- CMD [ARGS...])");
    if (vt_check_settings() < 0)
        return VT_EXIT_USAGE;
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
    /* NVTX's memory calls (pools describing their heaps and blocks) come to the library when it is NVTX's
     * tool; another tool the user set (Nsight's) is left in place. */
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if ((!nvtx || !*nvtx) && vt_setenv_opt("NVTX_INJECTION64_PATH", lib) < 0)
        return VT_EXIT_USAGE;
    /* The program (this pid after the exec), not its children, says where its dumps are as it ends;
     * a value the user gave is kept (0: not said). */
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", quiet ? 0L : (long)getpid());
    if (!getenv("VRAMTRACE_END_NOTE_PID") && vt_setenv_opt("VRAMTRACE_END_NOTE_PID", pid) < 0)
        return VT_EXIT_USAGE;
    /* A program that cannot be run is said so, and never announced as running: looked for as execvp will. */
    if (!vt_runnable(command[0])) {
        fprintf(stderr, "vramtrace run: cannot run %s: %s\n", command[0], strerror(errno));
        return 127;
    }
    /* As heaptrack and valgrind do: the pid to ask for dumps (this one: exec keeps it) and where they go. */
    if (!quiet) {
        char dir[PATH_MAX];
        vt_dump_dir_said(dir, sizeof dir);
        fprintf(stderr, "vramtrace: running %s as pid %ld; dumps go to %s (vramtrace dump %ld takes one)\n",
                command[0], (long)getpid(), dir, (long)getpid());
    }
    /* exec, not fork: the program keeps the pid a user sees (for vramtrace dump) and its own status. */
    command[n] = NULL;
    execvp(command[0], command);
    fprintf(stderr, "vramtrace run: cannot run %s: %s\n", command[0], strerror(errno));
    return 127;
}

const struct vt_verb vt_verb_run = {
    "run", "run [OPTIONS] -- CMD [ARGS...]",
    "Runs CMD with libvramtrace.so preloaded (found beside this command); it keeps its pid and exit status.\n"
    "It says on stderr the pid and where dumps go; as it ends, CMD says where its dumps are and the command\n"
    "that reads them.",
    "; otherwise the program's own status (127: it could not be run)", sizeof(struct vt_run_args), NULL, vt_run_word,
    vt_run_run, 1, 1,
    {{"--quiet", NULL, "say nothing: neither the pid and dump directory at start nor where the dumps are at the end",
      VT_OPT_FLAG, offsetof(struct vt_run_args, quiet), 0, 0, 0, NULL, NULL, "-q"}}};
