/* The vramtrace command: dispatches to its verbs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_cmd.h"
#include "vt_help.h"
#include "vt_labels.h"
#include "vt_settings.h"
#include "vt_symbols.h"
#include "vt_verb.h"

/* --opt=value becomes --opt value, up to a "--" (what follows is a program's own arguments): every verb
 * then reads one form. Returns the new argc; av must have room for twice argc. */
static int vt_split_equals(int argc, char **argv, char **av)
{
    int n = 0, rest = 0;
    for (int i = 0; i < argc; i++) {
        char *eq = argv[i][0] == '-' && argv[i][1] == '-' ? strchr(argv[i], '=') : NULL;
        if (!rest && !strcmp(argv[i], "--"))
            rest = 1;
        if (!rest && eq && eq > argv[i] + 2) {
            *eq = 0;
            av[n++] = argv[i];
            av[n++] = eq + 1;
        } else {
            av[n++] = argv[i];
        }
    }
    av[n] = NULL;
    return n;
}

/* Whether the verb's own arguments (before any "--") ask for help. */
static int vt_wants_help(int argc, char **argv)
{
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    return 0;
}

static int vt_dispatch(int argc, char **argv)
{
    if (argc < 2) {
        vt_usage(stderr);
        return VT_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") || !strcmp(argv[1], "version")) {
        vt_version(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        if (argc > 2 && !strcmp(argv[1], "help") && !strcmp(argv[2], "--man")) {
            vt_man(stdout);
            return 0;
        }
        if (argc > 2 && !strcmp(argv[1], "help") && !strcmp(argv[2], "--bash-completion")) {
            vt_bash_completion(stdout);
            return 0;
        }
        if (argc > 2 && strcmp(argv[1], "help") == 0) {
            if (vt_help_verb(stdout, argv[2]) == 0)
                return 0;
            const char *near = vt_verb_suggest(argv[2]);
            fprintf(stderr, "vramtrace help: no verb '%s'%s%s%s\n", argv[2], near ? " (did you mean '" : "",
                    near ? near : "", near ? "'?)" : "");
            return VT_EXIT_USAGE;
        }
        vt_usage(stdout);
        return 0;
    }
    if (vt_is_verb(argv[1]) && vt_wants_help(argc, argv)) {
        vt_help_verb(stdout, argv[1]);
        return 0;
    }
    const struct vt_verb *v = vt_verb_named(argv[1]);
    if (v)
        return vt_verb_main(v, argc - 1, argv + 1);
    const char *near = vt_verb_suggest(argv[1]);
    if (near)
        fprintf(stderr, "vramtrace: unknown verb '%s' (did you mean '%s'?)\n", argv[1], near);
    else
        fprintf(stderr, "vramtrace: unknown verb '%s'\n", argv[1]);
    vt_usage(stderr);
    return VT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    char **av = calloc(2 * (size_t)argc + 1, sizeof *av);
    if (!av) {
        fputs("vramtrace: out of memory\n", stderr);
        return 1;
    }
    vt_model_use_symbolizer(&vt_libdw_symbolizer); /* the reports name frames with libdw (analyze/ has none) */
    vt_model_use_demangler(vt_cxx_demangle);         /* and C++ names the dump recorded, where libdw has none */
    const char *fns = getenv("VRAMTRACE_ALLOC_FNS");
    if (fns && *fns) {
        char why[256];
        double unused;
        if (vt_setting_parse(vt_setting_find("VRAMTRACE_ALLOC_FNS"), fns, &unused, why, sizeof why) == 0)
            vt_labels_alloc_fns(fns);
        else
            fprintf(stderr, "vramtrace: VRAMTRACE_ALLOC_FNS %s; ignored\n", why);
    }
    int r = vt_dispatch(vt_split_equals(argc, argv, av), av);
    free(av);
    /* Output that did not reach its file (a full disk, /dev/full) is a failure, never a silent 0. */
    int bad = ferror(stdout);
    if (fflush(stdout) != 0 || bad) {
        fprintf(stderr, "vramtrace: cannot write the output: %s\n", bad && !errno ? "write error" : strerror(errno));
        return 1;
    }
    return r;
}
