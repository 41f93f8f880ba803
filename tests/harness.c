/* Test harness implementation. Programs run in a child with LD_PRELOAD, LD_LIBRARY_PATH=build/fake
 * and VRAMTRACE_DIR set to a new temporary directory; their output is captured in files there. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static int tap_n, tap_failed;

int ok(int cond, const char *fmt, ...)
{
    va_list ap;
    printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    if (!cond)
        tap_failed++;
    return cond;
}

void diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

void skip(const char *fmt, ...)
{
    va_list ap;
    printf("ok %d # SKIP ", ++tap_n);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

int is_u64(uint64_t got, uint64_t want, const char *name)
{
    int r = ok(got == want, "%s", name);
    if (!r)
        diag("got %llu, want %llu", (unsigned long long)got, (unsigned long long)want);
    return r;
}

int is_str(const char *got, const char *want, const char *name)
{
    int r = ok(got && !strcmp(got, want), "%s", name);
    if (!r)
        diag("got '%s', want '%s'", got ? got : "(null)", want);
    return r;
}

int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}

char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0, got;
    char *s = malloc(cap);
    while (s && (got = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t)
                free(s);
            s = t;
        }
    }
    fclose(f);
    if (s)
        s[n] = 0;
    return s;
}

static char *slurp(const char *path)
{
    char *s = read_text(path);
    return s ? s : strdup("");
}

const char *build_dir(void)
{
    static char dir[1040];
    if (!dir[0]) {
        char self[1024];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = 0;
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        snprintf(dir, sizeof dir, "%s/..", self); /* build/tests/.. */
    }
    return dir;
}

int run_prog(struct run *r, const char *prog, const char *const *args, const char *const *env, int preload)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "/tmp/vramtrace-test.XXXXXX");
    if (!mkdtemp(r->dir))
        return -1;
    char outp[600], errp[600], exe[PATH_MAX], lib[PATH_MAX], fake[PATH_MAX];
    /* build_dir() is at most 1039 bytes, so none of these is cut. */
    snprintf(outp, sizeof outp, "%s/stdout", r->dir);
    snprintf(errp, sizeof errp, "%s/stderr", r->dir);
    if (prog[0] == '/')
        snprintf(exe, sizeof exe, "%s", prog);
    else
        snprintf(exe, sizeof exe, "%s/tests/%s", build_dir(), prog);
    snprintf(lib, sizeof lib, "%s/libvramtrace.so", build_dir());
    snprintf(fake, sizeof fake, "%s/fake:%s/tests", build_dir(), build_dir());
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600), e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(e, 2);
        close(o);
        close(e);
        setenv("LD_LIBRARY_PATH", fake, 1);
        setenv("VRAMTRACE_DIR", r->dir, 1);
        if (chdir(r->dir) != 0)
            _exit(126);
        if (preload)
            setenv("LD_PRELOAD", lib, 1);
        else
            unsetenv("LD_PRELOAD");
        for (const char *const *p = env; p && *p; p++) {
            if (!strncmp(*p, "RLIMIT_NOFILE=", 14) || !strncmp(*p, "RLIMIT_FSIZE=", 13)) {
                struct rlimit rl;
                rl.rlim_cur = rl.rlim_max = strtoull(strchr(*p, '=') + 1, NULL, 10);
                setrlimit((*p)[7] == 'N' ? RLIMIT_NOFILE : RLIMIT_FSIZE, &rl);
            } else if (!strcmp(*p, "STDERR_PIPE_CLOSED=1")) {
                int pp[2];
                if (pipe(pp) == 0) {
                    close(pp[0]);
                    dup2(pp[1], 2);
                    close(pp[1]);
                }
            } else if (!strncmp(*p, "LD_PRELOAD_AFTER=", 17)) {
                char both[2 * PATH_MAX + 16];
                snprintf(both, sizeof both, "%s:%s/tests/%s", lib, build_dir(), *p + 17);
                setenv("LD_PRELOAD", both, 1);
            } else {
                putenv((char *)*p);
            }
        }
        const char *argv[32] = {exe};
        int n = 1;
        for (const char *const *a = args; a && *a && n < 31; a++)
            argv[n++] = *a;
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    r->pid = pid;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->out = slurp(outp);
    r->err = slurp(errp);
    return 0;
}

void run_free(struct run *r)
{
    DIR *d = opendir(r->dir);
    struct dirent *e;
    char path[1024];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        snprintf(path, sizeof path, "%s/%s", r->dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(r->dir);
    free(r->out);
    free(r->err);
}

int load_dump(const char *path, struct vt_dumpfile *d)
{
    char err[600];
    if (vt_dumpfile_read(path, d, err, sizeof err) == 0)
        return 0;
    diag("cannot read dump: %s", err);
    return -1;
}

struct name_key {
    long pid;
    unsigned long seq;
    char name[256];
};

static int key_cmp(const void *a, const void *b)
{
    const struct name_key *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t load_dumps(const struct run *r, struct vt_dumpfile *d, size_t max)
{
    DIR *dir = opendir(r->dir);
    struct name_key *keys = calloc(max, sizeof *keys);
    size_t n = 0;
    struct dirent *e;
    while (dir && keys && (e = readdir(dir)) && n < max) {
        long pid;
        unsigned long seq;
        char tail[16];
        if (sscanf(e->d_name, "vramtrace.%ld.%lu.%15s", &pid, &seq, tail) == 3 && !strcmp(tail, "dump")) {
            keys[n].pid = pid;
            keys[n].seq = seq;
            snprintf(keys[n].name, sizeof keys[n].name, "%s", e->d_name);
            n++;
        }
    }
    if (dir)
        closedir(dir);
    qsort(keys, n, sizeof *keys, key_cmp);
    size_t got = 0;
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", r->dir, keys[i].name);
        if (load_dump(path, &d[got]) == 0)
            got++;
    }
    free(keys);
    return got;
}

void free_dumps(struct vt_dumpfile *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        vt_dumpfile_free(&d[i]);
}

size_t count_allocs(const struct vt_dumpfile *d, const char *kind, const char *api, uint64_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < d->nallocs; i++) {
        const struct vt_df_alloc *a = &d->allocs[i];
        if ((!kind || !strcmp(vt_kind_word(a->kind), kind)) && (!api || !strcmp(a->api, api)) && (!size || a->size == size))
            n++;
    }
    return n;
}

const struct vt_df_alloc *find_alloc(const struct vt_dumpfile *d, uint64_t size)
{
    for (size_t i = 0; i < d->nallocs; i++)
        if (d->allocs[i].size == size)
            return &d->allocs[i];
    return NULL;
}

int stack_has(const struct vt_dumpfile *d, uint32_t stack, const char *fn)
{
    const struct vt_df_stack *s = vt_df_stack(d, stack);
    size_t fl = strlen(fn);
    for (uint32_t i = 0; s && i < s->n; i++) {
        const char *name = vt_df_frame_name(d, s->pc[i]);
        if (name && !strncmp(name, fn, fl) && name[fl] == '+')
            return 1;
    }
    return 0;
}

const char *out_value(const struct run *r, const char *key, char *buf, size_t len)
{
    size_t kl = strlen(key);
    for (const char *line = r->out; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t ll = nl ? (size_t)(nl - line) : strlen(line);
        if (ll > kl && !strncmp(line, key, kl) && line[kl] == ' ') {
            size_t vl = ll - kl - 1 < len - 1 ? ll - kl - 1 : len - 1;
            memcpy(buf, line + kl + 1, vl);
            buf[vl] = 0;
            return buf;
        }
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    size_t pl = strlen(prefix);
    for (const char *line = text; line && *line;) {
        if (!strncmp(line, prefix, pl))
            n++;
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : NULL;
    }
    return n;
}

uint64_t json_num(const char *text, const char *anchor, const char *key)
{
    const char *p = anchor ? strstr(text, anchor) : text;
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    p = p ? strstr(p, k) : NULL;
    if (!p || !strncmp(p + strlen(k), "null", 4))
        return UINT64_MAX;
    return strtoull(p + strlen(k), NULL, 10);
}
