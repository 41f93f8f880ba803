/* The VRAMTRACE_* settings: one table (name, the option of `vramtrace run` that sets it, type, range,
 * default, meaning) and one parser, shared by the library, which reads them once at start, and the
 * command, which checks them before it starts a program. Every value is parsed strictly: decimal
 * numbers only (no sign, exponent or hex), and a range for each. */
#ifndef VT_SETTINGS_H
#define VT_SETTINGS_H

#include <stddef.h>

enum vt_setting_type {
    VT_SET_BOOL,   /* on/off, 1/0, yes/no, true/false */
    VT_SET_INT,    /* a whole number in [lo, hi] */
    VT_SET_NUMBER, /* a decimal number in [lo, hi]; zero_off: 0 is also allowed and means off */
    VT_SET_SIGNAL, /* a signal name or number vramtrace may use, or none */
    VT_SET_DIR,    /* an existing directory the process can write in */
    VT_SET_FILE,   /* a file to write, in an existing directory the process can write in */
    VT_SET_CHOICE, /* one of the words choices[] (its index); on and off as for BOOL: the last, the first */
    VT_SET_NAMES,  /* names apart by commas (function names), printable, at most VT_SET_NAMES_MAX bytes */
};

struct vt_setting {
    const char *name;    /* VRAMTRACE_... */
    const char *run_opt; /* vramtrace run's option for it, or NULL */
    enum vt_setting_type type;
    double lo, hi;
    int zero_off;
    const char *dflt;    /* the default as the user would write it */
    const char *unit;    /* for numbers: "seconds", "ms", ... */
    const char *meaning; /* one line, for messages and help */
    const char *const *choices; /* VT_SET_CHOICE: the words, NULL-terminated */
};

#define VT_SET_NAMES_MAX 1023

/* VRAMTRACE_TORCH_HISTORY's values. */
enum { VT_HISTORY_OFF, VT_HISTORY_DUMP, VT_HISTORY_ALWAYS };

extern const struct vt_setting vt_settings[];
extern const size_t vt_nsettings;

/* The setting called name (VRAMTRACE_X), or the one vramtrace run sets with opt (--x); NULL if none. */
const struct vt_setting *vt_setting_find(const char *name);
const struct vt_setting *vt_setting_for_opt(const char *opt);

/* A plain decimal number (digits, at most one '.'): no sign, exponent, hex, inf or nan. 0, or -1. */
int vt_parse_decimal(const char *v, double *out);

/* Parses v for s into *num (bool, int, number, signal) or checks the directory. Returns 0, or -1
 * with a sentence saying why in why (without the name, e.g. "is not a number of seconds from 1 to
 * 31536000 (0: off)"). */
int vt_setting_parse(const struct vt_setting *s, const char *v, double *num, char *why, size_t len);

#endif
