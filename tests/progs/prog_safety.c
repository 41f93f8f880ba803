/* Test program for the ways a host process can be harmed (issue 13): exit() from a signal handler
 * while allocating, fork under load, the program's own signal semantics, file descriptors and threads,
 * bursts of out-of-memory failures, dumps past `ulimit -f`. Linked to the (fake) driver with -lcuda;
 * prints what the tests compare. */
#include <cuda.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prog_common.h"

#define NOINLINE __attribute__((noinline, used))

static void ctx(void)
{
    CUcontext c;
    prog_check(cuInit(0) == CUDA_SUCCESS, "cuInit");
    prog_check(cuDevicePrimaryCtxRetain(&c, 0) == CUDA_SUCCESS, "retain");
    prog_check(cuCtxSetCurrent(c) == CUDA_SUCCESS, "set current");
}

static void nap_ms(int ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static int count_tasks(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* A C daemon's shutdown: SIGTERM's handler calls exit() whenever it comes, here mostly while the main
 * thread is inside an allocation or a free. */
static void on_term(int sig)
{
    (void)sig;
    exit(0);
}

NOINLINE static void mode_termexit(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    CUdeviceptr keep[64] = {0};
    unsigned i = 0;
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        unsigned k = (i++ * 2654435761u) % 64;
        if (keep[k]) {
            cuMemFree(keep[k]);
            keep[k] = 0;
        } else {
            cuMemAlloc(&keep[k], 4096 + k * 512);
        }
    }
}

static volatile int stop;

/* For snapchurn: each thread keeps up to 1500 allocations and frees and remakes them at random, so
 * slots and addresses are reused all over a table of several chunks while dumps copy it. */
NOINLINE static void *churn_wide(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    ctx();
    enum { N = 1500 };
    CUdeviceptr *keep = calloc(N, sizeof *keep);
    while (keep && !stop) {
        unsigned k = (unsigned)rand_r(&seed) % N;
        if (keep[k]) {
            cuMemFree(keep[k]);
            keep[k] = 0;
        } else {
            cuMemAlloc(&keep[k], 512 + k);
        }
    }
    free(keep);
    return NULL;
}

NOINLINE static void *churn(void *arg)
{
    (void)arg;
    ctx();
    CUdeviceptr keep[8] = {0};
    unsigned i = 0;
    while (!stop) {
        unsigned k = i++ % 8;
        if (keep[k]) {
            cuMemFree(keep[k]);
            keep[k] = 0;
        } else {
            cuMemAlloc(&keep[k], 1024 + k);
        }
    }
    return NULL;
}

NOINLINE static void child_alloc(void)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, 4096) == CUDA_SUCCESS, "child alloc");
    cuMemFree(p);
}

/* fork() while four threads capture stacks; each child allocates once (its first recorded stack) and
 * exits. A child that hangs is ended by its alarm, and counted. */
static void mode_forkload(int forks)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, churn, NULL);
    int hangs = 0, bad = 0;
    for (int i = 0; i < forks; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(5);
            child_alloc();
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
            hangs++;
        else if (!WIFEXITED(st) || WEXITSTATUS(st))
            bad++;
    }
    stop = 1;
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("forks %d hangs %d bad %d\n", forks, hangs, bad);
}

static volatile sig_atomic_t calls, usr2_blocked;

static void on_usr1(int sig)
{
    (void)sig;
    calls++;
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    usr2_blocked = sigismember(&cur, SIGUSR2);
}

static const char *disposition(int sig)
{
    struct sigaction sa;
    sigaction(sig, NULL, &sa);
    if (sa.sa_flags & SA_SIGINFO)
        return "handled";
    return sa.sa_handler == SIG_IGN ? "ignored" : sa.sa_handler == SIG_DFL ? "default" : "handled";
}

/* Functions named as the library's own are (vt_*), exported by this program (-rdynamic): the library's
 * calls must not land here, nor this program's calls in the library. */
static int clash_calls;
uint64_t vt_now_ns(void);
void vt_table_add(void *a);
uint32_t vt_stack_capture(void);
NOINLINE uint64_t vt_now_ns(void)
{
    clash_calls++;
    return 7;
}
NOINLINE void vt_table_add(void *a)
{
    (void)a;
    clash_calls++;
}
NOINLINE uint32_t vt_stack_capture(void)
{
    clash_calls++;
    return 0;
}

NOINLINE static void some_alloc(void)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, 1 << 20) == CUDA_SUCCESS, "alloc");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "termexit")) {
        ctx();
        mode_termexit();
    } else if (!strcmp(mode, "forkload")) {
        ctx();
        mode_forkload(argc > 2 ? atoi(argv[2]) : 200);
    } else if (!strcmp(mode, "sigreset")) {
        /* The program takes SIGUSR1 back to its default after vramtrace installed its handler. */
        ctx();
        some_alloc();
        signal(SIGUSR1, SIG_DFL);
        printf("ready\n");
        nap_ms(argc > 2 ? atoi(argv[2]) : 2000);
    } else if (!strcmp(mode, "sigtake")) {
        /* A server that takes SIGUSR1 for itself after its first CUDA call (gunicorn reopens its logs). */
        ctx();
        some_alloc();
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, NULL);
        printf("ready\n");
        fflush(stdout);
        for (int i = 0; i < 400 && !calls; i++)
            nap_ms(10); /* until its own signal comes (kill -USR1), at most 4 s */
        printf("handler-calls %d\n", (int)calls);
    } else if (!strcmp(mode, "sigignore")) {
        /* Ignored before CUDA is used: it must stay ignored. */
        signal(SIGUSR1, SIG_IGN);
        ctx();
        some_alloc();
        printf("usr1 %s\n", disposition(SIGUSR1));
        printf("ready\n");
        nap_ms(argc > 2 ? atoi(argv[2]) : 2000);
    } else if (!strcmp(mode, "sigoneshot") || !strcmp(mode, "sigmask")) {
        /* The program's own handler, installed before CUDA: one-shot, or with SIGUSR2 in its mask. */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sigemptyset(&sa.sa_mask);
        if (!strcmp(mode, "sigmask"))
            sigaddset(&sa.sa_mask, SIGUSR2);
        else
            sa.sa_flags = SA_RESETHAND;
        sigaction(SIGUSR1, &sa, NULL);
        ctx();
        some_alloc();
        raise(SIGUSR1);
        if (getenv("LD_PRELOAD")) /* without the library (the bare run), no dump comes */
            prog_wait_dumps(1);
        if (!strcmp(mode, "sigmask")) {
            raise(SIGUSR1);
            prog_wait_dumps(2);
        }
        /* One-shot: the default action is back now, as the kernel leaves it without vramtrace. */
        printf("handler-calls %d usr2-blocked-in-handler %d after %s\n", (int)calls, (int)usr2_blocked,
               disposition(SIGUSR1));
    } else if (!strcmp(mode, "fds")) {
        /* How many files the program can open once CUDA is in use. */
        ctx();
        some_alloc();
        int n = 0, fd, first = -1;
        while ((fd = open("/dev/null", O_RDONLY)) >= 0) {
            if (first < 0)
                first = fd;
            n++;
        }
        printf("opened %d first %d\n", n, first);
    } else if (!strcmp(mode, "clash")) {
        ctx();
        some_alloc();
        printf("clash-calls %d\n", clash_calls);
        printf("own %d\n", vt_now_ns() == 7 && clash_calls == 1);
        prog_dump();
    } else if (!strcmp(mode, "threads")) {
        int before = count_tasks();
        ctx();
        some_alloc();
        printf("threads-added %d\n", count_tasks() - before);
    } else if (!strcmp(mode, "oomburst")) {
        /* 65 failures in a burst, then an exit soon after: the usual death of a training job. */
        ctx();
        int failed = 0;
        for (int i = 0; i < 65; i++) {
            CUdeviceptr p;
            failed += cuMemAlloc(&p, (size_t)1 << 40) == CUDA_ERROR_OUT_OF_MEMORY;
        }
        printf("failed %d\n", failed);
        nap_ms(argc > 2 ? atoi(argv[2]) : 300);
    } else if (!strcmp(mode, "bigdump")) {
        /* A dump larger than the file size limit the test sets. */
        ctx();
        for (int i = 0; i < 200; i++)
            some_alloc();
        prog_dump();
    } else if (!strcmp(mode, "sleep")) {
        ctx();
        some_alloc();
        printf("ready\n");
        nap_ms(argc > 2 ? atoi(argv[2]) : 1000);
    } else if (!strcmp(mode, "mix")) {
        /* For the sanitizer builds: four detached threads allocate (stacks taken, table changed) while
         * the main thread asks for dumps by signal and by API and makes pools and VMM memory; then exit()
         * with the threads still running (the exit dump among them). */
        ctx();
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        for (int i = 0; i < 4; i++) {
            pthread_t t;
            pthread_create(&t, &at, churn, NULL);
        }
        for (int i = 0; i < 20; i++) {
            kill(getpid(), SIGUSR1);
            if (i % 5 == 0)
                prog_dump();
            some_alloc();
            nap_ms(5);
        }
        prog_wait_dumps(6);
        printf("done\n");
        exit(0);
    } else if (!strcmp(mode, "snapchurn")) {
        /* 200,000 allocations that stay (a table of several chunks) while four threads churn through
         * theirs and dumps are asked for: every dump must be the table at one moment. */
        ctx();
        for (int i = 0; i < 200000; i++) {
            CUdeviceptr p;
            cuMemAlloc(&p, 64);
        }
        pthread_t t[4];
        for (long i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, churn_wide, (void *)(i + 1));
        int dumps = argc > 2 ? atoi(argv[2]) : 20;
        for (int i = 0; i < dumps; i++) {
            kill(getpid(), SIGUSR1);
            nap_ms(30);
        }
        prog_wait_dumps(dumps / 4);
        stop = 1;
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
    } else if (!strcmp(mode, "twodumps")) {
        ctx();
        some_alloc();
        prog_dump();
        prog_dump();
    } else {
        fprintf(stderr, "unknown mode '%s'\n", mode);
        return 2;
    }
    printf("done\n");
    return 0;
}
