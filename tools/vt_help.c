/* What the command says of itself: its version, the synopsis of every verb, and each verb's help (every
 * option, the setting it maps to, the exit codes), from one table. A verb given slightly wrong gets the
 * nearest one suggested. `vramtrace run`'s options that set a VRAMTRACE_* setting come from the settings
 * table itself (common/vt_settings.c), so its help cannot miss one. */
#include <stdio.h>
#include <string.h>

#include "vt_help.h"
#include "vt_settings.h"
#include "vt_version.h"

struct vt_opt {
    const char *flag, *arg, *help;
};

struct vt_verb {
    const char *name, *synopsis, *what;
    struct vt_opt opts[10];
};

static const struct vt_verb vt_verbs[] = {
    {"run", "run [OPTIONS] -- CMD [ARGS...]",
     "Runs CMD with libvramtrace.so preloaded (found beside this command); it keeps its pid and exit status.\n"
     "It says on stderr the pid and where dumps go; as it ends, CMD says where its dumps are and the command\n"
     "that reads them.",
     {{"--quiet", NULL, "say nothing: neither the pid and dump directory at start nor where the dumps are at the end"}}},
    {"dump", "dump PID... | --children PID [--timeout S]",
     "Asks live processes for a dump each, over the library's own socket (never by a signal), and prints the\n"
     "dumps' paths, one a line, once each is complete.",
     {{"--children", "PID", "every process under PID that has the library loaded"},
      {"--timeout", "S", "seconds to wait for all the dumps (default 30)"}}},
    {"report", "report DUMP [OPTIONS]  |  report DUMP DUMP... (one per process)",
     "Where the memory is: per device process used, reserved, allocated, cached (releasable, fragmented),\n"
     "overhead; failed requests; the call sites holding the most live bytes.",
     {{"--top", "N", "show the N largest call sites (default 10)"},
      {"--device", "D", "only device D"},
      {"--json", NULL, "JSON (docs/JSON.md)"},
      {"--folded", NULL, "folded stacks with their bytes, for flame graphs"},
      {"--pprof", "FILE", "write a gzipped pprof profile (go tool pprof FILE)"},
      {"--prometheus", NULL, "Prometheus metrics (the text exposition format)"},
      {"--full-stacks", NULL, "every frame, none folded away"}}},
    {"diff", "diff OLD NEW [OPTIONS]  |  diff OLD NEW OLD NEW... (two per process)",
     "What grew between two dumps, by call site, classed allocated (a leak suspect) or cache; one verdict.",
     {{"--json", NULL, "JSON (docs/JSON.md)"},
      {"--folded", NULL, "each changed site's folded stack with its bytes before and after"},
      {"--fail-on-growth", "SIZE", "exit 3 when allocated memory grew by more than SIZE (100M, 2G)"},
      {"--full-stacks", NULL, "every frame, none folded away"},
      {"--force", NULL, "compare dumps of two different programs"}}},
    {"trend", "trend DUMP DUMP DUMP... [OPTIONS]",
     "Three or more dumps of one process: the call sites that grew and never shrank, with their rate.",
     {{"--json", NULL, "JSON (docs/JSON.md)"},
      {"--folded", NULL, "the growing sites' folded stacks, bytes first and last"},
      {"--full-stacks", NULL, "every frame, none folded away"}}},
    {"html", "html -o FILE DUMP...",
     "One self-contained HTML page: per process the verdict, a timeline, device bars, a flame graph and the\n"
     "top sites; several processes side by side.",
     {{"-o", "FILE", "the page to write"}}},
    {"metrics", "metrics --textfile FILE [OPTIONS] PID",
     "Keeps FILE, Prometheus metrics of a live process, up to date for node_exporter's textfile collector;\n"
     "FILE must not exist yet (it is created, never replaced); removed when the process ends.",
     {{"--textfile", "FILE", "the file to keep"},
      {"--interval", "S", "seconds between two files (default 30)"},
      {"--top", "N", "call sites given as series (default 10)"},
      {"--once", NULL, "write the file once and stop"},
      {"--timeout", "S", "seconds to wait for each dump (default 30)"}}},
    {"help", "help [VERB]", "This text, or a verb's.", {{NULL, NULL, NULL}}},
};
#define VT_NVERBS (sizeof vt_verbs / sizeof vt_verbs[0])

void vt_version(FILE *f)
{
    fprintf(f, "vramtrace %s%s%s\n", VT_VERSION, VT_REVISION[0] ? " (git " : "", VT_REVISION[0] ? VT_REVISION ")" : "");
}

void vt_usage(FILE *f)
{
    fputs("usage: vramtrace VERB [OPTIONS] ...\n\n", f);
    for (size_t i = 0; i < VT_NVERBS; i++)
        fprintf(f, "  vramtrace %s\n", vt_verbs[i].synopsis);
    fputs("\n  vramtrace --version\n  vramtrace help VERB   (or VERB --help): every option of a verb\n", f);
}

static const struct vt_verb *vt_verb(const char *name)
{
    for (size_t i = 0; i < VT_NVERBS; i++)
        if (!strcmp(vt_verbs[i].name, name))
            return &vt_verbs[i];
    return NULL;
}

static void vt_opt_line(FILE *f, const char *flag, const char *arg, const char *help)
{
    char left[64];
    snprintf(left, sizeof left, "%s%s%s", flag, arg ? " " : "", arg ? arg : "");
    fprintf(f, "  %-24s %s\n", left, help);
}

int vt_help_verb(FILE *f, const char *name)
{
    const struct vt_verb *v = vt_verb(name);
    if (!v)
        return -1;
    fprintf(f, "usage: vramtrace %s\n\n%s\n\noptions (--opt=value works too):\n", v->synopsis, v->what);
    for (const struct vt_opt *o = v->opts; o < v->opts + 10 && o->flag; o++)
        vt_opt_line(f, o->flag, o->arg, o->help);
    if (!strcmp(name, "run")) {
        /* The settings that have an option of run's, then those set in the environment only. */
        for (size_t i = 0; i < vt_nsettings; i++) {
            const struct vt_setting *s = &vt_settings[i];
            if (!s->run_opt)
                continue;
            char help[256];
            snprintf(help, sizeof help, "%s (%s, default %s)", s->meaning, s->name, s->dflt);
            vt_opt_line(f, s->run_opt, s->type == VT_SET_DIR ? "DIR" : s->type == VT_SET_FILE ? "FILE" : s->type == VT_SET_SIGNAL ? "SIG" : "N", help);
        }
        fputs("\nsettings read from the environment (VRAMTRACE_NAME=value; run checks them all first):\n", f);
        for (size_t i = 0; i < vt_nsettings; i++)
            fprintf(f, "  %-26s %s (default %s)\n", vt_settings[i].name, vt_settings[i].meaning, vt_settings[i].dflt);
    }
    fputs("\nexit status: 0 done; 1 a failure (a dump not taken, output not written, out of memory); 2 bad\n"
          "arguments or a bad dump (its file and line said)",
          f);
    if (!strcmp(name, "diff"))
        fputs("; 3 allocated memory grew by more than --fail-on-growth", f);
    if (!strcmp(name, "run"))
        fputs("; otherwise the program's own status (127: it could not be run)", f);
    fputs(".\n", f);
    return 0;
}

/* Edit distance of a and b (short words), for suggestions. */
static size_t vt_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[32];
    if (la >= 31 || lb >= 31)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            if (up + 1 < best)
                best = up + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *vt_verb_suggest(const char *name)
{
    const char *best = NULL;
    size_t bd = 3; /* at most two edits away */
    for (size_t i = 0; i < VT_NVERBS; i++) {
        size_t dd = vt_distance(name, vt_verbs[i].name);
        if (dd < bd) {
            bd = dd;
            best = vt_verbs[i].name;
        }
    }
    return best;
}

int vt_is_verb(const char *name)
{
    return vt_verb(name) != NULL;
}

/* Text for roff: a backslash doubled as \e, a minus as \-, and a line that would start with a dot or a
 * quote made safe. */
static void vt_roff(FILE *f, const char *t)
{
    int bol = 1;
    for (; *t; t++) {
        if (bol && (*t == '.' || *t == '\''))
            fputs("\\&", f);
        bol = *t == '\n';
        if (*t == '\\')
            fputs("\\e", f);
        else if (*t == '-')
            fputs("\\-", f);
        else
            fputc(*t, f);
    }
}

void vt_man(FILE *f)
{
    fprintf(f, ".TH VRAMTRACE 1 \"\" \"vramtrace %s\" \"User Commands\"\n.SH NAME\n", VT_VERSION);
    fputs("vramtrace \\- what holds a GPU process's memory, and whether it is a leak\n.SH SYNOPSIS\n", f);
    for (size_t i = 0; i < VT_NVERBS; i++) {
        fputs(".B vramtrace\n", f);
        vt_roff(f, vt_verbs[i].synopsis);
        fputs("\n.br\n", f);
    }
    fputs(".SH DESCRIPTION\n", f);
    vt_roff(f, "Run a program with libvramtrace.so preloaded (vramtrace run) or preload it yourself; ask the live "
               "process for dumps (vramtrace dump, or its signal); read them: report, diff, trend, html, "
               "metrics. The library records every CUDA allocation with its call site, native and Python, and "
               "what the caching allocators hold.\n");
    fputs(".SH VERBS\n", f);
    for (size_t i = 0; i < VT_NVERBS; i++) {
        const struct vt_verb *v = &vt_verbs[i];
        fputs(".SS ", f);
        vt_roff(f, v->name);
        fputs("\n", f);
        vt_roff(f, v->what);
        fputs("\n", f);
        for (const struct vt_opt *o = v->opts; o < v->opts + 10 && o->flag; o++) {
            fputs(".TP\n.BI \"", f);
            vt_roff(f, o->flag);
            fputs(o->arg ? " \" " : "\"", f);
            if (o->arg)
                vt_roff(f, o->arg);
            fputs("\n", f);
            vt_roff(f, o->help);
            fputs("\n", f);
        }
        if (!strcmp(v->name, "run"))
            for (size_t k = 0; k < vt_nsettings; k++)
                if (vt_settings[k].run_opt) {
                    fputs(".TP\n.B ", f);
                    vt_roff(f, vt_settings[k].run_opt);
                    fputs("\nsets ", f);
                    vt_roff(f, vt_settings[k].name);
                    fputs("\n", f);
                }
    }
    fputs(".SH ENVIRONMENT\nRead once by the library at start; a bad value is said and its default used "
          "(vramtrace run refuses it).\n",
          f);
    for (size_t k = 0; k < vt_nsettings; k++) {
        fputs(".TP\n.B ", f);
        vt_roff(f, vt_settings[k].name);
        fputs("\n", f);
        vt_roff(f, vt_settings[k].meaning);
        fputs(" (default ", f);
        vt_roff(f, vt_settings[k].dflt);
        fputs(").\n", f);
    }
    fputs(".SH EXIT STATUS\n0 done; 1 a failure (a dump not taken, output not written, out of memory); 2 bad "
          "arguments or a bad dump (its file and line said); 3 (diff) allocated memory grew by more than "
          "\\-\\-fail\\-on\\-growth; run: the program's own status (127: it could not be run).\n"
          ".SH SEE ALSO\n.BR vramtrace (3),\n.BR pprof (1),\n.BR nvidia-smi (1)\n",
          f);
}

void vt_bash_completion(FILE *f)
{
    fputs("# bash completion for vramtrace, written by `vramtrace help --bash-completion` from its help tables.\n"
          "_vramtrace() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} opts=\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W \"",
          f);
    for (size_t i = 0; i < VT_NVERBS; i++)
        fprintf(f, "%s ", vt_verbs[i].name);
    fputs("--version --help\" -- \"$cur\"))\n        return\n    fi\n    case ${COMP_WORDS[1]} in\n", f);
    for (size_t i = 0; i < VT_NVERBS; i++) {
        const struct vt_verb *v = &vt_verbs[i];
        fprintf(f, "    %s) opts=\"", v->name);
        for (const struct vt_opt *o = v->opts; o < v->opts + 10 && o->flag; o++)
            fprintf(f, "%s ", o->flag);
        if (!strcmp(v->name, "run"))
            for (size_t k = 0; k < vt_nsettings; k++)
                if (vt_settings[k].run_opt)
                    fprintf(f, "%s ", vt_settings[k].run_opt);
        fputs("--help\" ;;\n", f);
    }
    fputs("    esac\n"
          "    case $cur in\n"
          "    -*) COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")) ;;\n"
          "    *) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
          "    esac\n"
          "}\n"
          "complete -o default -F _vramtrace vramtrace\n",
          f);
}
