/* A fake libnvidia-ml for nvml_reader_test: the symbols NvmlReader resolves,
 * returning figures and errors set by environment variables:
 *   FAKE_NVML_INIT_ERROR     nvmlInit_v2's return code (default 0, success)
 *   FAKE_NVML_UUID           the one UUID a handle is found for (else 6, NOT_FOUND)
 *   FAKE_NVML_POWER_MW       power in milliwatts; FAKE_NVML_POWER_ERROR its code
 *   FAKE_NVML_TEMP_C         temperature in C
 *   FAKE_NVML_REASONS        the clock-event reasons mask (decimal or 0x hex)
 *   FAKE_NVML_SHUTDOWN_FILE  a file nvmlShutdown appends "shutdown\n" to
 * Built three ways: whole; -DFAKE_NVML_NO_POWER (no nvmlDeviceGetPowerUsage);
 * -DFAKE_NVML_OLD_REASONS (only the pre-12.2 name ...ThrottleReasons). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static int device_tag; /* the handle's address */

static unsigned long long env_number(const char *name, unsigned long long fallback) {
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : fallback;
}

EXPORT int nvmlInit_v2(void) { return (int)env_number("FAKE_NVML_INIT_ERROR", 0); }

EXPORT int nvmlShutdown(void) {
    const char *path = getenv("FAKE_NVML_SHUTDOWN_FILE");
    if (path && *path) {
        FILE *f = fopen(path, "a");
        if (f) {
            fputs("shutdown\n", f);
            fclose(f);
        }
    }
    return 0;
}

EXPORT const char *nvmlErrorString(int rc) {
    switch (rc) {
    case 0: return "Success";
    case 3: return "Not Supported";
    case 6: return "Not Found";
    case 9: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}

EXPORT int nvmlDeviceGetHandleByUUID(const char *uuid, void **device) {
    const char *want = getenv("FAKE_NVML_UUID");
    if (!uuid || !want || strcmp(uuid, want) != 0) return 6;
    *device = &device_tag;
    return 0;
}

#ifndef FAKE_NVML_NO_POWER
EXPORT int nvmlDeviceGetPowerUsage(void *device, unsigned *mw) {
    if (device != &device_tag) return 2; /* INVALID_ARGUMENT */
    const int rc = (int)env_number("FAKE_NVML_POWER_ERROR", 0);
    if (rc == 0) *mw = (unsigned)env_number("FAKE_NVML_POWER_MW", 0);
    return rc;
}
#endif

EXPORT int nvmlDeviceGetTemperature(void *device, int sensor, unsigned *c) {
    if (device != &device_tag || sensor != 0) return 2;
    *c = (unsigned)env_number("FAKE_NVML_TEMP_C", 0);
    return 0;
}

static int reasons(void *device, unsigned long long *mask) {
    if (device != &device_tag) return 2;
    *mask = env_number("FAKE_NVML_REASONS", 0);
    return 0;
}

#ifdef FAKE_NVML_OLD_REASONS
EXPORT int nvmlDeviceGetCurrentClocksThrottleReasons(void *device, unsigned long long *mask) {
    return reasons(device, mask);
}
#else
EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *device, unsigned long long *mask) {
    return reasons(device, mask);
}
#endif
