/* libFuzzer target: any bytes given to the dump reader must give either a dump or an error message that
 * names the file, never a crash, a leak or undefined behaviour; and a dump that reads is then rendered by
 * the verbs themselves in every output (text, JSON, folded, Prometheus, pprof, HTML), each of which must
 * be valid for every input: text and folded stacks valid UTF-8 with no control character but newlines,
 * JSON that parses (vt_json_check.c), Prometheus lines that are valid UTF-8 with well-quoted labels, an
 * HTML page whose data holds no '<' or '>' and parses as JSON. `make fuzz` runs it for long, make test
 * briefly (tests/t_fuzz.sh). */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vt_cmd.h"
#include "vt_dumpfile.h"
#include "vt_json_check.h"
#include "vt_model.h"
#include "vt_symbols.h"
#include "vt_text.h"
#include "vt_verb.h"

/* The whole of a memory file. */
static char *vt_slurp(int fd, size_t *len)
{
    off_t end = lseek(fd, 0, SEEK_END);
    char *buf = malloc((size_t)(end > 0 ? end : 0) + 1);
    if (!buf)
        abort();
    *len = end > 0 ? (size_t)pread(fd, buf, (size_t)end, 0) : 0;
    buf[*len] = 0;
    return buf;
}

/* Valid UTF-8, and no control character but a newline (tabs allowed in text). */
static int vt_clean_text(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
                return 0;
            i++;
            continue;
        }
        size_t k = vt_utf8_len((const unsigned char *)s + i, n - i);
        if (!k || (c == 0xc2 && (unsigned char)s[i + 1] < 0xa0))
            return 0;
        i += k;
    }
    return 1;
}

/* Each sample line: NAME{k="v",...} VALUE, a label value with only \\, \" escapes and no raw newline. */
static int vt_clean_prometheus(const char *s, size_t n)
{
    if (!vt_clean_text(s, n))
        return 0;
    for (const char *line = s; line < s + n;) {
        const char *eol = memchr(line, '\n', (size_t)(s + n - line));
        if (!eol)
            return 0; /* every line ends */
        if (*line != '#' && line < eol) {
            const char *p = line;
            while (p < eol && *p != '{' && *p != ' ')
                p++;
            if (p < eol && *p == '{') {
                for (p++; p < eol && *p != '}';) {
                    while (p < eol && *p != '=')
                        p++;
                    if (p + 1 >= eol || p[1] != '"')
                        return 0;
                    for (p += 2; p < eol && *p != '"'; p++)
                        if (*p == '\\' && (++p >= eol || (*p != '\\' && *p != '"' && *p != 'n')))
                            return 0;
                    if (p >= eol)
                        return 0;
                    p++;
                    if (p < eol && *p == ',')
                        p++;
                }
                if (p >= eol)
                    return 0;
            }
        }
        line = eol + 1;
    }
    return 1;
}

/* Runs a verb with its output in a memory file; returns the output (NUL-ended) and its status. */
static char *vt_run_verb(const struct vt_verb *verb, char **argv, int argc, size_t *len, int *status)
{
    int out = memfd_create("fuzz-out", 0), saved = dup(1), err = dup(2), null = open("/dev/null", O_WRONLY);
    if (out < 0 || saved < 0 || err < 0 || null < 0)
        abort();
    fflush(stdout);
    dup2(out, 1);
    dup2(null, 2);
    *status = vt_verb_main(verb, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved, 1);
    dup2(err, 2);
    close(saved);
    close(err);
    close(null);
    char *text = vt_slurp(out, len);
    close(out);
    return text;
}

static void vt_outputs(const char *path, const char *dir)
{
    char p[1100], pb[1100], html[1100];
    snprintf(p, sizeof p, "%s", path);
    snprintf(pb, sizeof pb, "%s/out.pb.gz", dir);
    snprintf(html, sizeof html, "%s/out.html", dir);
    struct {
        const char *flag;
        int kind; /* 0 text, 1 JSON, 2 Prometheus */
    } forms[] = {{NULL, 0}, {"--json", 1}, {"--folded", 0}, {"--prometheus", 2}, {"--full-stacks", 0}};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char *argv[] = {"report", p, (char *)forms[i].flag, NULL};
        size_t len;
        int st;
        char *out = vt_run_verb(vt_verb_named("report"), argv, forms[i].flag ? 3 : 2, &len, &st);
        int ok = st != 0 || (forms[i].kind == 1 ? vt_json_check(out, len) == 0
                             : forms[i].kind == 2 ? vt_clean_prometheus(out, len)
                                                  : vt_clean_text(out, len));
        if (!ok) {
            fprintf(stderr, "invalid output of report %s:\n%s\n", forms[i].flag ? forms[i].flag : "", out);
            __builtin_trap();
        }
        free(out);
    }
    char *pargv[] = {"report", p, "--pprof", pb, NULL};
    size_t len;
    int st;
    free(vt_run_verb(vt_verb_named("report"), pargv, 4, &len, &st));
    char *hargv[] = {"html", "-o", html, p, NULL};
    free(vt_run_verb(vt_verb_named("html"), hargv, 4, &len, &st));
    FILE *f = st == 0 ? fopen(html, "r") : NULL;
    if (f) {
        /* The data: the one JSON object between the page's data marker's neighbours. */
        char *page = NULL;
        size_t cap = 0, n = 0;
        FILE *m = open_memstream(&page, &cap);
        int c;
        while ((c = getc(f)) != EOF)
            putc(c, m);
        fclose(m);
        fclose(f);
        n = cap;
        /* The data: everything between its script element's opening and the next "</script>". */
        const char *open_tag = "id=\"vt-data\">\n";
        const char *start = strstr(page, open_tag);
        if (start)
            start += strlen(open_tag);
        const char *last = start ? strstr(start, "</script>") : NULL;
        size_t dl = start && last ? (size_t)(last - start) : 0;
        if (!start || !last || memchr(start, '<', dl) || memchr(start, '>', dl) || vt_json_check(start, dl) != 0 ||
            !vt_clean_text(page, n)) {
            fprintf(stderr, "invalid HTML data\n");
            __builtin_trap();
        }
        free(page);
    }
    unlink(pb);
    unlink(html);
}

static char vt_dir[1024]; /* the run's scratch folder, removed at exit */

static void vt_rmdir(void)
{
    rmdir(vt_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!vt_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(vt_dir, sizeof vt_dir, "%s/vramtrace-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(vt_dir))
            abort();
        atexit(vt_rmdir);
        vt_model_use_symbolizer(&vt_libdw_symbolizer); /* as the command does */
    }
    const char *dir = vt_dir;
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    struct vt_dumpfile d;
    char err[512];
    int parsed = vt_dumpfile_parse(f, "fuzz.dump", &d, err, sizeof err) == 0;
    if (parsed) {
        struct vt_model m;
        if (vt_model_build(&d, VT_MODEL_NO_SYMBOLS, &m) == 0)
            vt_model_free(&m);
        vt_dumpfile_free(&d);
    } else if (strncmp(err, "fuzz.dump:", 10) != 0) {
        __builtin_trap(); /* every error names the file */
    }
    fclose(f);
    if (parsed) {
        char path[1100];
        snprintf(path, sizeof path, "%s/in.dump", dir);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, data, size) != (ssize_t)size)
            abort();
        close(fd);
        vt_outputs(path, dir);
        unlink(path);
    }
    return 0;
}
