/* The vramtrace command: dispatches to its verbs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vt_cmd.h"

static void vt_usage(FILE *f)
{
    fputs("usage: vramtrace run [--dir D] [--signal SIG] [--interval S] [--keep N] [--depth N] [--metrics FILE [--metrics-interval S]] -- CMD [ARGS...]\n"
          "       vramtrace dump PID... | --children PID [--dir D] [--timeout S]\n"
          "       vramtrace report DUMP [--top N] [--device D] [--json | --folded | --pprof FILE | --prometheus] [--full-stacks]\n"
          "       vramtrace report DUMP DUMP... (one per process) [--top N] [--device D] [--json] [--full-stacks]\n"
          "       vramtrace diff OLD NEW [--json | --folded] [--fail-on-growth SIZE] [--full-stacks] [--force]\n"
          "       vramtrace diff OLD NEW OLD NEW... (two per process) [--json] [--fail-on-growth SIZE] [--full-stacks]\n"
          "       vramtrace trend DUMP DUMP DUMP... [--json | --folded] [--full-stacks]\n"
          "       vramtrace metrics --textfile FILE [--interval S] [--top N] [--once] PID\n"
          "       vramtrace html -o FILE DUMP... (one page: a dump, a series, several processes)\n",
          f);
}

static int vt_dispatch(int argc, char **argv)
{
    if (argc < 2) {
        vt_usage(stderr);
        return VT_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        vt_usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "run"))
        return vt_cmd_run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "dump"))
        return vt_cmd_dump(argc - 1, argv + 1);
    if (!strcmp(argv[1], "report"))
        return vt_cmd_report(argc - 1, argv + 1);
    if (!strcmp(argv[1], "diff"))
        return vt_cmd_diff(argc - 1, argv + 1);
    if (!strcmp(argv[1], "trend"))
        return vt_cmd_trend(argc - 1, argv + 1);
    if (!strcmp(argv[1], "html"))
        return vt_cmd_html(argc - 1, argv + 1);
    if (!strcmp(argv[1], "metrics"))
        return vt_cmd_metrics(argc - 1, argv + 1);
    fprintf(stderr, "vramtrace: unknown verb '%s'\n", argv[1]);
    vt_usage(stderr);
    return VT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    int r = vt_dispatch(argc, argv);
    /* Output that did not reach its file (a full disk, /dev/full) is a failure, never a silent 0. */
    int bad = ferror(stdout);
    if (fflush(stdout) != 0 || bad) {
        fprintf(stderr, "vramtrace: cannot write the output: %s\n", bad && !errno ? "write error" : strerror(errno));
        return 1;
    }
    return r;
}
