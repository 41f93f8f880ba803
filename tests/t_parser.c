/* The dump reader on good and bad input: a dump the library wrote reads back; a missing file, a
 * non-dump, a truncated dump, a newer format and a garbage field are each rejected with the file and
 * line, by the reader and by `vramtrace report` (exit 2, one line). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fwrite(text, 1, len, f);
        fclose(f);
    }
}

static char good_path[1024];

/* Expects the reader to fail with "path:line:" and a message containing want, and every verb given the
 * file to exit 2 with one line naming it. */
static void expect_bad(const char *dir, const char *name, const char *text, size_t len, int line, const char *want)
{
    char path[1024], prefix[1100], err[600];
    struct vt_dumpfile d;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (text)
        write_file(path, text, len);
    int r = vt_dumpfile_read(path, &d, err, sizeof err);
    snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
    ok(r == -1 && (line < 0 || !strncmp(err, prefix, strlen(prefix))) && strstr(err, want), "%s rejected: %s", name, err);

    const char *verbs[3][6] = {
        {"report", path, NULL},
        {"diff", good_path, path, NULL},
        {"trend", good_path, good_path, path, "--json", NULL},
    };
    for (int v = 0; v < 3; v++) {
        struct run rr;
        run_prog(&rr, "../vramtrace", verbs[v], NULL, 0);
        ok(rr.status == 2 && count_lines(rr.err, "vramtrace: ") == 1 && strstr(rr.err, path) && !rr.out[0],
           "vramtrace %s on %s: exit 2, one line naming the file", verbs[v][0], name);
        run_free(&rr);
    }
}

int main(void)
{
    struct run r;
    const char *args[] = {"direct", NULL};
    run_prog(&r, "prog_driver", args, NULL, 1);
    char path[1024];
    snprintf(path, sizeof path, "%s/vramtrace.%ld.1.dump", r.dir, r.pid);
    snprintf(good_path, sizeof good_path, "%s", path);
    struct vt_dumpfile d;
    char err[600];
    ok(vt_dumpfile_read(path, &d, err, sizeof err) == 0, "a dump written by the library reads back");
    ok(d.nmodules > 3 && d.nstacks >= 1 && d.nframes >= 1 && d.nallocs == 1, "with modules, stacks, frames, allocations");
    int has_build_id = 0;
    for (size_t i = 0; i < d.nmodules; i++)
        has_build_id |= strstr(d.modules[i].path, "libcuda.so.1") && strcmp(d.modules[i].build_id, "-");
    ok(has_build_id, "the module map carries build-ids");
    vt_dumpfile_free(&d);

    struct run rep;
    const char *rargs[] = {"report", path, NULL};
    run_prog(&rep, "../vramtrace", rargs, NULL, 0);
    ok(rep.status == 0 && strstr(rep.out, "route_direct_alloc") && strstr(rep.out, "976.6 KiB"),
       "vramtrace report shows the site and its size");
    run_free(&rep);

    char *good = read_text(path);
    ok(good != NULL, "dump text");
    if (!good)
        return tap_done();
    size_t len = strlen(good);
    int lines = count_lines(good, "");

    expect_bad(r.dir, "missing.dump", NULL, 0, -1, "No such file");
    expect_bad(r.dir, "empty.dump", "", 0, 1, "empty file");
    expect_bad(r.dir, "text.dump", "hello world\n", 12, 1, "not a vramtrace dump");
    /* Truncated: everything but the closing line. */
    expect_bad(r.dir, "truncated.dump", good, len - 4, lines, "no closing 'end'");
    /* Cut inside a line. */
    expect_bad(r.dir, "cut.dump", good, len / 2, -1, "");
    char *newer = strdup(good);
    newer[15] = '9'; /* "vramtrace-dump 1" -> "vramtrace-dump 9" */
    expect_bad(r.dir, "newer.dump", newer, len, 1, "newer than this reader");
    free(newer);
    char *bad = malloc(len + 512);
    char *at = strstr(good, "\nalloc ");
    size_t head = (size_t)(at - good) + 1;
    int at_line = count_lines(good, "") - count_lines(at + 1, "") + 1; /* the first alloc line */
    /* The good dump with text put in before its first alloc line; the error expected line_in lines
     * into that text. */
#define INSERTED(name, text, line_in, want)                                                          \
    do {                                                                                           \
        memcpy(bad, good, head);                                                                   \
        int n_ = sprintf(bad + head, "%s", text);                                                  \
        memcpy(bad + head + n_, good + head, len - head);                                          \
        expect_bad(r.dir, name, bad, len + (size_t)n_, at_line + (line_in), want);                 \
    } while (0)
    INSERTED("garbage.dump", "alloc 0x10 12x device cuMemAlloc_v2 0 0x0 0x0 0x0 0 1 1 1 1\n", 0, "not a number: '12x'");
    memcpy(bad, good, len);
    memcpy(bad + len, "alloc\n", 6);
    expect_bad(r.dir, "after-end.dump", bad, len + 6, lines + 1, "after the closing 'end'");
    INSERTED("unknown.dump", "bogus 1 2 3\n", 0, "unknown record 'bogus'");
    INSERTED("kind.dump", "alloc 0x10 12 devicex cuMemAlloc_v2 0 0x0 0x0 0x0 0 0 1 1 1\n", 0,
             "unknown allocation kind 'devicex'");
    INSERTED("nostack.dump", "alloc 0x10 12 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 987654 1 1 1\n", 0,
             "refers to stack 987654");
    /* The caching allocators' records. */
    INSERTED("orphan-block.dump", "block 0x1000 16 16 active_allocated 0\n", 0, "a block before any segment");
    INSERTED("outside.dump", "segment 0x1000 4096 0 torch small 0.0 fixed\nblock 0x3000 16 16 active_allocated 0\n", 1,
             "is not inside its segment");
    INSERTED("state.dump", "segment 0x1000 4096 0 torch small 0.0 fixed\nblock 0x1000 16 16 weird 0\n", 1,
             "unknown block state 'weird'");
    INSERTED("nopystack.dump", "segment 0x1000 4096 0 torch small 0.0 fixed\nblock 0x1000 16 16 active_allocated 7\n", 1,
             "refers to pystack 7");
    INSERTED("nopyframe.dump", "pystack 1 1 5\n", 0, "refers to pyframe 5");
    INSERTED("segkind.dump", "segment 0x1000 4096 0 torch small 0.0 stretchy\n", 0, "expandable or fixed");
    INSERTED("python.dump", "python ok 1\n", 0, "'python' record needs");
    INSERTED("twopython.dump", "python ok 1 2 -\npython ok 1 2 -\n", 1, "a second 'python' record");
    /* Version 3: Python call sites. */
    INSERTED("capture.dump", "interpreter 3.12.1 maybe 0x1000 0x2000\n", 0, "must be on, off or unsupported, not 'maybe'");
    INSERTED("interp-fields.dump", "interpreter 3.12.1 on 0x1000\n", 0, "");
    INSERTED("interp-range.dump", "interpreter 3.12.1 on 0x2000 0x1000\n", 0, "ends before it starts");
    INSERTED("twointerp.dump", "interpreter 3.12.1 on 0x1 0x2\ninterpreter 3.12.1 on 0x1 0x2\n", 1,
             "a second 'interpreter' record");
    INSERTED("stack-nopy.dump", "stack 99 1 0x10\n", 0, "stack 99 says 1 frames but has 0");
    INSERTED("stack-pystack.dump", "stack 99 1 0x10 42\n", 0, "refers to pystack 42");
    INSERTED("stack-empty.dump", "stack 99 0 0\n", 0, "stack 99 has no frames");
    /* Never counted twice, never wrapped, never an impossible figure. */
    INSERTED("dup-alloc.dump",
             "alloc 0x10 12 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 0 1 1 1\nalloc 0x10 12 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 0 2 1 1\n",
             1, "allocation 0x10 is listed twice");
    INSERTED("huge.dump", "alloc 0x10 18446744073709551615 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 0 1 1 1\n", 0,
             "impossible size");
    INSERTED("big.dump", "alloc 0x10 9223372036854775807 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 0 1 1 1\n", 0,
             "impossible size");
    INSERTED("overfull.dump",
             "device 0 85899345920 - 0 0 - - -\n"
             "alloc 0x10 562949953421312 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 0 1 1 1\n"
             "alloc 0x20 562949953421312 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 0 2 1 1\n",
             1, "more than the 85899345920 the device has");
    INSERTED("dup-device.dump", "device 0 - - 0 0 - - -\ndevice 0 - - 0 0 - - -\n", 1, "device 0 is listed twice");
    INSERTED("dup-counter.dump", "counter dropped 1\n", 0, "counter 'dropped' is listed twice");
    INSERTED("dup-exe.dump", "exe /bin/other\n", 0, "a second 'exe' record");
#undef INSERTED
    /* The same number in two address spaces is two things, as in the library (common/vt_format.h, VT_KINDS):
     * a device pointer and an array handle, a registered host range, an external memory handle. */
    {
        const char *spaces = "alloc 0x10 12 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 0 1 1 1\n"
                             "alloc 0x10 64 array cuArrayCreate_v2 0 0x0 0x0 0x0 0 0 2 1 1\n"
                             "alloc 0x10 4096 host_registered cuMemHostRegister_v2 -1 0x0 0x0 0x0 0 0 3 1 1\n"
                             "alloc 0x10 256 external cuImportExternalMemory 0 0x0 0x0 0x0 0 0 4 1 1\n";
        char spath[1024], err[600] = "";
        snprintf(spath, sizeof spath, "%s/spaces.dump", r.dir);
        memcpy(bad, good, head);
        int n = sprintf(bad + head, "%s", spaces);
        memcpy(bad + head + n, good + head, len - head);
        write_file(spath, bad, len + (size_t)n);
        struct vt_dumpfile sd;
        int sr = vt_dumpfile_read(spath, &sd, err, sizeof err);
        ok(sr == 0, "one number in four address spaces is four entries, not a duplicate: %s", err);
        if (sr == 0)
            vt_dumpfile_free(&sd);
    }
    /* Windows line endings: named as such, not as a bad number. */
    char *crlf = malloc(2 * len + 1);
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (good[i] == '\n')
            crlf[k++] = '\r';
        crlf[k++] = good[i];
    }
    expect_bad(r.dir, "crlf.dump", crlf, k, 1, "carriage return");
    free(crlf);
    /* Not a dump at all, and endless: /dev/zero is refused at once, not read forever. */
    {
        char err2[600];
        struct vt_dumpfile z;
        ok(vt_dumpfile_read("/dev/zero", &z, err2, sizeof err2) == -1 &&
               strstr(err2, "/dev/zero: not a regular file (a device): not read"),
           "/dev/zero refused before a byte is read (a device: it would never end): %s", err2);
        struct run rz;
        const char *zargs[] = {"report", "/dev/zero", NULL};
        run_prog(&rz, "../vramtrace", zargs, NULL, 0);
        ok(rz.status == 2 && count_lines(rz.err, "vramtrace: ") == 1, "vramtrace report /dev/zero: exit 2, one line");
        run_free(&rz);
    }
    /* Names in a dump are escaped (format 6): a raw byte that is not UTF-8, or a control character, is a
     * forged or damaged file, rejected with its line; the escaped form reads, and --json shows it as it
     * is, valid UTF-8. */
    {
        char *exe = strstr(good, "\nexe ");
        size_t cut = (size_t)(exe - good) + 5;
        char *eol = strchr(good + cut, '\n');
        const char *names[] = {"/tmp/\xff\xfe\xc3(bin", "/tmp/a\x1b[31mred", "/tmp/\\xff\\xfe\\xc3(bin"};
        for (int k = 0; k < 3; k++) {
            size_t nl = strlen(names[k]);
            char *odd = malloc(len + nl + 1);
            memcpy(odd, good, cut);
            memcpy(odd + cut, names[k], nl);
            memcpy(odd + cut + nl, eol, len - (size_t)(eol - good));
            size_t olen = cut + nl + len - (size_t)(eol - good);
            char opath[1100];
            snprintf(opath, sizeof opath, "%s/names%d.dump", r.dir, k);
            write_file(opath, odd, olen);
            free(odd);
            struct run rj;
            const char *jargs[] = {"report", opath, "--json", NULL};
            run_prog(&rj, "../vramtrace", jargs, NULL, 0);
            if (k < 2) {
                ok(rj.status == 2 && strstr(rj.err, ":4: a control character, a byte that is not UTF-8"),
                   "a raw %s in a format-6 name: rejected at its line (%s)", k ? "escape sequence" : "non-UTF-8 byte",
                   rj.err);
            } else {
                int valid = 1;
                for (const unsigned char *c = (const unsigned char *)rj.out; *c; c++)
                    valid &= *c < 0x80 && *c != 0x1b;
                ok(rj.status == 0 && valid && strstr(rj.out, "\"exe\":\"/tmp/\\\\xff\\\\xfe\\\\xc3(bin\""),
                   "an escaped name reads, and --json shows it escaped (%s)", rj.err);
            }
            run_free(&rj);
        }
    }
    /* Output that cannot be written is an error, not exit 0. */
    {
        char line[1400];
        struct run rf;
        snprintf(line, sizeof line, "%s/vramtrace report %s > /dev/full", build_dir(), good_path);
        const char *fargs[] = {"-c", line, NULL};
        run_prog(&rf, "/bin/sh", fargs, NULL, 0);
        ok(rf.status == 1 && strstr(rf.err, "cannot write the output"), "report > /dev/full: exit 1, said (%s)", rf.err);
        run_free(&rf);
    }
    free(bad);
    free(good);
    run_free(&r);
    return tap_done();
}
