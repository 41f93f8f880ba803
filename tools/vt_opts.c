/* vt_verb.h: the one option parser. An option with a value takes the next word (--opt=value was split
 * before, vramtrace.c); an option whose value is missing is an unexpected word, as any other the rows
 * do not take and the verb does not want. */
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vt_cmd.h"
#include "vt_units.h"
#include "vt_verb.h"

static const struct vt_opt *vt_opt_of(const struct vt_verb *v, const char *w)
{
    for (const struct vt_opt *o = v->opts; o < v->opts + VT_MAX_OPTS && o->flag; o++)
        if (!strcmp(w, o->flag) || (o->alias && !strcmp(w, o->alias)))
            return o;
    return NULL;
}

/* Sets o's field from value: 0, or the exit status with the usage error said. */
static int vt_opt_set(const struct vt_verb *v, const struct vt_opt *o, void *args, const char *value)
{
    char *field = (char *)args + o->at, *end;
    switch (o->kind) {
    case VT_OPT_FLAG:
        *(int *)field = 1;
        return 0;
    case VT_OPT_TEXT:
        *(const char **)field = value;
        return 0;
    case VT_OPT_LONG:
    case VT_OPT_INT: {
        long n = strtol(value, &end, 10);
        if (*end || n < o->lo || n > o->hi)
            return vt_usage_error(v->name, o->bad, value);
        if (o->kind == VT_OPT_INT)
            *(int *)field = (int)n;
        else
            *(long *)field = n;
        return 0;
    }
    case VT_OPT_SECONDS: {
        double s = strtod(value, &end);
        if (*end || !(o->open_lo ? s > o->lo : s >= o->lo) || !(s <= o->hi))
            return vt_usage_error(v->name, o->bad, value);
        *(double *)field = s;
        return 0;
    }
    case VT_OPT_SIZE:
        if (vt_parse_size(value, (uint64_t *)field) < 0)
            return vt_usage_error(v->name, o->bad, value);
        return 0;
    case VT_OPT_CALL:
        return o->call(args, value);
    }
    return VT_EXIT_USAGE;
}

int vt_verb_main(const struct vt_verb *v, int argc, char **argv)
{
    void *args = calloc(1, v->size ? v->size : 1);
    char **operands = calloc((size_t)argc + 1, sizeof *operands);
    int n = 0, rc = 0, dropped = 0;
    if (!args || !operands) {
        free(args);
        free(operands);
        fputs("vramtrace: out of memory\n", stderr);
        return 1;
    }
    if (v->dflt)
        memcpy(args, v->dflt, v->size);
    int i = 1;
    for (; i < argc && !rc; i++) {
        if (!strcmp(argv[i], "--") && (v->program_after_dashes || !dropped)) {
            if (v->program_after_dashes)
                break;
            dropped = 1;
            continue;
        }
        const struct vt_opt *o = vt_opt_of(v, argv[i]);
        if (o && (!o->arg || i + 1 < argc)) {
            rc = vt_opt_set(v, o, args, o->arg ? argv[++i] : NULL);
            continue;
        }
        int w = v->word(args, argc, argv, &i);
        if (w == VT_WORD_OPERAND)
            operands[n++] = argv[i];
        else if (w != VT_WORD_TAKEN)
            rc = w;
    }
    if (!rc && v->program_after_dashes)
        for (i++; i < argc; i++) /* past the "--": the program and its arguments */
            operands[n++] = argv[i];
    if (!rc)
        rc = v->run(args, operands, n);
    free(args);
    free(operands);
    return rc;
}
