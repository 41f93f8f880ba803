/* Shared helpers of the test programs. vramtrace_dump is found with dlsym, as any program that must
 * also run without the library would do. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prog_common.h"

int prog_dump(void)
{
    int (*dump)(char *, size_t) = (int (*)(char *, size_t))dlsym(RTLD_DEFAULT, "vramtrace_dump");
    char path[4096];
    if (!dump || dump(path, sizeof path) != 0) {
        printf("dump failed\n");
        return -1;
    }
    printf("dump %s\n", path);
    fflush(stdout);
    return 0;
}

void prog_wait_dumps(int n)
{
    const char *dir = getenv("VRAMTRACE_DIR");
    struct timespec nap = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 500; i++) {
        DIR *d = opendir(dir ? dir : ".");
        int count = 0;
        struct dirent *e;
        while (d && (e = readdir(d)))
            count += !strncmp(e->d_name, "vramtrace.", 10) && strstr(e->d_name, ".dump") && !strstr(e->d_name, ".tmp");
        if (d)
            closedir(d);
        if (count >= n)
            return;
        nanosleep(&nap, NULL);
    }
}

void prog_check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "prog: check failed: %s\n", what);
        exit(99);
    }
}
