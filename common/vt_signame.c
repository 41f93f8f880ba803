/* Parsing of signal names. Only signals whose default action a program rarely relies on are offered. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vt_signame.h"

int vt_signal_parse(const char *v)
{
    static const struct { const char *name; int sig; } names[] = {
        {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"PROF", SIGPROF},
        {"URG", SIGURG}, {"WINCH", SIGWINCH}, {"PWR", SIGPWR},
    };
    if (!strcasecmp(v, "none") || !strcasecmp(v, "off") || !strcmp(v, "0"))
        return 0;
    const char *n = strncasecmp(v, "SIG", 3) == 0 ? v + 3 : v;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(n, names[i].name))
            return names[i].sig;
    char *end;
    long num = strtol(v, &end, 10);
    if (*v && !*end && ((num >= SIGRTMIN && num <= SIGRTMAX) || num == SIGUSR1 || num == SIGUSR2))
        return (int)num;
    return -1;
}
