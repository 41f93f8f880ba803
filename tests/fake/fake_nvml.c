/* The fake NVML (build/fake/libnvidia-ml.so.1): the entry points vramtrace uses, answering from the
 * fake driver's state. This process is listed on each device whose primary context it holds, using what
 * the fake driver holds for it plus a fixed 300 MiB standing for the context (what nvidia-smi shows
 * beyond the allocations). VRAMTRACE_FAKE_NVML=0 makes nvmlInit fail. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_CONTEXT_BYTES (300ull << 20)

struct fake_nvml_process {
    unsigned int pid;
    unsigned long long used;
    unsigned int gpu_instance, compute_instance;
};

static uint64_t (*fake_used)(int);
static int (*fake_active)(int);

int nvmlInit_v2(void)
{
    const char *e = getenv("VRAMTRACE_FAKE_NVML");
    if (e && !strcmp(e, "0"))
        return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    fake_used = h ? (uint64_t (*)(int))dlsym(h, "vramtrace_fake_device_used") : NULL;
    fake_active = h ? (int (*)(int))dlsym(h, "vramtrace_fake_device_active") : NULL;
    return fake_used && fake_active ? 0 : 9;
}

int nvmlShutdown(void)
{
    return 0;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
    unsigned int n;
    if (!bus || sscanf(bus, "0000:%02x:00.0", &n) != 1 || n < 0x10)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *dev = (void *)(uintptr_t)(n - 0x10 + 1);
    return 0;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned int *count, struct fake_nvml_process *infos)
{
    int d = (int)(uintptr_t)dev - 1;
    unsigned int n = fake_active(d) ? 1 : 0;
    if (*count < n) {
        *count = n;
        return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
    }
    *count = n;
    if (n)
        infos[0] = (struct fake_nvml_process){(unsigned int)getpid(), fake_used(d) + FAKE_CONTEXT_BYTES, 0, 0};
    return 0;
}
