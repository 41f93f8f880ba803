/* What the command says of itself: its version, the synopsis of every verb, and each verb's help (every
 * option, the setting it maps to, the exit codes), from one table. A verb given slightly wrong gets the
 * nearest one suggested. `vramtrace run`'s options that set a VRAMTRACE_* setting come from the settings
 * table itself (common/vt_settings.c), so its help cannot miss one. */
#include <stdio.h>
#include <string.h>

#include "vt_help.h"
#include "vt_verb.h"
#include "vt_settings.h"
#include "vt_version.h"

/* "help" is not a verb of the table (it is the dispatcher's own) but is listed with them. */
static const char *const vt_help_synopsis = "help [VERB]", *const vt_help_what = "This text, or a verb's.";

void vt_version(FILE *f)
{
    fprintf(f, "vramtrace %s%s%s\n", VT_VERSION, VT_REVISION[0] ? " (git " : "", VT_REVISION[0] ? VT_REVISION ")" : "");
}

void vt_usage(FILE *f)
{
    fputs("usage: vramtrace VERB [OPTIONS] ...\n\n", f);
    for (size_t i = 0; i < vt_nverbs; i++)
        fprintf(f, "  vramtrace %s\n", vt_verbs[i]->synopsis);
    fprintf(f, "  vramtrace %s\n", vt_help_synopsis);
    fputs("\n  vramtrace --version\n  vramtrace help VERB   (or VERB --help): every option of a verb\n", f);
}

static void vt_opt_line(FILE *f, const char *flag, const char *arg, const char *help)
{
    char left[64];
    snprintf(left, sizeof left, "%s%s%s", flag, arg ? " " : "", arg ? arg : "");
    fprintf(f, "  %-24s %s\n", left, help);
}

int vt_help_verb(FILE *f, const char *name)
{
    if (!strcmp(name, "help")) {
        fprintf(f, "usage: vramtrace %s\n\n%s\n\noptions (--opt=value works too):\n", vt_help_synopsis, vt_help_what);
    } else {
        const struct vt_verb *v = vt_verb_named(name);
        if (!v)
            return -1;
        fprintf(f, "usage: vramtrace %s\n\n%s\n\noptions (--opt=value works too):\n", v->synopsis, v->what);
        for (const struct vt_opt *o = v->opts; o < v->opts + VT_MAX_OPTS && o->flag; o++)
            vt_opt_line(f, o->flag, o->arg, o->help);
    }
    const struct vt_verb *v = vt_verb_named(name);
    if (v && v->settings_opts) {
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
    if (v && v->exits)
        fputs(v->exits, f);
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
    for (size_t i = 0; i <= vt_nverbs; i++) {
        const char *verb = i < vt_nverbs ? vt_verbs[i]->name : "help";
        size_t dd = vt_distance(name, verb);
        if (dd < bd) {
            bd = dd;
            best = verb;
        }
    }
    return best;
}

int vt_is_verb(const char *name)
{
    return vt_verb_named(name) || !strcmp(name, "help");
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
    for (size_t i = 0; i <= vt_nverbs; i++) {
        fputs(".B vramtrace\n", f);
        vt_roff(f, i < vt_nverbs ? vt_verbs[i]->synopsis : vt_help_synopsis);
        fputs("\n.br\n", f);
    }
    fputs(".SH DESCRIPTION\n", f);
    vt_roff(f, "Run a program with libvramtrace.so preloaded (vramtrace run) or preload it yourself; ask the live "
               "process for dumps (vramtrace dump, or its signal); read them: report, diff, trend, html, "
               "metrics. The library records every CUDA allocation with its call site, native and Python, and "
               "what the caching allocators hold.\n");
    fputs(".SH VERBS\n", f);
    for (size_t i = 0; i < vt_nverbs; i++) {
        const struct vt_verb *v = vt_verbs[i];
        fputs(".SS ", f);
        vt_roff(f, v->name);
        fputs("\n", f);
        vt_roff(f, v->what);
        fputs("\n", f);
        for (const struct vt_opt *o = v->opts; o < v->opts + VT_MAX_OPTS && o->flag; o++) {
            fputs(".TP\n.BI \"", f);
            vt_roff(f, o->flag);
            fputs(o->arg ? " \" " : "\"", f);
            if (o->arg)
                vt_roff(f, o->arg);
            fputs("\n", f);
            vt_roff(f, o->help);
            fputs("\n", f);
        }
        if (v->settings_opts)
            for (size_t k = 0; k < vt_nsettings; k++)
                if (vt_settings[k].run_opt) {
                    fputs(".TP\n.B ", f);
                    vt_roff(f, vt_settings[k].run_opt);
                    fputs("\nsets ", f);
                    vt_roff(f, vt_settings[k].name);
                    fputs("\n", f);
                }
    }
    fprintf(f, ".SS help\n%s\n", vt_help_what);
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
    fputs(".SH EXAMPLES\n"
          "A leak hunt on a live server: two dumps some traffic apart, then what grew.\n"
          ".PP\n.nf\n"
          "vramtrace run \\-\\-dir /tmp/vt \\-\\- python serve.py &\n"
          "vramtrace dump $PID          # after warm-up\n"
          "vramtrace dump $PID          # later\n"
          "vramtrace diff /tmp/vt/vramtrace.$PID.1.dump /tmp/vt/vramtrace.$PID.2.dump\n"
          "vramtrace trend /tmp/vt/vramtrace.$PID.*.dump\n"
          ".fi\n.PP\n"
          "Where the memory is, and what it was at its peak; as JSON; as a web page:\n"
          ".PP\n.nf\n"
          "vramtrace report /tmp/vt/vramtrace.$PID.2.dump\n"
          "vramtrace report \\-\\-json /tmp/vt/vramtrace.$PID.2.dump\n"
          "vramtrace html \\-o report.html /tmp/vt/vramtrace.$PID.*.dump\n"
          ".fi\n.PP\n"
          "Prometheus metrics of a live process, for node_exporter's textfile collector:\n"
          ".PP\n.nf\n"
          "vramtrace metrics \\-\\-textfile /var/lib/node_exporter/textfile/vramtrace.prom $PID\n"
          ".fi\n",
          f);
    fputs(".SH FILES\n"
          "The JSON outputs are described in JSON.md, the dump format in FORMAT.md, both installed in\n"
          ".IR PREFIX /share/doc/vramtrace\n"
          "(the source tree's docs/); alerting rules for the metrics in\n"
          ".IR PREFIX /share/doc/vramtrace/vramtrace-alerts.yml .\n",
          f);
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
    for (size_t i = 0; i < vt_nverbs; i++)
        fprintf(f, "%s ", vt_verbs[i]->name);
    fprintf(f, "help ");
    fputs("--version --help\" -- \"$cur\"))\n        return\n    fi\n    case ${COMP_WORDS[1]} in\n", f);
    for (size_t i = 0; i <= vt_nverbs; i++) {
        const struct vt_verb *v = i < vt_nverbs ? vt_verbs[i] : NULL;
        fprintf(f, "    %s) opts=\"", v ? v->name : "help");
        for (const struct vt_opt *o = v ? v->opts : NULL; o && o < v->opts + VT_MAX_OPTS && o->flag; o++)
            fprintf(f, "%s ", o->flag);
        if (v && v->settings_opts)
            for (size_t k = 0; k < vt_nsettings; k++)
                if (vt_settings[k].run_opt)
                    fprintf(f, "%s ", vt_settings[k].run_opt);
        fputs("--help\" ;;\n", f);
    }
    /* help's argument is a verb, not a file. */
    fputs("    esac\n"
          "    case $cur in\n"
          "    -*) COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")) ;;\n"
          "    *) if [ \"${COMP_WORDS[1]}\" = help ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
          "           COMPREPLY=($(compgen -W \"",
          f);
    for (size_t i = 0; i < vt_nverbs; i++)
        fprintf(f, "%s ", vt_verbs[i]->name);
    fputs("\" -- \"$cur\"))\n"
          "       else\n"
          "           COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "       fi ;;\n"
          "    esac\n"
          "}\n"
          "complete -o default -F _vramtrace vramtrace\n",
          f);
}
