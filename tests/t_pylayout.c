/* The frame walk's knowledge of CPython (lib/stacks/vt_pylayout.c, lib/stacks/vt_pylines.c) against each interpreter
 * on the machine: its struct offsets against the ones its own headers give (tests/progs/py_layout.c
 * compiled against them), its line tables read as the interpreter's PyCode_Addr2Line reads them for
 * every instruction of a few standard modules (tests/progs/py_lines.py), and, for 3.13, the offsets the
 * interpreter publishes at run time. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "vt_pylayout.h"
#include "vt_pywalk.h"

struct interp {
    char python[256], include[256], tag[32];
};

/* The interpreters to check: the system's (with its -dev headers) and pyenv's 3.9 to 3.13. */
static int interpreters(struct interp *out, int max)
{
    int n = 0;
    glob_t g;
    if (glob("/usr/include/python3.*/Python.h", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc && n < max; i++) {
            char *inc = strdup(g.gl_pathv[i]);
            *strrchr(inc, '/') = 0;
            snprintf(out[n].include, sizeof out[n].include, "%s", inc);
            snprintf(out[n].python, sizeof out[n].python, "/usr/bin/%s", strrchr(inc, '/') + 1);
            snprintf(out[n].tag, sizeof out[n].tag, "system %s", strrchr(inc, '/') + 1);
            free(inc);
            n++;
        }
        globfree(&g);
    }
    for (int minor = 9; minor <= 13 && n < max; minor++) {
        char pat[128];
        snprintf(pat, sizeof pat, "/root/.pyenv/versions/3.%d.*/include/python3.%d", minor, minor);
        if (glob(pat, 0, NULL, &g) != 0 || !g.gl_pathc) {
            skip("CPython 3.%d: not on this machine (%s)", minor, pat);
            continue;
        }
        snprintf(out[n].include, sizeof out[n].include, "%s", g.gl_pathv[0]);
        snprintf(out[n].python, sizeof out[n].python, "%.*s/bin/python3.%d",
                 (int)(strstr(g.gl_pathv[0], "/include/") - g.gl_pathv[0]), g.gl_pathv[0], minor);
        snprintf(out[n].tag, sizeof out[n].tag, "CPython 3.%d", minor);
        globfree(&g);
        n++;
    }
    return n;
}

/* The value of "name N" in text; -1 when absent. */
static long field(const char *text, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, name, len) && p[len] == ' ')
            return strtol(p + len + 1, NULL, 10);
    return -1;
}

static void check_offsets(const struct interp *in)
{
    char exe[700], cmd[2000];
    snprintf(exe, sizeof exe, "%s/tests/py_layout_%s", build_dir(), strrchr(in->include, '/') + 1);
    snprintf(cmd, sizeof cmd, "cc -o %s -I%s %s/../tests/progs/py_layout.c 2>&1", exe, in->include, build_dir());
    if (!ok(system(cmd) == 0, "%s: the probe compiles against its headers", in->tag))
        return;
    struct run r;
    run_prog(&r, exe, NULL, NULL, 0);
    long minor = field(r.out, "minor");
    const struct vt_pylayout *l = vt_pylayout_for((int)minor);
    if (!ok(r.status == 0 && l, "%s: vramtrace has a layout for 3.%ld", in->tag, minor)) {
        run_free(&r);
        return;
    }
    const struct { const char *name; long mine; } fields[] = {
        {"ts_frame", l->ts_frame},           {"ts_cframe", l->ts_cframe},         {"cframe_current", l->cframe_current},
        {"frame_back", l->frame_back},       {"frame_code", l->frame_code},       {"frame_instr", l->frame_instr},
        {"frame_owner", l->frame_owner},     {"code_filename", l->code_filename}, {"code_name", l->code_name},
        {"code_qualname", l->code_qualname}, {"code_firstlineno", l->code_firstlineno},
        {"code_linetable", l->code_linetable}, {"code_adaptive", l->code_adaptive},
        {"code_firsttraceable", l->code_firsttraceable}, {"ascii_size", l->ascii_size},
        {"compact_size", l->compact_size},   {"unicode_state", l->unicode_state}, {"unicode_length", l->unicode_length},
        {"bytes_size", l->bytes_size},       {"bytes_data", l->bytes_data},       {"ob_type", 8},
        {"rt_initialized", l->rt_initialized}, {"rt_finalizing", l->rt_finalizing}, {"rt_tss_key", l->rt_tss_key},
    };
    int same = 1;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        long theirs = field(r.out, fields[i].name);
        if (theirs != fields[i].mine) {
            diag("%s: %s is %ld in the headers, %ld in vramtrace", in->tag, fields[i].name, theirs, fields[i].mine);
            same = 0;
        }
    }
    ok(same, "%s: every offset the walk reads is the headers' own", in->tag);
    if (minor >= 11)
        ok(field(r.out, "owned_by_generator") == VT_OWNED_BY_GENERATOR &&
               (minor < 12 || field(r.out, "owned_by_cstack") == VT_OWNED_BY_CSTACK),
           "%s: the frame owners are the headers' own", in->tag);
    run_free(&r);
}

static void check_lines(const struct interp *in)
{
    char script[700], lib[700];
    snprintf(script, sizeof script, "%s/../tests/progs/py_lines.py", build_dir());
    snprintf(lib, sizeof lib, "%s/tests/libpy_lines.so", build_dir());
    const char *args[] = {script, lib, NULL};
    struct run r;
    run_prog(&r, in->python, args, NULL, 0);
    long checked = field(r.out, "checked");
    const char *m = strstr(r.out, "mismatched ");
    long mismatched = m ? strtol(m + 11, NULL, 10) : -1;
    if (!ok(r.status == 0 && checked > 10000 && mismatched == 0,
            "%s: %ld instructions' lines, every one as PyCode_Addr2Line gives it", in->tag, checked))
        diag("status %d\n%s%s", r.status, r.out, r.err);
    if (strstr(in->tag, "3.13"))
        ok(strstr(r.out, "published agree\n") != NULL, "%s: the offsets it publishes agree with vramtrace's", in->tag);
    run_free(&r);
}

int main(void)
{
    struct interp in[8];
    int n = interpreters(in, 8);
    ok(n >= 1, "at least one CPython with its headers on this machine (%d)", n);
    for (int i = 0; i < n; i++) {
        check_offsets(&in[i]);
        check_lines(&in[i]);
    }
    char zero[512] = {0};
    const struct vt_pylayout *l13 = vt_pylayout_for(13);
    const char *why = vt_pylayout_check_published(l13, zero);
    ok(why && strstr(why, "publishes no frame offsets"), "memory without the cookie: not taken for published offsets");
    ok(vt_pylayout_for(8) == NULL && vt_pylayout_for(14) == NULL, "no layout for 3.8 or 3.14: those are not walked");

    /* The careful walk, which checks a layout before it is trusted, on memory that is no thread state:
     * pointers into nowhere and unmapped addresses fail the walk, never the program. */
    ok(vt_pywalk_can_check(), "careful reads (through a pipe) work here");
    static const struct vt_pytypes types = {(const void *)0x1000, (const void *)0x2000, (const void *)0x3000};
    uintptr_t garbage[64], key[2 * 32];
    unsigned seed = 7;
    for (int i = 0; i < 64; i++)
        garbage[i] = (uintptr_t)rand_r(&seed) << 24 | 0x10; /* aligned, almost surely unmapped */
    int failed = 0;
    for (int minor = 9; minor <= 13; minor++) {
        uint64_t h;
        const struct vt_pylayout *l = vt_pylayout_for(minor);
        failed += vt_pywalk(l, &types, garbage, key, 32, &h, 1, NULL) < 0;
        failed += vt_pywalk(l, &types, (const void *)0x1000, key, 32, &h, 1, NULL) < 0;
        char *file, *func;
        failed += vt_pywalk_names(l, &types, (uintptr_t)garbage, &file, &func, 1) < 0;
        key[0] = (uintptr_t)garbage;
        key[1] = 0;
        failed += vt_pywalk_line(l, &types, key, 0, 1) < 0;
    }
    is_u64((uint64_t)failed, 20, "3.9 to 3.13: a careful walk, names and line over garbage fail, 20 of 20, no crash");
    return tap_done();
}
