/* A verb of the command, as one row: its name, synopsis and help, its options (each with the field it
 * sets, how its value is read, and what is said when the value is bad), what it does with the other words
 * (dumps, process ids, run's settings) and its function. One parser reads every verb's options
 * (vt_opts.c); the help, the manual page and the bash completion are written from the same rows
 * (vt_help.c). A verb's row lives in its own file, beside its function; tools/vt_verbs.c lists them. */
#ifndef VT_VERB_H
#define VT_VERB_H

#include <stddef.h>

enum vt_opt_kind {
    VT_OPT_FLAG,    /* int, set to 1 */
    VT_OPT_TEXT,    /* const char *, the value */
    VT_OPT_LONG,    /* long in [lo, hi] */
    VT_OPT_INT,     /* int in [lo, hi] */
    VT_OPT_SECONDS, /* double in [lo, hi], or (lo, hi] with open_lo */
    VT_OPT_SIZE,    /* uint64_t, a size such as 100M or 2GiB */
    VT_OPT_CALL,    /* call(args, value): 0, or the exit status (what is wrong said) */
};

struct vt_opt {
    const char *flag, *arg, *help; /* arg NULL: takes no value */
    enum vt_opt_kind kind;
    size_t at;                     /* offsetof the field it sets in the verb's arguments */
    double lo, hi;
    int open_lo;
    const char *bad;               /* the usage error when the value is not one (a printf format; %s the value) */
    int (*call)(void *args, const char *value);
    const char *alias;             /* another spelling ("-q") */
};

/* What a verb's word function says of a word the option rows do not take. */
#define VT_WORD_OPERAND 0 /* one of the verb's operands (a dump): the parser keeps it, in order */
#define VT_WORD_TAKEN (-1) /* taken by the verb itself (a pid it stored, a setting and its value) */

#define VT_MAX_OPTS 10

struct vt_verb {
    const char *name, *synopsis, *what;
    const char *exits;  /* what its exit status can say beyond 0, 1 and 2 ("; 3 ...") */
    size_t size;        /* its arguments' struct, filled from dflt (NULL: zeros) */
    const void *dflt;
    /* A word the rows do not take, at argv[*i] (*i moves past a value it takes): VT_WORD_OPERAND,
     * VT_WORD_TAKEN, or the exit status with the usage error said. */
    int (*word)(void *args, int argc, char **argv, int *i);
    /* The verb itself: its arguments, and the operands in the order given. */
    int (*run)(void *args, char **operands, int n);
    int program_after_dashes; /* "--" ends its options and what follows is a program (run); for the
                                 other verbs a first "--" is dropped and what follows are operands */
    int settings_opts;        /* its help lists the settings' run options (common/vt_settings.c) */
    struct vt_opt opts[VT_MAX_OPTS];
};

/* Every verb, in the order the usage lists them (tools/vt_verbs.c). */
extern const struct vt_verb *const vt_verbs[];
extern const size_t vt_nverbs;
const struct vt_verb *vt_verb_named(const char *name);

/* Reads argv[1..argc) by v's rows into a fresh copy of its arguments and runs it. */
int vt_verb_main(const struct vt_verb *v, int argc, char **argv);

#endif
