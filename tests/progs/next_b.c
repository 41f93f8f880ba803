/* Test library: the definition that dlsym(RTLD_NEXT) from libnext_a must find. */
int vt_next_probe(void)
{
    return 2;
}
