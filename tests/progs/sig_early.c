/* Test library: installs a SIGUSR1 handler from its constructor, before libvramtrace.so starts, so the
 * test can check that vramtrace chains to a handler that was there first. */
#include <signal.h>
#include <string.h>

volatile sig_atomic_t sig_early_calls;

static void sig_early_handler(int sig)
{
    (void)sig;
    sig_early_calls++;
}

__attribute__((constructor)) static void sig_early_init(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sig_early_handler;
    sigaction(SIGUSR1, &sa, NULL);
}
