// test_adamw_torch_kernels.c — the two torch_kernels flavours of kernels/adamw.h on hand-computed
// cases: each documented difference between PyTorch's CUDA and CPU kernels gives the bits derived
// below, and the ops that do not differ give equal bits.
//
// Every expected value was derived with exact rational arithmetic, rounding once per operation
// (round to nearest even) to binary32 (24-bit significand) or bf16 (8-bit); "exact" marks a
// product or quotient before its rounding. u32 = 2^−24 relative.
// Run: make build/rel/tests/test_adamw_torch_kernels && build/rel/tests/test_adamw_torch_kernels
#include "test_util.h"

#include "adamw.h"
#include "adamw_problem.h"

static pp_adamw_variant variant(pp_format_id P, pp_format_id M, pp_format_id V, pp_adamw_update u,
                                pp_adamw_kernels k)
{
    pp_adamw_variant va = {P, M, V, PP_FMT_BF16, 0, 0, u, k, 0};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(momentum_alpha_bf16_on_cpu_fp32_on_cuda),
        cmocka_unit_test(momentum_lerp_same_on_both),
        cmocka_unit_test(variance_addcmul_grouping_differs),
        cmocka_unit_test(denom_reciprocal_multiply_on_cuda),
        cmocka_unit_test(addcdiv_fused_on_cuda),
        cmocka_unit_test(elem_step_kahan_uses_fused_addcdiv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
