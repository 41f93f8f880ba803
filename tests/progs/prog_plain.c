/* Test program that never touches CUDA: under the library it must run as before, load no libcuda, and
 * still dump (with no devices). */
#include <stdio.h>
#include <string.h>

#include "prog_common.h"

int main(void)
{
    char line[4096];
    int cuda = 0;
    prog_dump();
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f))
        cuda |= strstr(line, "libcuda") != NULL || strstr(line, "libnvidia-ml") != NULL;
    if (f)
        fclose(f);
    printf("cuda-loaded %d\n", cuda);
    return 0;
}
