/* Size formatting and parsing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vt_settings.h"
#include "vt_units.h"

void vt_human(uint64_t b, char *out, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(out, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

void vt_human_delta(int64_t b, char *out, size_t len)
{
    char mag[32];
    vt_human(b < 0 ? (uint64_t)0 - (uint64_t)b : (uint64_t)b, mag, sizeof mag);
    snprintf(out, len, "%c%s", b < 0 ? '-' : '+', mag);
}

int vt_parse_size(const char *s, uint64_t *out)
{
    /* The number: decimal digits and one point at most (no nan, inf, sign, exponent or hex). */
    char num[40];
    size_t n = strspn(s, "0123456789.");
    double v;
    if (!n || n >= sizeof num)
        return -1;
    memcpy(num, s, n);
    num[n] = 0;
    if (vt_parse_decimal(num, &v) < 0)
        return -1;
    const char *end = s + n;
    static const struct { const char *suffix; double mult; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1024.0}, {"kb", 1024.0}, {"kib", 1024.0}, {"m", 1048576.0}, {"mb", 1048576.0},
        {"mib", 1048576.0}, {"g", 1073741824.0}, {"gb", 1073741824.0}, {"gib", 1073741824.0},
        {"t", 1099511627776.0}, {"tb", 1099511627776.0}, {"tib", 1099511627776.0},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (!strcasecmp(end, units[i].suffix)) {
            double r = v * units[i].mult;
            if (r > 1.8e19)
                return -1;
            *out = (uint64_t)r;
            return 0;
        }
    }
    return -1;
}
