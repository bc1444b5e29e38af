// bench_inputs.c — normals per second from the bit-reproducible generator (Philox + polar +
// deterministic log), as ratios against libm baselines measured in the same run. Run: make bench.
// No assertions on time: the numbers are for reading, and they vary by machine.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "pipeline/inputs.h"
#include "random_dist.h"

// ---------------------------------------------------------------------------------------------
// Timing

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef double (*gen_fn)(uint64_t n);

// Best of three runs, in values per second; *sink keeps the work from being optimised away.
static double rate(gen_fn f, uint64_t n, double *sink)
{
    double best = 0.0;
    for (int r = 0; r < 3; r++) {
        double t0 = now_s();
        *sink += f(n);
        double dt = now_s() - t0;
        if (dt > 0 && (double)n / dt > best)
            best = (double)n / dt;
    }
    return best;
}

// ---------------------------------------------------------------------------------------------
// The generator under test and its baselines

// precprobe's normal: Philox4x32-10, polar method, pp_det_log.
static double gen_pp_normal(uint64_t n)
{
    double s = 0.0;
    for (uint64_t i = 0; i < n; i++)
        s += pp_rand_normal(7, 0, i);
    return s;
}

// The same Philox draws and polar method, with libm's log: the cost of the deterministic log.
static double gen_philox_polar_libm(uint64_t n)
{
    double s = 0.0;
    for (uint64_t i = 0; i < n; i++) {
        for (uint32_t d = 0;; d++) {
            pp_philox4x32_ctr w = pp_philox_element(7, 0, i, d);
            double u = pp_u11_oo(pp_philox_bits64(w, 0)), v = pp_u11_oo(pp_philox_bits64(w, 1));
            double q = u * u + v * v;
            if (q < 1.0) {
                s += u * sqrt(-2.0 * log(q) / q);
                break;
            }
        }
    }
    return s;
}

// The common fast way: a sequential 64-bit generator (splitmix64) and Box–Muller with libm's
// log and cos. Neither counter-based nor bit-reproducible across libms.
static double gen_splitmix_boxmuller_libm(uint64_t n)
{
    uint64_t st = 7;
    double s = 0.0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t z = (st += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        z ^= z >> 31;
        double u1 = pp_u01_oo(z), u2 = pp_u01_co(z << 32 | z >> 32);
        s += sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    }
    return s;
}

// Uniforms on [0, 1) from Philox: the floor under everything above.
static double gen_pp_uniform(uint64_t n)
{
    double s = 0.0;
    for (uint64_t i = 0; i < n; i++)
        s += pp_rand_uniform01(7, 0, i);
    return s;
}

// ---------------------------------------------------------------------------------------------
// main

int main(void)
{
    const uint64_t n = 4000000;
    double sink = 0.0;
    double r_pp = rate(gen_pp_normal, n, &sink);
    double r_libm_polar = rate(gen_philox_polar_libm, n, &sink);
    double r_bm = rate(gen_splitmix_boxmuller_libm, n, &sink);
    double r_uni = rate(gen_pp_uniform, n, &sink);

    // The whole fill path: pp_inputs_fill of a 2^22-element bf16 tensor, all threads.
    const int64_t shape[1] = {(int64_t)1 << 22};
    pp_tensor t;
    pp_error err;
    pp_dist d = {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = 1.0, .low = 0.0, .high = 0.0};
    double r_fill = 0.0;
    if (pp_tensor_alloc(&t, 1, shape, PP_FMT_BF16, &err) == PP_OK) {
        for (int r = 0; r < 3; r++) {
            double t0 = now_s();
            if (pp_inputs_fill(&t, &d, 7, 0, &err) != PP_OK)
                break;
            double dt = now_s() - t0;
            if (dt > 0 && (double)t.numel / dt > r_fill)
                r_fill = (double)t.numel / dt;
        }
        sink += t.data[0];
        pp_tensor_free(&t);
    }

    printf("bench_inputs: %llu values per run, best of 3 (checksum %.6g)\n", (unsigned long long)n, sink);
    printf("  %-48s %8.1f M/s\n", "normal: Philox + polar + pp_det_log (precprobe)", r_pp / 1e6);
    printf("  %-48s %8.1f M/s   precprobe/this = %.2f\n", "normal: Philox + polar + libm log", r_libm_polar / 1e6,
           r_pp / r_libm_polar);
    printf("  %-48s %8.1f M/s   precprobe/this = %.2f\n", "normal: splitmix64 + Box-Muller, libm log/cos",
           r_bm / 1e6, r_pp / r_bm);
    printf("  %-48s %8.1f M/s   precprobe/this = %.2f\n", "uniform [0,1): Philox", r_uni / 1e6, r_pp / r_uni);
    printf("  %-48s %8.1f M/s   (threads: all online CPUs)\n", "pp_inputs_fill, normal -> bf16, 2^22 elements",
           r_fill / 1e6);
    return 0;
}
