/* vt_paths.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vt_paths.h"

int vt_dump_path(char *out, size_t len, const char *dir, long pid, unsigned long seq)
{
    int n = snprintf(out, len, "%s/vramtrace.%ld.%lu.dump", dir, pid, seq);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int vt_dump_glob(char *out, size_t len, const char *dir, int dirlen, long pid)
{
    int n = dirlen < 0 ? snprintf(out, len, "%s/vramtrace.%ld.*.dump", dir, pid)
            : dirlen ? snprintf(out, len, "%.*s/vramtrace.%ld.*.dump", dirlen, dir, pid)
                     : snprintf(out, len, "vramtrace.%ld.*.dump", pid);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* A positive decimal number at *s, up to stop; advances *s past it. */
static int vt_number(const char **s, char stop, unsigned long *out)
{
    const char *p = *s;
    unsigned long v = 0;
    if (*p < '1' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (~0ul - 9) / 10)
            return -1;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (*p != stop)
        return -1;
    *s = p + 1;
    *out = v;
    return 0;
}

int vt_dump_name_parse(const char *name, long *pid, unsigned long *seq)
{
    unsigned long p;
    if (strncmp(name, "vramtrace.", 10))
        return -1;
    name += 10;
    if (vt_number(&name, '.', &p) < 0 || p > 0x7fffffff || vt_number(&name, '.', seq) < 0 || strcmp(name, "dump"))
        return -1;
    *pid = (long)p;
    return 0;
}

int vt_tmp_template(char *out, size_t len, const char *dir, long pid)
{
    int n = snprintf(out, len, "%s/.vramtrace.%ld.XXXXXX.tmp", dir, pid);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int vt_tmp_name_parse(const char *name, long *pid)
{
    unsigned long p;
    size_t n = strlen(name);
    if (strncmp(name, ".vramtrace.", 11) || n < 15 || strcmp(name + n - 4, ".tmp"))
        return -1;
    name += 11;
    if (vt_number(&name, '.', &p) < 0 || p > 0x7fffffff)
        return -1;
    *pid = (long)p;
    return 0;
}

int vt_private_dir(char *out, size_t len, uid_t uid, const char *tmpdir)
{
    if (!tmpdir || tmpdir[0] != '/')
        tmpdir = "/tmp";
    int n = snprintf(out, len, "%s/vramtrace-%lu", tmpdir, (unsigned long)uid);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int vt_private_dir_check(const char *path, uid_t uid, int make, char *why, size_t len)
{
    if (make && mkdir(path, 0700) != 0 && errno != EEXIST) {
        snprintf(why, len, "cannot make %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) != 0) {
        snprintf(why, len, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077)) {
        snprintf(why, len, "%s is not a private directory of user %lu (it is %s, owned by %lu, mode %03o)", path,
                 (unsigned long)uid, S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory",
                 (unsigned long)st.st_uid, (unsigned)(st.st_mode & 0777));
        return -1;
    }
    return 0;
}
