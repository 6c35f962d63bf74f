/* The CUDA driver's floor for a launch's host time: ns per cuLaunchKernel of an empty kernel taking
 * WORDS 8-byte parameters, queued BATCH at a time (a synchronize, not timed, ends each batch); prints the
 * median over BATCHES batches. Needs only libcuda (no headers): tools/profile_launch.py builds and runs it.
 *     cc -O2 tools/launch_floor.c -o launch_floor -ldl && ./launch_floor WORDS BATCH BATCHES */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*fn_t)();
static fn_t sym(void *h, const char *name) {
    fn_t f = (fn_t)dlsym(h, name);
    if (!f) { fprintf(stderr, "no %s\n", name); exit(2); }
    return f;
}
static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
#define CHECK(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "%s: %d\n", #x, rc_); return 1; } } while (0)

int main(int argc, char **argv) {
    int words = argc > 1 ? atoi(argv[1]) : 8, batch = argc > 2 ? atoi(argv[2]) : 200;
    int batches = argc > 3 ? atoi(argv[3]) : 30;
    if (words < 1 || words > 512 || batch < 1 || batches < 1) return 2;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) { fprintf(stderr, "no libcuda\n"); return 2; }
    fn_t cuInit = sym(h, "cuInit"), cuDeviceGet = sym(h, "cuDeviceGet");
    fn_t retain = sym(h, "cuDevicePrimaryCtxRetain"), setcur = sym(h, "cuCtxSetCurrent");
    fn_t load = sym(h, "cuModuleLoadData"), getfn = sym(h, "cuModuleGetFunction");
    fn_t launch = sym(h, "cuLaunchKernel"), sync = sym(h, "cuCtxSynchronize");
    int dev;
    void *ctx, *mod, *fn;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(retain(&ctx, dev));
    CHECK(setcur(ctx));
    char *ptx = malloc(64 * (size_t)words + 256), *p = ptx;
    p += sprintf(p, ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(");
    for (int i = 0; i < words; i++) p += sprintf(p, "%s.param .u64 p%d", i ? ", " : "", i);
    sprintf(p, ")\n{\nret;\n}\n");
    CHECK(load(&mod, ptx));
    CHECK(getfn(&fn, mod, "k"));
    uint64_t *vals = calloc(words, 8);
    void **params = calloc(words, sizeof(void *));
    for (int i = 0; i < words; i++) params[i] = &vals[i];
    double *per = calloc(batches, sizeof(double));
    for (int i = 0; i < 100; i++) CHECK(launch(fn, 1, 1, 1, 1, 1, 1, 0, (void *)0, params, (void *)0));
    CHECK(sync());
    for (int b = 0; b < batches; b++) {
        int64_t t0 = now_ns();
        for (int i = 0; i < batch; i++) CHECK(launch(fn, 1, 1, 1, 1, 1, 1, 0, (void *)0, params, (void *)0));
        per[b] = (double)(now_ns() - t0) / batch;
        CHECK(sync());
    }
    qsort(per, batches, sizeof(double), cmp);
    printf("%.1f\n", per[batches / 2]);
    return 0;
}
