// cpu/adamw_lanes.c — the lane loops of the CPU emulation's vector path (adamw_lanes.h). The
// arithmetic is kernels/adamw.h's, unchanged: each loop below calls the scalar element functions
// once per lane. What makes it vectorise: the state in structure-of-arrays form, the variant's
// formats, Kahan, stochastic rounding and update known at compile time (one instantiation per
// combination with all four formats equal: the variants people run; the rest run the same code
// with the knobs read at run time), and -fno-math-errno for this file (Makefile) so sqrtf is
// the IEEE instruction with no errno call (its value is the same). Check with
//   gcc ... -fopt-info-vec-optimized -c kernels/cpu/adamw_lanes.c
#include "adamw_lanes.h"
#include "../random_lanes.h"
#include "../round_lanes.h"
#include "reject_lanes.h"

#define L PP_ADAMW_LANES

#if defined(__GNUC__) && !defined(__clang__)
#define LANES_INLINE static inline __attribute__((always_inline))
#define LANES_IVDEP _Pragma("GCC ivdep")
#else
#define LANES_INLINE static inline
#define LANES_IVDEP
#endif

// Steps whose gradients a θ-independent source gives at once: the synthetic source's normals of
// GB·L element-steps drawn as one batch (kernels/random_lanes.h: the rejected draws gathered and
// retried side by side), the input source's rows read GB at a time (GB cache-line misses in
// flight instead of one: rows are n apart).
#define GB 32  // measured: 32 against 16, the fp32 synthetic line 5% less CPU (retry tails amortised)
_Static_assert(GB * PP_RAND_PAIR_ROWS_MAX(L) <= PP_RAND_BATCH_MAX, "a batch of GB steps fits pp_rand_normal_batch");

// gb[s][l] = (float)pp_adamw_synth_grad_z of lane l's signal and the normal z[s·L + l]: the
// binary64 values first, then their rounding to P side by side (kernels/round_lanes.h; the
// scalar pp_round's branches kept this loop scalar: a fifth of the synthetic lines' time).
// With rs set (snr a power of two, recip_pow2 below) z/snr is computed as z·rs: the same bits
// (both are the one correctly rounded value of z·2^-k), a multiplication instead of a division
// (the division was a third of the divider's work per normal, with the log's and the polar
// transform's).
LANES_INLINE void lanes_synth_round(const pp_adamw_problem *pr, pp_format_id P, int ns, const double *sig,
                                    const double *z, double rs, float (*gb)[L])
{
    double y[GB * L];
    if (rs != 0.0) {
        for (int s = 0; s < ns; s++)
            for (int l = 0; l < L; l++)
                y[s * L + l] = pr->grad_scale * (sig[l] + z[s * L + l] * rs);
    } else {
        for (int s = 0; s < ns; s++)
            for (int l = 0; l < L; l++)
                y[s * L + l] = pp_adamw_synth_grad_unrounded(pr, sig[l], z[s * L + l]);
    }
    pp_round_ne_f32_lanes(P, ns * L, y, &gb[0][0]);
}

// 1/x where x = ±2^k and 1/x = ±2^-k is a binary64 value (then x·(1/x) = 1 and z/x = z·(1/x)
// exactly as real numbers, so both round to the same bits, underflow or overflow included);
// 0 otherwise (the caller divides).
static double recip_pow2(double x)
{
    int e;
    double f = frexp(x, &e), r = 1.0 / x;
    return (f == 0.5 || f == -0.5) && r * x == 1.0 ? r : 0.0;
}

// The synthetic (or input) source's gradients of steps t .. t + ns − 1 (ns ≤ GB), row s of gb
// for step t + s: the same values as pp_adamw_src_grad's (pp_adamw_given_grad; synthetic: its
// pp_adamw_synth_grad_s, the noise drawn in pairs by pp_rand_normal_pair_rows, the same bits).
// Kept out of line (flatten below would copy it into every instantiation), with its own vector
// clones.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__gnu_linux__) && \
    !defined(__SANITIZE_ADDRESS__)
__attribute__((noinline, target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#elif defined(__GNUC__)
__attribute__((noinline))
#endif
static void lanes_given_grads(const pp_adamw_variant *va, const pp_adamw_problem *pr, int t, int ns, int64_t i0,
                              const double *sig, pp_rand_lanes_fns rf, float (*gb)[L])
{
    pp_format_id P = va->param;
    if (pr->kind == PP_ADAMW_GRAD_INPUT) {
        for (int s = 0; s < ns; s++)
            for (int l = 0; l < L; l++)
                gb[s][l] = (float)pp_adamw_given_grad(pr, P, t + s, i0 + l, sig[l]);
        return;
    }
    double z[GB * L];
    pp_rand_normal_pair_rows(pr->seed, PP_ADAMW_TID_NOISE + (uint32_t)t, ns, i0, L, rf, z);
    // the rounding to P with P a constant where it is fp32 or bf16 (the format's parameters fold)
    double rs = recip_pow2(pr->snr);
    if (P == PP_FMT_FP32)
        lanes_synth_round(pr, PP_FMT_FP32, ns, sig, z, rs, gb);
    else if (P == PP_FMT_BF16)
        lanes_synth_round(pr, PP_FMT_BF16, ns, sig, z, rs, gb);
    else
        lanes_synth_round(pr, P, ns, sig, z, rs, gb);
}

// One step of every lane, the step's scalars in a local copy (loads that cannot fault, so the
// branches on them if-convert) with use_decay a constant (the caller's two calls).
LANES_INLINE void lanes_step(const pp_adamw_variant *va, const pp_adamw_scalars *s, float *restrict th,
                             float *restrict m, float *restrict v, float *restrict c, const float *restrict g,
                             const uint32_t *restrict r0, const uint32_t *restrict r1)
{
    LANES_IVDEP
    for (int l = 0; l < L; l++) {
        pp_adamw_elem e = {th[l], m[l], v[l], c[l]};
        uint32_t rb[2] = {r0[l], r1[l]};
        pp_adamw_elem_step(va, s, &e, g[l], rb);
        th[l] = e.theta, m[l] = e.m, v[l] = e.v, c[l] = e.c;
    }
}

// The loss terms of steps t .. t + ns − 1 (xb[s][l]: step t + s, lane l) added into their sums
// p[(t + s)·stride]: each sum takes lanes 0, 1, …, L − 1 in turn (increasing i: the documented
// order, the same additions as one step at a time), the ns sums side by side, so the chain of L
// dependent additions per step runs ns at once instead of stalling every step.
LANES_INLINE void lanes_loss_flush(pp_adamw_loss_out lo, int t, int ns, double (*xb)[L])
{
    double acc[GB];
    for (int s = 0; s < ns; s++)
        acc[s] = lo.p[(int64_t)(t + s) * lo.stride];
    for (int l = 0; l < L; l++)
        for (int s = 0; s < ns; s++)
            acc[s] = lo.add ? acc[s] + xb[s][l] : xb[s][l];
    for (int s = 0; s < ns; s++)
        lo.p[(int64_t)(t + s) * lo.stride] = acc[s];
}

// One group of lanes through steps t0 .. t1, knobs from *va (constants where the caller's are).
LANES_INLINE void lanes_body(const pp_adamw_variant *va, const pp_adamw_problem *pr, const pp_adamw_scalars *sc,
                             int64_t i0, int t0, int t1, float *restrict th, float *restrict m,
                             float *restrict v, float *restrict c, pp_adamw_loss_out lo, pp_adamw_snap_out so,
                             pp_rand_lanes_fns rf)
{
    float h[L], opt[L], g[L], gb[GB][L];
    double sig[L], xb[GB][L];  // xb: loss terms of the steps since tb, not yet added
    int tb = t0;
    uint32_t r0[L], r1[L], sr_c0[L], sr_c1[L], sr_c2[L];  // sr_c*: the stochastic rounding's counters
    pp_philox4x32_key sr_key = {{(uint32_t)pr->seed, (uint32_t)(pr->seed >> 32)}};
    for (int l = 0; l < L; l++) {
        pp_adamw_elem_data d = pp_adamw_elem_data_make(pr, i0 + l);
        h[l] = d.h, opt[l] = d.opt, sig[l] = d.sig;
        r0[l] = r1[l] = 0;
        sr_c0[l] = (uint32_t)(i0 + l), sr_c1[l] = (uint32_t)((uint64_t)(i0 + l) >> 32), sr_c2[l] = PP_ADAMW_TID_SR;
    }
    // the quadratic source's gradient, with the kind a constant so the lane loop has no branch
    pp_adamw_problem quad = *pr;
    quad.kind = PP_ADAMW_GRAD_QUADRATIC;
    int snap = 0;
    while (so.snap && snap < so.count && so.step[snap] < t0)
        snap++;
    if (lo.p && t0 == 1)
        for (int l = 0; l < L; l++) {
            pp_adamw_elem_data d = {h[l], opt[l], sig[l]};
            double q = pp_adamw_quad_loss_term(&d, th[l]);
            lo.p[0] = lo.add ? lo.p[0] + q : q;
        }
    for (int t = t0; t <= t1; t++) {
        const float *gt = g;
        if (pr->kind != PP_ADAMW_GRAD_QUADRATIC) {  // synthetic or input: θ-independent
            if ((t - t0) % GB == 0)
                lanes_given_grads(va, pr, t, t1 - t + 1 < GB ? t1 - t + 1 : GB, i0, sig, rf, gb);
            gt = gb[(t - t0) % GB];
        } else {
            LANES_IVDEP
            for (int l = 0; l < L; l++) {
                pp_adamw_elem_data d = {h[l], opt[l], sig[l]};
                g[l] = pp_adamw_src_grad(va, &quad, t, i0 + l, &d, th[l]);
            }
        }
        if (va->stochastic && rf.words) {
            // pp_adamw_sr_bits's block (counter: i, PP_ADAMW_TID_SR, draw t) by the level's
            // Philox (cpu/philox_lanes.h: its intrinsics, against GCC's vectorisation of
            // pp_philox4x32_10 that widens every word to 64 bits), words 0 and 1 kept
            uint32_t w2[L], w3[L];
            uint32_t *const w[4] = {r0, r1, w2, w3};
            rf.words(sr_key, sr_c0, sr_c1, sr_c2, (uint32_t)t, L, w);
        } else if (va->stochastic) {
            LANES_IVDEP
            for (int l = 0; l < L; l++) {
                uint32_t rb[2];
                pp_adamw_sr_bits(pr->seed, (uint64_t)(i0 + l), (uint32_t)t, rb);
                r0[l] = rb[0], r1[l] = rb[1];
            }
        }
        pp_adamw_scalars s = sc[t];
        if (s.use_decay) {
            s.use_decay = 1;
            lanes_step(va, &s, th, m, v, c, gt, r0, r1);
        } else {
            s.use_decay = 0;
            lanes_step(va, &s, th, m, v, c, gt, r0, r1);
        }
        if (lo.p) {
            for (int l = 0; l < L; l++) {
                pp_adamw_elem_data d = {h[l], opt[l], sig[l]};
                xb[t - tb][l] = pp_adamw_quad_loss_term(&d, th[l]);
            }
            if (t - tb + 1 == GB || t == t1) {
                lanes_loss_flush(lo, tb, t - tb + 1, xb);
                tb = t + 1;
            }
        }
        if (so.snap && snap < so.count && so.step[snap] == t) {
            for (int l = 0; l < L; l++)
                so.snap[(int64_t)snap * so.n + i0 + l] = th[l];
            snap++;
        }
    }
}

// The instantiations: formats all F, kahan K, stochastic S, update U known to the compiler, and
// no exact site (the emulation proper: every site test folds away; with a constant-less mask the
// if-converted lanes compute each site both ways, binary64 addcdiv included, about 3x the work).
// The fused flavour (torch_kernels = cuda-fused: update torch, no Kahan) is its own instantiation,
// and the others are told they are not it: a run-time flavour made the lanes compute the fused
// step and the unfused one both (measured: fp32 quadratic 0.088 -> 0.22 s cpu, bf16 plain 0.16 ->
// 0.68 s). The cpu and cuda flavours differ in a few selects and stay one instantiation.
#define LANES_SPEC(F, K, S, U)                                                                   \
    if (P == (F) && va->kahan == (K) && va->stochastic == (S) && va->update == (U) &&            \
        va->kernels != PP_ADAMW_KERNELS_CUDA_FUSED) {                                            \
        pp_adamw_variant k = *va;                                                                \
        k.param = k.momentum = k.variance = k.compensation = (F);                                \
        k.kahan = (K), k.stochastic = (S), k.update = (U), k.exact_sites = 0;                    \
        k.kernels = va->kernels == PP_ADAMW_KERNELS_CPU ? PP_ADAMW_KERNELS_CPU : PP_ADAMW_KERNELS_CUDA; \
        lanes_body(&k, pr, sc, i0, t0, t1, th, m, v, c, lo, so, rf);                                 \
        return;                                                                                  \
    }
#define LANES_SPEC_FUSED(F, S)                                                                   \
    if (P == (F) && !va->kahan && va->stochastic == (S) && va->update == PP_ADAMW_TORCH &&       \
        va->kernels == PP_ADAMW_KERNELS_CUDA_FUSED) {                                            \
        pp_adamw_variant k = *va;                                                                \
        k.param = k.momentum = k.variance = k.compensation = (F);                                \
        k.kahan = 0, k.stochastic = (S), k.update = PP_ADAMW_TORCH, k.exact_sites = 0;           \
        k.kernels = PP_ADAMW_KERNELS_CUDA_FUSED;                                                 \
        lanes_body(&k, pr, sc, i0, t0, t1, th, m, v, c, lo, so, rf);                                 \
        return;                                                                                  \
    }
#define LANES_SPEC_U(F, K, S) LANES_SPEC(F, K, S, PP_ADAMW_ANYPRECISION) LANES_SPEC(F, K, S, PP_ADAMW_TORCH)
#define LANES_SPEC_F(F)                                                                          \
    LANES_SPEC_U(F, 0, 0) LANES_SPEC_U(F, 0, 1) LANES_SPEC_U(F, 1, 0) LANES_SPEC_U(F, 1, 1)      \
    LANES_SPEC_FUSED(F, 0) LANES_SPEC_FUSED(F, 1)

// flatten: the element functions are too large for the inliner's own limits, and a lane loop
// around a call does not vectorise. Not under the sanitizers (__SANITIZE_ADDRESS__): there the
// flattened, instrumented instantiations take minutes to compile, and the lane loops they test
// are the same source. target_clones, not one function per target attribute: GCC 12 will not
// inline the (default-target) element functions into a function with its own target, and
// flattening before the cloning is what vectorises the lane loops (measured: a plain flattened
// function, -march=x86-64-v4 or not, leaves lanes_step scalar, 4x slower).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__gnu_linux__) && \
    !defined(__SANITIZE_ADDRESS__)
#define LANES_CLONES 1
__attribute__((flatten, target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void pp_adamw_lanes_run_auto_(const pp_adamw_variant *va, const pp_adamw_problem *pr, const pp_adamw_scalars *sc,
                              int64_t i0, int t0, int t1, float *th, float *m, float *v, float *c,
                              pp_adamw_loss_out lo, pp_adamw_snap_out so, pp_rand_lanes_fns rf)
{
    pp_format_id P = va->param;
    // c's format matters only with Kahan: without it the lanes' c passes through unchanged
    if (va->momentum == P && va->variance == P && (!va->kahan || va->compensation == P) && !va->exact_sites) {
        LANES_SPEC_F(PP_FMT_FP32)
        LANES_SPEC_F(PP_FMT_BF16)
        LANES_SPEC_F(PP_FMT_FP16)
    }
    lanes_body(va, pr, sc, i0, t0, t1, th, m, v, c, lo, so, rf);
}

// The clones by name, so a caller can run a level other than the one the CPU dispatch picks
// (tests run every level on an AVX-512 machine). GCC names a target_clones clone
// "<function>.<target with '-' as '_'>" (GCC 12; another naming fails the link, not silently).
#ifdef LANES_CLONES
#define LANES_CLONE(name, sym)                                                                                     \
    void name(const pp_adamw_variant *va, const pp_adamw_problem *pr, const pp_adamw_scalars *sc, int64_t i0,     \
              int t0, int t1, float *th, float *m, float *v, float *c, pp_adamw_loss_out lo, pp_adamw_snap_out so, \
              pp_rand_lanes_fns rf) __asm__(sym);
LANES_CLONE(lanes_clone_v4, "pp_adamw_lanes_run_auto_.arch_x86_64_v4")
LANES_CLONE(lanes_clone_v3, "pp_adamw_lanes_run_auto_.arch_x86_64_v3")
LANES_CLONE(lanes_clone_base, "pp_adamw_lanes_run_auto_.default")
#endif

void pp_adamw_lanes_run(pp_isa isa, const pp_adamw_variant *va, const pp_adamw_problem *pr,
                        const pp_adamw_scalars *sc, int64_t i0, int t0, int t1, float *th, float *m, float *v,
                        float *c, pp_adamw_loss_out lo, pp_adamw_snap_out so)
{
    // the synthetic source's Philox and rejected lists at the same level (cpu/reject_lanes.h;
    // AUTO: the widest this CPU runs, as the dispatch picks)
    pp_rand_lanes_fns rf = pp_rand_lanes_fns_for(isa);
#ifdef LANES_CLONES
    if (isa == PP_ISA_AVX512)
        lanes_clone_v4(va, pr, sc, i0, t0, t1, th, m, v, c, lo, so, rf);
    else if (isa == PP_ISA_AVX2)
        lanes_clone_v3(va, pr, sc, i0, t0, t1, th, m, v, c, lo, so, rf);
    else if (isa == PP_ISA_BASELINE)
        lanes_clone_base(va, pr, sc, i0, t0, t1, th, m, v, c, lo, so, rf);
    else
#endif
        pp_adamw_lanes_run_auto_(va, pr, sc, i0, t0, t1, th, m, v, c, lo, so, rf);
}
