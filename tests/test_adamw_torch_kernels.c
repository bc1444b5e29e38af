// test_adamw_torch_kernels.c — the torch_kernels flavours of kernels/adamw.h on hand-computed
// cases: each documented difference between PyTorch's CUDA and CPU kernels gives the bits derived
// below, and the ops that do not differ give equal bits; then each difference of the fused kernel
// (cuda-fused, torch.optim.AdamW(fused=True)) from the foreach one (cuda), and CUDA's powf.
//
// Every expected value was derived with exact rational arithmetic, rounding once per operation
// (round to nearest even) to binary32 (24-bit significand) or bf16 (8-bit); "exact" marks a
// product or quotient before its rounding. u32 = 2^−24 relative.
// Run: make build/rel/tests/test_adamw_torch_kernels && build/rel/tests/test_adamw_torch_kernels
#include "test_util.h"

#include "adamw.h"
#include "adamw_problem.h"
#include "adamw_thread.h"
#include "cuda_powf.h"

static pp_adamw_variant variant(pp_format_id P, pp_format_id M, pp_format_id V, pp_adamw_update u,
                                pp_adamw_kernels k)
{
    pp_adamw_variant va = {.param = P, .momentum = M, .variance = V, .compensation = PP_FMT_BF16, .update = u,
                           .kernels = k};
    return va;
}

// The scalars of step 1 for lr 1e-3, betas (0.9, 0.999), eps 1e-8, no weight decay.
static pp_adamw_scalars step1(pp_adamw_update u)
{
    pp_adamw_hyper h = {1e-3, 0.9, 0.999, 1e-8, 0.0};
    return pp_adamw_scalars_make(u, &h, h.lr, 1);
}

static void expect_bits(const char *what, float got, float want)
{
    if (memcmp(&got, &want, sizeof got)) {
        fprintf(stderr, "%s: got %a, want %a\n", what, (double)got, (double)want);
        fail();
    }
}

// ---------------------------------------------------------------------------------------------
// 1. add_(g, alpha = 1 − β1) into a bf16 momentum (AnyPrecisionAdamW, θ and m both bf16).
//    1 − β1 = RN32(1 − 0.9) = 0x1.99999ap-4. The CPU loop rounds alpha to bf16: 0x1.9ap-4
//    (0.10009765625, +0.098%); CUDA keeps it in binary32. m₀ = 0, so m·β1 = 0 and the FMA is
//    one rounded product. g = 1.0078125 = 0x1.02p+0 (a bf16 value):
//      CPU:  g·0x1.9ap-4 = 0x1.9d34p-4 exactly (16 bits); bf16 keeps 7 fraction bits, 0x1.9d34
//            lies above the midpoint 0x1.9d between 0x1.9c and 0x1.9e → m = 0x1.9ep-4
//      CUDA: g·0x1.99999ap-4 = 0x1.9ccccd34p-4 exact → RN32 0x1.9ccccep-4, below 0x1.9d → 0x1.9cp-4
//    One bf16 ulp apart: the CPU's m is larger, as its alpha is.
static void momentum_alpha_bf16_on_cpu_fp32_on_cuda(void **state)
{
    (void)state;
    pp_adamw_scalars s = step1(PP_ADAMW_ANYPRECISION);
    assert_true(s.one_minus_beta1 == 0x1.99999ap-4f);
    pp_adamw_variant cpu = variant(PP_FMT_BF16, PP_FMT_BF16, PP_FMT_BF16, PP_ADAMW_ANYPRECISION, PP_ADAMW_KERNELS_CPU);
    pp_adamw_variant cuda = cpu;
    cuda.kernels = PP_ADAMW_KERNELS_CUDA;
    expect_bits("momentum, cpu", pp_adamw_momentum(&cpu, &s, 0.0f, 0x1.02p+0f), 0x1.9ep-4f);
    expect_bits("momentum, cuda", pp_adamw_momentum(&cuda, &s, 0.0f, 0x1.02p+0f), 0x1.9cp-4f);
    // An fp32 momentum (AnyPrecisionAdamW's default) is not a scalar of g's dtype: alpha stays
    // binary32 on both devices, and both give RN32(g·0x1.99999ap-4) = 0x1.9ccccep-4.
    cpu.momentum = cuda.momentum = PP_FMT_FP32;
    expect_bits("fp32 momentum, cpu", pp_adamw_momentum(&cpu, &s, 0.0f, 0x1.02p+0f), 0x1.9ccccep-4f);
    expect_bits("fp32 momentum, cuda", pp_adamw_momentum(&cuda, &s, 0.0f, 0x1.02p+0f), 0x1.9ccccep-4f);
}

// torch.optim.AdamW's lerp_ is the same FMA on both devices: fma(w, RN(g − m), m), bf16 store.
// With m₀ = 0 and the g above: RN32(w·g) = 0x1.9ccccep-4 → 0x1.9cp-4 in bf16, both flavours.
static void momentum_lerp_same_on_both(void **state)
{
    (void)state;
    pp_adamw_scalars s = step1(PP_ADAMW_TORCH);
    pp_adamw_variant cpu = variant(PP_FMT_BF16, PP_FMT_BF16, PP_FMT_BF16, PP_ADAMW_TORCH, PP_ADAMW_KERNELS_CPU);
    pp_adamw_variant cuda = cpu;
    cuda.kernels = PP_ADAMW_KERNELS_CUDA;
    expect_bits("lerp, cpu", pp_adamw_momentum(&cpu, &s, 0.0f, 0x1.02p+0f), 0x1.9cp-4f);
    expect_bits("lerp, cuda", pp_adamw_momentum(&cuda, &s, 0.0f, 0x1.02p+0f), 0x1.9cp-4f);
}

// ---------------------------------------------------------------------------------------------
// 2. addcmul_(g, g, value = w) into an fp32 variance, w = RN32(1 − 0.999) = 0x1.0624dep-10.
//    v₀ = RN32(1e-7) = 0x1.ad7f2ap-24; v·β2 = RN32(v₀·0x1.ff7ceep-1) = 0x1.ad1136p-24.
//    g = RN32(0.163) = 0x1.4dd2f2p-3.
//      CPU:  fma(RN32(w·g), g, v) with RN32(w·g) = 0x1.55d5f6p-13: 0x1.bf6e0edc0e8cp-16 exact →
//            0x1.bf6e0ep-16
//      CUDA: fma(w, RN32(g·g), v) with RN32(g·g) = 0x1.b34e78p-6; w·0x1.b34e78p-6 =
//            0x1.bdc0ff56ec1p-16 exact, plus v: 0x1.bf6e108cec1p-16 → 0x1.bf6e10p-16
//      (unfused on CUDA, RN32(v + RN32(w·g·g)) = 0x1.bf6e12p-16: the FMA matters too)
static void variance_addcmul_grouping_differs(void **state)
{
    (void)state;
    pp_adamw_scalars s = step1(PP_ADAMW_ANYPRECISION);
    assert_true(s.one_minus_beta2 == 0x1.0624dep-10f && s.beta2 == 0x1.ff7ceep-1f);
    for (int u = 0; u < 2; u++) {  // addcmul_ is the same kernel for both optimizers
        pp_adamw_update up = u ? PP_ADAMW_TORCH : PP_ADAMW_ANYPRECISION;
        pp_adamw_variant cpu = variant(PP_FMT_FP32, PP_FMT_FP32, PP_FMT_FP32, up, PP_ADAMW_KERNELS_CPU);
        pp_adamw_variant cuda = cpu;
        cuda.kernels = PP_ADAMW_KERNELS_CUDA;
        expect_bits("variance, cpu", pp_adamw_variance(&cpu, &s, 0x1.ad7f2ap-24f, 0x1.4dd2f2p-3f), 0x1.bf6e0ep-16f);
        expect_bits("variance, cuda", pp_adamw_variance(&cuda, &s, 0x1.ad7f2ap-24f, 0x1.4dd2f2p-3f),
                    0x1.bf6e10p-16f);
    }
}

// ---------------------------------------------------------------------------------------------
// 3. AnyPrecisionAdamW's √v / dc, dc the 0-d fp32 CPU step tensor (1 − β2^t) ** 0.5, t = 1:
//    bc2 = RN32(1 − 0x1.ff7ceep-1) = 0x1.0624p-10 (exact), dc = RN32(√bc2) = 0x1.030d58p-5;
//    CUDA's divide-by-CPU-scalar multiplies by RN32(1/dc) = 0x1.f9f7bap+4.
//    v = RN32(0.003²) = 0x1.2dfd6ap-17, √v → 0x1.89374cp-9 (0.003f).
//      CPU:  RN32(0x1.89374cp-9 / dc) = 0x1.84954ap-4; + ε (RN32(1e-8) = 0x1.5798eep-27, 1.34
//            ulps of the sum) → 0x1.84954cp-4
//      CUDA: 0x1.89374cp-9 · 0x1.f9f7bap+4 = 0x1.84954b7c409cp-4 exact → 0x1.84954cp-4; + ε →
//            0x1.84954ep-4
//    torch.optim.AdamW divides by a Python float through _foreach_div_ (a true division on
//    CUDA too): its denominator is the same on both devices.
static void denom_reciprocal_multiply_on_cuda(void **state)
{
    (void)state;
    pp_adamw_scalars s = step1(PP_ADAMW_ANYPRECISION);
    assert_true(s.dc == 0x1.030d58p-5f && s.inv_dc == 0x1.f9f7bap+4f && s.eps == 0x1.5798eep-27f);
    pp_adamw_variant cpu = variant(PP_FMT_FP32, PP_FMT_FP32, PP_FMT_FP32, PP_ADAMW_ANYPRECISION, PP_ADAMW_KERNELS_CPU);
    pp_adamw_variant cuda = cpu;
    cuda.kernels = PP_ADAMW_KERNELS_CUDA;
    expect_bits("denominator, cpu", pp_adamw_denom(&cpu, &s, 0x1.2dfd6ap-17f), 0x1.84954cp-4f);
    expect_bits("denominator, cuda", pp_adamw_denom(&cuda, &s, 0x1.2dfd6ap-17f), 0x1.84954ep-4f);
    pp_adamw_scalars st = step1(PP_ADAMW_TORCH);
    cpu.update = cuda.update = PP_ADAMW_TORCH;
    float dt = pp_adamw_denom(&cpu, &st, 0x1.2dfd6ap-17f);
    expect_bits("torch denominator, cuda == cpu", pp_adamw_denom(&cuda, &st, 0x1.2dfd6ap-17f), dt);
}

// ---------------------------------------------------------------------------------------------
// 4. addcdiv_(m, d, value = −step_size) into fp32 θ, AnyPrecisionAdamW's step 1:
//    bc1 = RN32(1 − 0x1.ccccccp-1) = 0x1.9999ap-4, RN32(1/bc1) = 0x1.3ffffcp+3,
//    −step_size = −RN32(0x1.3ffffcp+3 · RN32(1e-3)) = −0x1.47ae12p-7.
//    θ = RN32(0.01) = 0x1.47ae14p-7, m = RN32(6e-4) = 0x1.3a92a4p-11, d = 0x1.89374cp-9 (0.003f).
//      CPU:  RN32(−step·m) = −0x1.92a736p-18; / d → −0x1.0624dcp-9; θ + that → 0x1.0624dcp-7
//      CUDA: RN32(m/d) = 0x1.99999ap-3; −step·0x1.99999ap-3 = −0x1.0624db74bc6ap-9 exact; plus θ:
//            0x1.0624dd22d0e58p-7 → 0x1.0624dep-7
//      (unfused on CUDA, RN32(θ + RN32(−step·m/d)) = 0x1.0624dcp-7: here the FMA is the difference)
//    With Kahan the same addcdiv_ goes into the compensation buffer (checked with c = θ above).
static void addcdiv_fused_on_cuda(void **state)
{
    (void)state;
    pp_adamw_scalars s = step1(PP_ADAMW_ANYPRECISION);
    assert_true(s.neg_step == -0x1.47ae12p-7f);
    pp_adamw_variant cpu = variant(PP_FMT_FP32, PP_FMT_FP32, PP_FMT_FP32, PP_ADAMW_ANYPRECISION, PP_ADAMW_KERNELS_CPU);
    pp_adamw_variant cuda = cpu;
    cuda.kernels = PP_ADAMW_KERNELS_CUDA;
    float th = 0x1.47ae14p-7f, m = 0x1.3a92a4p-11f, d = 0x1.89374cp-9f;
    expect_bits("addcdiv, cpu", pp_adamw_addcdiv(&cpu, &s, th, m, d), 0x1.0624dcp-7f);
    expect_bits("addcdiv, cuda", pp_adamw_addcdiv(&cuda, &s, th, m, d), 0x1.0624dep-7f);
    // torch.optim.AdamW: its −step_size is RN32(−lr/bc1) from binary64, here −0x1.47ae14p-7 (not
    // −0x1.47ae12p-7); same kernels, so the same shapes: CUDA fuses, the CPU rounds thrice.
    pp_adamw_scalars st = step1(PP_ADAMW_TORCH);
    assert_true(st.neg_step == -0x1.47ae14p-7f);
    cpu.update = cuda.update = PP_ADAMW_TORCH;
    float q = m / d, um = st.neg_step * m;
    expect_bits("torch addcdiv, cpu", pp_adamw_addcdiv(&cpu, &st, th, m, d), th + um / d);
    expect_bits("torch addcdiv, cuda", pp_adamw_addcdiv(&cuda, &st, th, m, d), fmaf(st.neg_step, q, th));
}

// The whole element step, fp32 states, Kahan into an fp32 buffer: the CUDA flavour's θ is the
// Kahan sum of the fused addcdiv, exactly as the helpers say (c₀ = 0, θ₀ = 1: c = RN32(addcdiv
// into 0), θ = RN32(θ₀ + c), c = c + (θ₀ − θ)).
static void elem_step_kahan_uses_fused_addcdiv(void **state)
{
    (void)state;
    pp_adamw_scalars s = step1(PP_ADAMW_ANYPRECISION);
    pp_adamw_variant va = variant(PP_FMT_FP32, PP_FMT_FP32, PP_FMT_FP32, PP_ADAMW_ANYPRECISION, PP_ADAMW_KERNELS_CUDA);
    va.kahan = 1;
    va.compensation = PP_FMT_FP32;
    float g = 0x1.4dd2f2p-3f;
    pp_adamw_elem e = {1.0f, 0.0f, 0.0f, 0.0f};
    uint32_t rb[2] = {0, 0};
    pp_adamw_elem_step(&va, &s, &e, g, rb);
    float m = pp_adamw_momentum(&va, &s, 0.0f, g), v = pp_adamw_variance(&va, &s, 0.0f, g);
    float c = fmaf(s.neg_step, m / pp_adamw_denom(&va, &s, v), 0.0f), th = 1.0f + c;
    expect_bits("kahan theta", e.theta, th);
    expect_bits("kahan c", e.c, c + (1.0f - th));
}


// ---------------------------------------------------------------------------------------------
// The fused kernel (cuda-fused) against the foreach one (cuda), torch.optim.AdamW, step 1 of
// lr 1e-3, betas (0.9, 0.999), eps 1e-8.

static pp_adamw_scalars step1_wd(double wd)
{
    pp_adamw_hyper h = {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = wd};
    return pp_adamw_scalars_make(PP_ADAMW_TORCH, &h, h.lr, 1);
}

// 5. The scalars, in binary32 on the GPU instead of binary64 in Python:
//    bias_correction2_sqrt = sqrtf(RN32(1 − powf(RN32(0.999), 1))): CUDA's powf(x, 1) is x here,
//    1 − 0x1.ff7ceep-1 = 0x1.0624p-10 exactly (Sterbenz), √ = 0x1.030d57a01d86…p-5 →
//    0x1.030d58p-5; foreach: RN32(√(1 − 0.999 in binary64)) = RN32(0x1.030dc4ea03a7…p-5) =
//    0x1.030dc4p-5 (108 ulps apart: 1 − β2 loses β2's rounding in binary32).
//    step_size = RN32(RN32(1e-3) / RN32(1 − 0x1.ccccccp-1)) = RN32(0x1.0624dep-10 / 0x1.9999ap-4)
//    = RN32(0x1.47ae1061…p-7) = 0x1.47ae10p-7; foreach RN32(1e-3 / (1 − 0.9)) = 0x1.47ae14p-7.
//    lr·wd (wd 0.01) = RN32(0x1.0624dep-10 · 0x1.47ae14p-7) = RN32(0x1.4f8b591bc558p-17) =
//    0x1.4f8b5ap-17, and the decay multiplies θ by nothing: θ − (lr·wd)·θ is one FMA.
static void fused_scalars_are_binary32(void **state)
{
    (void)state;
    pp_adamw_scalars s = step1_wd(0.01);
    expect_bits("fused dc", s.fused_dc, 0x1.030d58p-5f);
    expect_bits("foreach dc", s.dc, 0x1.030dc4p-5f);
    expect_bits("fused -step", s.fused_neg_step, -0x1.47ae10p-7f);
    expect_bits("foreach -step", s.neg_step, -0x1.47ae14p-7f);
    expect_bits("fused lr*wd", s.fused_lr_wd, 0x1.4f8b5ap-17f);
}

// 6. The momentum: foreach's lerp_ is fma(w, RN32(g − m), m), w = RN32(1 − 0.9) = 0x1.99999ap-4;
//    the fused kernel writes fma(β1, m, fma(−β1, g, g)), β1 = 0x1.ccccccp-1.
//    m = −0x1.0a54f2p-2, g = 0x1.a9a80ep-3:
//      foreach: g − m = 0x1.df28f8p-2 (exact); w·that + m = −0x1.b4d4e581a45a…p-3 → −0x1.b4d4e6p-3
//      fused:   g − β1·g = 0x1.548676ebb36p-6 → 0x1.548676p-6; β1·m + that =
//               −0x1.b4d4e40488d8…p-3 → −0x1.b4d4e4p-3
static void fused_momentum_two_fmas(void **state)
{
    (void)state;
    pp_adamw_scalars s = step1_wd(0.0);
    pp_adamw_variant foreach = variant(PP_FMT_FP32, PP_FMT_FP32, PP_FMT_FP32, PP_ADAMW_TORCH, PP_ADAMW_KERNELS_CUDA);
    expect_bits("foreach m", pp_adamw_momentum(&foreach, &s, -0x1.0a54f2p-2f, 0x1.a9a80ep-3f), -0x1.b4d4e6p-3f);
    expect_bits("fused m", pp_adamw_fused_momentum(&s, -0x1.0a54f2p-2f, 0x1.a9a80ep-3f), -0x1.b4d4e4p-3f);
}

// 7. The variance: foreach mul_(β2) then addcmul_: fma(w2, RN32(g·g), RN32(v·β2)), w2 =
//    RN32(1 − 0.999) = 0x1.0624dep-10; fused fma(β2, v, fma(−β2, g², g²)), β2 = 0x1.ff7ceep-1.
//    v = 0x1.480ec2p-11, g = −0x1.63eb34p-4, g² = RN32 → 0x1.eed62ap-8:
//      foreach: v·β2 → 0x1.47bac6p-11; w2·g² + that = 0x1.4bb032e46f4…p-11 → 0x1.4bb032p-11
//      fused:   g² − β2·g² = 0x1.fab4c519e8p-18 → 0x1.fab4c6p-18; β2·v + that =
//               0x1.4bb0303cd82e…p-11 → 0x1.4bb030p-11
static void fused_variance_two_fmas(void **state)
{
    (void)state;
    pp_adamw_scalars s = step1_wd(0.0);
    pp_adamw_variant foreach = variant(PP_FMT_FP32, PP_FMT_FP32, PP_FMT_FP32, PP_ADAMW_TORCH, PP_ADAMW_KERNELS_CUDA);
    expect_bits("foreach v", pp_adamw_variance(&foreach, &s, 0x1.480ec2p-11f, -0x1.63eb34p-4f), 0x1.4bb032p-11f);
    expect_bits("fused v", pp_adamw_fused_variance(&s, 0x1.480ec2p-11f, -0x1.63eb34p-4f), 0x1.4bb030p-11f);
}

// 8. One store per state (bf16 θ, m, v; wd 0.1): the fused kernel keeps θ's decay, m and v in
//    binary32 into the update and rounds each once at the end; foreach stores after every op.
//    θ = 0x1.68p-5, m = −0x1.cp-5, v = 0x1.7ep-9, g = −0x1.18p-3 (bf16 values); lr·wd =
//    RN32(RN32(1e-3)·RN32(0.1)) = 0x1.a36e30p-14.
//      fused: θd = RN32(θ − lr·wd·θ) = 0x1.67f6c8p-5 (in bf16: 0x1.68p-5, the decay lost);
//             m = 0x1.01999ap-4 negated (−0x1.01999ap-4), g² = 0x1.324p-6, v = 0x1.801166p-9,
//             √v = 0x1.bb71bap-5, d = RN32(RN32(√v / 0x1.030d58p-5) + ε) = 0x1.b6383ap+0,
//             −step·m = 0x1.49ba5ap-11, / d = 0x1.813e02p-12, θd + that = 0x1.6af944p-5, below
//             the bf16 midpoint 0x1.6bp-5 → θ = 0x1.6ap-5; m → −0x1.02p-4, v → 0x1.8p-9
//      foreach: θd = bf16(RN32(θ·RN32(1 − 1e-4))) = 0x1.68p-5, m = −0x1.02p-4, v = 0x1.8p-9, d =
//             0x1.b6p+0 (each op stored in bf16), fma(−step, RN32(m/d), θd) = 0x1.6b0412p-5, above
//             the midpoint → θ = 0x1.6cp-5
static void fused_stores_each_state_once(void **state)
{
    (void)state;
    pp_adamw_scalars s = step1_wd(0.1);
    expect_bits("lr*wd", s.fused_lr_wd, 0x1.a36e30p-14f);
    pp_adamw_variant va = variant(PP_FMT_BF16, PP_FMT_BF16, PP_FMT_BF16, PP_ADAMW_TORCH, PP_ADAMW_KERNELS_CUDA_FUSED);
    uint32_t rb[2] = {0, 0};
    pp_adamw_elem e = {.theta = 0x1.68p-5f, .m = -0x1.cp-5f, .v = 0x1.7ep-9f};
    pp_adamw_elem_step(&va, &s, &e, -0x1.18p-3f, rb);
    expect_bits("fused theta", e.theta, 0x1.6ap-5f);
    expect_bits("fused m", e.m, -0x1.02p-4f);
    expect_bits("fused v", e.v, 0x1.8p-9f);
    expect_bits("fused denominator", pp_adamw_fused_denom(&s, 0x1.801166p-9f), 0x1.b6383ap+0f);
    va.kernels = PP_ADAMW_KERNELS_CUDA;
    e = (pp_adamw_elem){.theta = 0x1.68p-5f, .m = -0x1.cp-5f, .v = 0x1.7ep-9f};
    pp_adamw_elem_step(&va, &s, &e, -0x1.18p-3f, rb);
    expect_bits("foreach theta", e.theta, 0x1.6cp-5f);
    // the theta site exact (precprobe explain): the binary32 0x1.6af944p-5 is kept
    va.kernels = PP_ADAMW_KERNELS_CUDA_FUSED;
    va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_THETA);
    e = (pp_adamw_elem){.theta = 0x1.68p-5f, .m = -0x1.cp-5f, .v = 0x1.7ep-9f};
    pp_adamw_elem_step(&va, &s, &e, -0x1.18p-3f, rb);
    expect_bits("fused theta, exact site", e.theta, 0x1.6af944p-5f);
    // zero, NaN and Inf gradients. g = 0 from zero states: m = v = 0, d = ε, the update 0/ε = 0,
    // θ = bf16(1 − 0x1.a36e3p-14) = 1 (below half an ulp). NaN reaches every state; so does +Inf,
    // through the momentum's fma(−β1, ∞, ∞) = NaN (foreach's lerp gives the same NaN: ∞ − m, then
    // w·∞ + m, then v = ∞ and ∞/∞)
    va.exact_sites = 0;
    e = (pp_adamw_elem){.theta = 1.0f, .m = 0.0f, .v = 0.0f};
    pp_adamw_elem_step(&va, &s, &e, 0.0f, rb);
    assert_true(e.theta == 1.0f && e.m == 0.0f && e.v == 0.0f);
    e = (pp_adamw_elem){.theta = 1.0f, .m = 0.0f, .v = 0.0f};
    pp_adamw_elem_step(&va, &s, &e, NAN, rb);
    assert_true(isnan(e.theta) && isnan(e.m) && isnan(e.v));
    e = (pp_adamw_elem){.theta = 1.0f, .m = 0.0f, .v = 0.0f};
    pp_adamw_elem_step(&va, &s, &e, INFINITY, rb);
    assert_true(isnan(e.theta) && isnan(e.m) && isnan(e.v));
}

// 9. CUDA's powf, not glibc's: the bias corrections' powf(β, t) on an NVIDIA H200 (torch 2.11.0+
//    cu130's pow kernel, which the fused kernel's pow_ shares) against kernels/cuda_powf.h, where
//    glibc's correctly rounded powf is one ulp away; and the special cases of C99 Annex F.
static void cuda_powf_is_not_glibc(void **state)
{
    (void)state;
    static const struct {
        float b, t, h200, glibc;
    } c[] = {
        {0x1.ccccccp-1f, 57.0f, 0x1.4318b8p-9f, 0x1.4318b6p-9f},   // 0.9f
        {0x1.e66666p-1f, 6.0f, 0x1.785df4p-1f, 0x1.785df6p-1f},    // 0.95f
        {0x1.f5c29p-1f, 17.0f, 0x1.6b2c42p-1f, 0x1.6b2c4p-1f},     // 0.98f
        {0x1.fae148p-1f, 22.0f, 0x1.9a6f5ap-1f, 0x1.9a6f58p-1f},   // 0.99f
        {0x1.ff7ceep-1f, 102.0f, 0x1.ce54p-1f, 0x1.ce5402p-1f},    // 0.999f
        {0x1.99999ap-1f, 45.0f, 0x1.6d602cp-15f, 0x1.6d602ap-15f}, // 0.8f
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        expect_bits("cuda powf", pp_cuda_powf(c[i].b, c[i].t), c[i].h200);
        expect_bits("glibc powf", powf(c[i].b, c[i].t), c[i].glibc);
    }
    expect_bits("powf(x, 1)", pp_cuda_powf(0x1.ff7ceep-1f, 1.0f), 0x1.ff7ceep-1f);
    expect_bits("powf(2, 10)", pp_cuda_powf(2.0f, 10.0f), 1024.0f);
    expect_bits("powf(-2, 3)", pp_cuda_powf(-2.0f, 3.0f), -8.0f);
    expect_bits("powf(0, 3)", pp_cuda_powf(0.0f, 3.0f), 0.0f);
    expect_bits("powf(-0, 3)", pp_cuda_powf(-0.0f, 3.0f), -0.0f);
    expect_bits("powf(-0, 2)", pp_cuda_powf(-0.0f, 2.0f), 0.0f);
    expect_bits("powf(0, -1)", pp_cuda_powf(0.0f, -1.0f), INFINITY);
    expect_bits("powf(-0, -1)", pp_cuda_powf(-0.0f, -1.0f), -INFINITY);
    expect_bits("powf(inf, -2)", pp_cuda_powf(INFINITY, -2.0f), 0.0f);
    expect_bits("powf(NaN, 0)", pp_cuda_powf(NAN, 0.0f), 1.0f);
    expect_bits("powf(1, NaN)", pp_cuda_powf(1.0f, NAN), 1.0f);
    expect_bits("powf(-1, inf)", pp_cuda_powf(-1.0f, INFINITY), 1.0f);
    expect_bits("powf(0.5, 200)", pp_cuda_powf(0.5f, 200.0f), 0.0f);  // 2^-200: underflow past 152
    expect_bits("powf(2, 200)", pp_cuda_powf(2.0f, 200.0f), INFINITY);
    expect_bits("powf(2^-140, 0.5)", pp_cuda_powf(0x1p-140f, 0.5f), 0x1p-70f);  // a subnormal base
    assert_true(isnan(pp_cuda_powf(-2.0f, 0.5f)) && isnan(pp_cuda_powf(NAN, 2.0f)));
}

// 10. What torch's fused kernel does not have is refused: AnyPrecisionAdamW's order, Kahan.
static void fused_refuses_what_torch_lacks(void **state)
{
    (void)state;
    pp_adamw_variant va = variant(PP_FMT_FP32, PP_FMT_FP32, PP_FMT_FP32, PP_ADAMW_TORCH, PP_ADAMW_KERNELS_CUDA_FUSED);
    pp_adamw_problem pr = {.kind = PP_ADAMW_GRAD_SYNTHETIC, .n = 1, .steps = 1, .snr = 1.0};
    double th0 = 1.0;
    char msg[200];
    assert_int_equal(pp_adamw_check(&va, &pr, &th0, msg, sizeof msg), 0);
    va.kahan = 1;
    assert_int_equal(pp_adamw_check(&va, &pr, &th0, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "cuda-fused"));
    va.kahan = 0;
    va.update = PP_ADAMW_ANYPRECISION;
    assert_int_equal(pp_adamw_check(&va, &pr, &th0, msg, sizeof msg), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(momentum_alpha_bf16_on_cpu_fp32_on_cuda),
        cmocka_unit_test(momentum_lerp_same_on_both),
        cmocka_unit_test(variance_addcmul_grouping_differs),
        cmocka_unit_test(denom_reciprocal_multiply_on_cuda),
        cmocka_unit_test(addcdiv_fused_on_cuda),
        cmocka_unit_test(elem_step_kahan_uses_fused_addcdiv),
        cmocka_unit_test(fused_scalars_are_binary32),
        cmocka_unit_test(fused_momentum_two_fmas),
        cmocka_unit_test(fused_variance_two_fmas),
        cmocka_unit_test(fused_stores_each_state_once),
        cmocka_unit_test(cuda_powf_is_not_glibc),
        cmocka_unit_test(fused_refuses_what_torch_lacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
