// op_adamw.c — the operation-table row of AdamW: T optimizer steps over n parameters in the
// variant's formats (kernels/adamw.h), against exact AdamW in MPFR (reference/adamw_ref.c), with
// per-step series (θ error against the exact trajectory, loss) for the reports.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adamw_ref.h"
#include "cpu/adamw.h"
#include "ops/op.h"
#ifdef PP_HAVE_CUDA
#include "cuda/adamw_cuda.h"
#endif

enum {
    P_N, P_STEPS, P_LR, P_BETA1, P_BETA2, P_EPS, P_WD, P_GRADIENTS, P_SCHEDULE, P_WARMUP, P_SCALE, P_SNR,
    P_ROWS, P_NOISE
};
enum { K_PARAM, K_MOMENTUM, K_VARIANCE, K_KAHAN, K_COMP, K_ROUNDING, K_UPDATE, K_TORCH_KERNELS };

// In pp_adamw_grad_kind's order: the choice's index is the kind (kernels/adamw_problem.h).
static const char *const grad_names[] = {"synthetic", "quadratic", "linear-regression", "input", NULL};
static const char *const sched_names[] = {"constant", "warmup-linear", "cosine", NULL};

static const pp_param_def params[] = {
    [P_N] = {"n", PP_PARAM_INT, 1, 1 << 24, 0, 1, "number of parameters (features, for linear regression)"},
    [P_STEPS] = {"steps", PP_PARAM_INT, 1, 1000000, 100, 0, "optimizer steps T"},
    [P_LR] = {"lr", PP_PARAM_FLOAT, 0, 10, 1e-3, 0, "learning rate (peak, with a schedule)"},
    [P_BETA1] = {"beta1", PP_PARAM_FLOAT, 0, 0.999999, 0.9, 0, "first-moment decay"},
    [P_BETA2] = {"beta2", PP_PARAM_FLOAT, 0, 0.99999999, 0.999, 0, "second-moment decay"},
    [P_EPS] = {"eps", PP_PARAM_FLOAT, 1e-30, 1, 1e-8, 0, "added to the bias-corrected sqrt(v)"},
    [P_WD] = {"weight_decay", PP_PARAM_FLOAT, 0, 1, 0, 0, "decoupled weight decay (θ ← θ(1 − lr·wd) first)"},
    [P_GRADIENTS] = {"gradients", PP_PARAM_CHOICE, 0, 0, 0, 0,
                     "gradient source: synthetic (per step and element from the seed), quadratic, "
                     "linear-regression, input (the input tensor grads [steps, n]: g of step t is row t - 1; "
                     "e.g. a user's recorded gradients, file = ...)", grad_names},
    [P_SCHEDULE] = {"lr_schedule", PP_PARAM_CHOICE, 0, 0, 0, 0,
                    "constant, warmup-linear (lr·t/warmup, then lr), cosine (the warm-up, then cosine to 0)",
                    sched_names},
    [P_WARMUP] = {"warmup", PP_PARAM_INT, 0, 1000000, 0, 0, "warm-up steps of the schedule"},
    [P_SCALE] = {"grad_scale", PP_PARAM_FLOAT, 1e-30, 1e30, 1.0, 0, "synthetic: gradient scale"},
    [P_SNR] = {"snr", PP_PARAM_FLOAT, 1e-30, 1e300, 1.0, 0,
               "synthetic: signal-to-noise ratio (std of the per-element signal / std of the per-step noise)"},
    [P_ROWS] = {"rows", PP_PARAM_INT, 1, 1 << 20, 256, 0, "linear regression: data rows"},
    [P_NOISE] = {"label_noise", PP_PARAM_FLOAT, 0, 1e6, 0.1, 0, "linear regression: label noise std"},
};

static const char *const formats[] = {"fp32", "bf16", "fp16", NULL};
static const char *const onoff[] = {"off", "on", NULL};
static const char *const roundings[] = {"nearest", "stochastic", NULL};
static const char *const updates[] = {"anyprecision", "torch", NULL};
static const char *const torch_kernels[] = {"cuda", "cpu", "cuda-fused", NULL};
// What each choice means to the kernels (kernels/adamw.h), by name (op.h).
static const pp_knob_meaning onoff_ids[] = {{"off", 0}, {"on", 1}, {NULL, 0}};
static const pp_knob_meaning stochastic_ids[] = {{"nearest", 0}, {"stochastic", 1}, {NULL, 0}};
static const pp_knob_meaning update_ids[] = {
    {"anyprecision", PP_ADAMW_ANYPRECISION}, {"torch", PP_ADAMW_TORCH}, {NULL, 0}};
static const pp_knob_meaning torch_kernels_ids[] = {
    {"cuda", PP_ADAMW_KERNELS_CUDA}, {"cpu", PP_ADAMW_KERNELS_CPU}, {"cuda-fused", PP_ADAMW_KERNELS_CUDA_FUSED},
    {NULL, 0}};
static const pp_knob_def knobs[] = {
    [K_PARAM] = {"param_format", formats, "fp32", "dtype of θ (and of the gradient)", .meanings = pp_knob_formats},
    [K_MOMENTUM] = {"momentum_format", formats, "fp32", "dtype of m (exp_avg)", .meanings = pp_knob_formats},
    [K_VARIANCE] = {"variance_format", formats, "fp32", "dtype of v (exp_avg_sq) and of the denominator",
                    .meanings = pp_knob_formats},
    [K_KAHAN] = {"kahan", onoff, "off", "Kahan-compensated θ store (AnyPrecisionAdamW's use_kahan_summation)",
                 .meanings = onoff_ids},
    [K_COMP] = {"compensation_format", formats, "bf16", "dtype of the Kahan compensation buffer",
                .meanings = pp_knob_formats},
    [K_ROUNDING] = {"rounding", roundings, "nearest", "θ stores: round to nearest even, or stochastic (Philox)",
                    .meanings = stochastic_ids},
    [K_UPDATE] = {"update", updates, "anyprecision",
                  "anyprecision: AnyPrecisionAdamW's order, fp32 0-d step tensor; torch: torch.optim.AdamW "
                  "order, binary64 bias corrections",
                  .meanings = update_ids},
    [K_TORCH_KERNELS] = {"torch_kernels", torch_kernels, "cuda",
                         "whose tensor kernels: cuda (PyTorch's CUDA kernels: alpha kept in fp32, fused "
                         "addcmul/addcdiv, division by the step tensor as a reciprocal multiply), cpu "
                         "(PyTorch's CPU kernels, bit-equal to torch on x86-64) or cuda-fused "
                         "(torch.optim.AdamW(fused=True)'s one CUDA kernel: binary32 throughout, each state "
                         "stored once; update = torch, kahan off)",
                         .meanings = torch_kernels_ids},
};
// grads: the gradient of every step, [steps, n] with gradients = "input", else empty ([0, n])
static const char *const inputs[] = {"theta0", "grads"};
static const char *const outputs[] = {"theta", "m", "v"};
// the axes of each, as letters (layout = ... in a case orders them as a file holds them): t the step
static const char *const input_layouts[] = {"n", "tn"};
static const char *const output_layouts[] = {"n", "n", "n"};
static const char *const ref_methods[] = {"fast", "mpfr-plain", NULL};

static double prm(const pp_op_params *p, int i)
{
    return p->given[i] ? p->v[i] : params[i].def;
}

static pp_adamw_problem problem(const pp_op_params *p, const pp_tensor *in)
{
    pp_adamw_problem pr;
    memset(&pr, 0, sizeof pr);
    pr.kind = (pp_adamw_grad_kind)(int)prm(p, P_GRADIENTS);
    pr.n = (int64_t)prm(p, P_N);
    pr.steps = (int)prm(p, P_STEPS);
    pr.seed = p->seed;  // the case's seed: gradients, problem data, stochastic-rounding bits
    pr.hyper = (pp_adamw_hyper){prm(p, P_LR), prm(p, P_BETA1), prm(p, P_BETA2), prm(p, P_EPS), prm(p, P_WD)};
    pr.schedule = (pp_adamw_schedule)(int)prm(p, P_SCHEDULE);
    pr.warmup = (int)prm(p, P_WARMUP);
    pr.grad_scale = prm(p, P_SCALE);
    pr.snr = prm(p, P_SNR);
    pr.rows = (int64_t)prm(p, P_ROWS);
    pr.label_noise = prm(p, P_NOISE);
    pr.grads = pr.kind == PP_ADAMW_GRAD_INPUT && in ? in[1].data : NULL;
    return pr;
}

// A knob's value as the enum it stands for (by name: op.h).
static int id(const pp_op_knobs *k, int knob)
{
    return pp_knob_id(&knobs[knob], k->v[knob]);
}

static pp_adamw_variant variant(const pp_op_knobs *k)
{
    pp_adamw_variant v = {.param = (pp_format_id)id(k, K_PARAM), .momentum = (pp_format_id)id(k, K_MOMENTUM),
                          .variance = (pp_format_id)id(k, K_VARIANCE), .compensation = (pp_format_id)id(k, K_COMP),
                          .kahan = id(k, K_KAHAN), .stochastic = id(k, K_ROUNDING),
                          .update = (pp_adamw_update)id(k, K_UPDATE),
                          .kernels = (pp_adamw_kernels)id(k, K_TORCH_KERNELS)};
    return v;
}

// torch_kernels = cuda-fused is one optimizer's kernel (kernels/adamw.h "The fused kernel").
static const char knob_rules[] = "torch_kernels cuda-fused with update torch and kahan off";

static int check_knobs(const pp_op_params *p, const pp_op_knobs *k, char *msg, size_t n)
{
    (void)p;
    pp_adamw_variant va = variant(k);
    if (va.kernels == PP_ADAMW_KERNELS_CUDA_FUSED && va.update != PP_ADAMW_TORCH) {
        snprintf(msg, n, "torch_kernels = \"cuda-fused\" is torch.optim.AdamW(fused=True): it needs update = "
                         "\"torch\"");
        return -1;
    }
    if (va.kernels == PP_ADAMW_KERNELS_CUDA_FUSED && va.kahan) {
        snprintf(msg, n, "torch_kernels = \"cuda-fused\" has no Kahan summation (torch's fused kernel stores "
                         "theta directly): kahan must be \"off\"");
        return -1;
    }
    return 0;
}

static int check_params(const pp_op_params *p, char *msg, size_t n)
{
    double work = prm(p, P_N) * prm(p, P_STEPS);
    if ((int)prm(p, P_GRADIENTS) == PP_ADAMW_GRAD_LINREG)
        work *= 2 * prm(p, P_ROWS);
    if (work > 1e11) {
        snprintf(msg, n, "n·steps (·2·rows for linear regression) = %.3g; at most 1e11", work);
        return -1;
    }
    return 0;
}

static void shape(const pp_op_params *p, int is_output, int i, int *ndim, int64_t *s)
{
    *ndim = 1;
    s[0] = (int64_t)prm(p, P_N);
    if (!is_output && i == 1) {  // grads: a row per step, only when the gradients are this input
        *ndim = 2;
        s[0] = (int)prm(p, P_GRADIENTS) == PP_ADAMW_GRAD_INPUT ? (int64_t)prm(p, P_STEPS) : 0;
        s[1] = (int64_t)prm(p, P_N);
    }
}

static pp_format_id format(const pp_op_knobs *k)
{
    return (pp_format_id)id(k, K_PARAM);
}

// θ in param_format, m in momentum_format, v in variance_format.
static pp_format_id output_format(const pp_op_knobs *k, int i)
{
    return (pp_format_id)id(k, i == 0 ? K_PARAM : i == 1 ? K_MOMENTUM : K_VARIANCE);
}

static void describe(const pp_op_params *p, char *buf, size_t n)
{
    pp_adamw_problem pr = problem(p, NULL);
    char src[160];
    if (pr.kind == PP_ADAMW_GRAD_SYNTHETIC)
        snprintf(src, sizeof src, "synthetic (scale %.6g, snr %.6g)", pr.grad_scale, pr.snr);
    else if (pr.kind == PP_ADAMW_GRAD_LINREG)
        snprintf(src, sizeof src, "linear-regression (%lld rows, label noise %.6g)", (long long)pr.rows,
                 pr.label_noise);
    else if (pr.kind == PP_ADAMW_GRAD_INPUT)
        snprintf(src, sizeof src, "input (grads[%d, %lld])", pr.steps, (long long)pr.n);
    else
        snprintf(src, sizeof src, "%s", grad_names[pr.kind]);
    snprintf(buf, n, "AdamW on theta[%lld], %d steps, gradients %s, lr %.6g %s (warm-up %d), betas (%.6g, %.6g), "
             "eps %.6g, weight_decay %.6g",
             (long long)pr.n, pr.steps, src, pr.hyper.lr, sched_names[pr.schedule], pr.warmup, pr.hyper.beta1,
             pr.hyper.beta2, pr.hyper.eps, pr.hyper.weight_decay);
}

// ---------------------------------------------------------------------------------------------
// CPU emulation and reference, traced

static void trace_free(void *t)
{
    if (t) {
        pp_adamw_trace_free(t);
        free(t);
    }
}

static int run_cpu_traced(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                          int threads, void **trace, pp_error *err)
{
    pp_adamw_problem pr = problem(p, in);
    pp_adamw_variant va = variant(k);
    va.exact_sites = p->exact_sites;  // `precprobe explain` (kernels/adamw.h "Exact sites")
    pp_adamw_trace *t = NULL;
    if (trace && !(t = calloc(1, sizeof *t)))
        return pp_fail(err, PP_ERR_RUNTIME, "adamw: out of memory");
    int rc = pp_adamw_cpu_ranges(&va, &pr, in[0].data, out[0].data, out[1].data, out[2].data, NULL, t, threads,
                                 PP_ADAMW_PATH_VECTOR, p->ranges, err);
    if (rc) {
        free(t);
        return rc;
    }
    if (trace)
        *trace = t;
    return PP_OK;
}

// Range diagnostics: θ in parameter blocks of 1024 elements, at most 64 blocks (then n/64 each,
// rounded up; kernels/cpu/adamw.h pp_adamw_cpu_ranges cuts θ into that many equal blocks).
static int64_t range_heads(const pp_op_params *p)
{
    int64_t n = problem(p, NULL).n, blocks = (n + 1023) / 1024;
    return blocks < 1 ? 1 : blocks > 64 ? 64 : blocks;
}

static int run_cpu(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out, int threads,
                   pp_error *err)
{
    return run_cpu_traced(p, k, in, out, threads, NULL, err);
}

#ifdef PP_HAVE_CUDA
// The GPU run (kernels/cuda/adamw_kernels.cu: the CPU emulation's statements and sum order, so
// the same bits; --cross-check compares them), traced like run_cpu_traced.
static int run_cuda_traced(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                           void **trace, pp_error *err)
{
    pp_adamw_problem pr = problem(p, in);
    pp_adamw_variant va = variant(k);
    // the GPU kernels read gradients from the seed or θ on the device; a grads tensor is host memory
    if (pr.kind == PP_ADAMW_GRAD_INPUT)
        return pp_fail(err, PP_ERR_RUNTIME, "adamw on cuda: gradients = \"input\" runs on the CPU emulation only "
                       "(--device cpu)");
    if (p->exact_sites)
        return pp_fail(err, PP_ERR_RUNTIME, "adamw on cuda: exact sites run on the CPU emulation only");
    pp_adamw_trace *t = NULL;
    if (trace && !(t = calloc(1, sizeof *t)))
        return pp_fail(err, PP_ERR_RUNTIME, "adamw: out of memory");
    char msg[400] = "";
    int rc = pp_adamw_cuda_ranges(&va, &pr, in[0].data, out[0].data, out[1].data, out[2].data, NULL, t, 0,
                                  p->ranges, msg, sizeof msg);
    if (rc) {
        free(t);
        return pp_fail(err, rc, "adamw on cuda: %s", msg);
    }
    if (trace)
        *trace = t;
    return PP_OK;
}

static int run_cuda(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out, pp_error *err)
{
    return run_cuda_traced(p, k, in, out, NULL, err);
}
#endif

static int reference_traced(const pp_op_params *p, pp_format_id in_format, const pp_tensor *in, pp_tensor *out,
                            pp_reference_info *info, const pp_ref_ctx *ctx, void **trace, pp_error *err)
{
    int threads = ctx ? ctx->threads : 1;
    pp_adamw_problem pr = problem(p, in);
    pp_adamw_trace *t = NULL;
    if (trace && !(t = calloc(1, sizeof *t)))
        return pp_fail(err, PP_ERR_RUNTIME, "adamw reference: out of memory");
    double bound[3];
    // fast: double-double per element with MPFR where it cannot certify (linear regression: MPFR);
    // mpfr-plain: every element in MPFR at PP_ADAMW_REF_PREC bits
    int plain = ctx && ctx->method && !strcmp(ctx->method, "mpfr-plain");
    int fast = !plain && pr.kind != PP_ADAMW_GRAD_LINREG;
    int rc = pp_adamw_ref(&pr, in_format, plain ? PP_ADAMW_REF_PREC : 0, in[0].data, out[0].data, out[1].data, out[2].data, bound, t, threads,
                          err);
    if (rc) {
        free(t);
        return rc;
    }
    for (int i = 0; i < 3; i++) {
        snprintf(info[i].tensor, sizeof info[i].tensor, "%s", outputs[i]);
        if (fast)
            snprintf(info[i].method, sizeof info[i].method,
                     "double-double (exact AdamW trajectory, running bound; mpfr-%d where it cannot certify)",
                     PP_ADAMW_REF_PREC);
        else
            snprintf(info[i].method, sizeof info[i].method, "mpfr-%d (exact AdamW trajectory, running bound)",
                     PP_ADAMW_REF_PREC);
        info[i].error_bound = bound[i];
    }
    if (trace)
        *trace = t;
    return PP_OK;
}

static int reference(const pp_op_params *p, pp_format_id in_format, const pp_tensor *in, pp_tensor *out,
                     pp_reference_info *info, const pp_ref_ctx *ctx, pp_error *err)
{
    return reference_traced(p, in_format, in, out, info, ctx, NULL, err);
}

// Series at the snapshot steps (1, 2, 3, 5, 7, 10, ..., T), against the exact trajectory:
// theta_max_abs_error, theta_max_rel_error, theta_mean_abs_error, and progress = the fraction of
// the exact displacement the variant made, Σ(θ − θ₀)(θ* − θ₀)/Σ(θ* − θ₀)² (1: on track; 0: stalled;
// θ* the exact θ at that step). For problems with a loss, loss and loss_exact at every step 0..T.
static int series(const pp_op_params *p, const pp_op_knobs *k, const void *trace, const void *ref_trace,
                  pp_series **out, int *n, pp_error *err)
{
    (void)k;
    const pp_adamw_trace *a = trace, *e = ref_trace;
    *out = NULL;
    *n = 0;
    if (!a || !e || a->n_snaps != e->n_snaps)
        return PP_OK;
    int64_t np = (int64_t)prm(p, P_N);
    int T = (int)prm(p, P_STEPS), ns = a->loss && e->loss ? 6 : 4;
    pp_series *s = calloc((size_t)ns, sizeof *s);
    if (!s || pp_series_alloc(&s[0], "theta_max_abs_error", a->n_snaps) ||
        pp_series_alloc(&s[1], "theta_max_rel_error", a->n_snaps) ||
        pp_series_alloc(&s[2], "theta_mean_abs_error", a->n_snaps) ||
        pp_series_alloc(&s[3], "progress", a->n_snaps) ||
        (ns == 6 && (pp_series_alloc(&s[4], "loss", T + 1) || pp_series_alloc(&s[5], "loss_exact", T + 1)))) {
        for (int i = 0; s && i < ns; i++)
            free(s[i].step), free(s[i].value);
        free(s);
        return pp_fail(err, PP_ERR_RUNTIME, "adamw: out of memory for the series");
    }
    for (int j = 0; j < a->n_snaps; j++) {
        const double *x = a->snap + (int64_t)j * np, *y = e->snap + (int64_t)j * np;
        double ma = 0, mr = 0, sum = 0, dot = 0, dd = 0;
        for (int64_t i = 0; i < np; i++) {
            double d = fabs(x[i] - y[i]);
            double dx = x[i] - a->theta0[i], dy = y[i] - e->theta0[i];
            sum += d;
            dot += dx * dy;
            dd += dy * dy;
            ma = d > ma || d != d ? d : ma;
            if (y[i] != 0) {
                double r = d / fabs(y[i]);
                mr = r > mr || r != r ? r : mr;
            }
        }
        for (int q = 0; q < 4; q++)
            s[q].step[j] = a->snap_step[j];
        s[0].value[j] = ma;
        s[1].value[j] = mr;
        s[2].value[j] = sum / (double)np;
        s[3].value[j] = dd > 0 ? dot / dd : NAN;
    }
    for (int t = 0; ns == 6 && t <= T; t++) {
        s[4].step[t] = s[5].step[t] = t;
        s[4].value[t] = a->loss[t];
        s[5].value[t] = e->loss[t];
    }
    *out = s;
    *n = ns;
    return PP_OK;
}

static const pp_op_series_hooks hooks = {run_cpu_traced, reference_traced, series, trace_free,
                                         PP_CUDA_FN(run_cuda_traced)};

// The sites explain can make exact (kernels/adamw.h "Exact sites"): every store, the Kahan
// compensation's only with kahan, the gradient's only where the emulation computes it (quadratic,
// linear regression): a given gradient (synthetic, input) is the value of P the reference steps on
// too, its rounding the input's quantisation and no rounding of the optimizer.
static uint64_t explain_sites(const pp_op_params *p, const pp_op_knobs *k)
{
    uint64_t m = 0;
    for (int s = PP_SITE_ADAMW_FIRST; s < PP_SITE_ADAMW_END; s++)
        m |= PP_SITE_BIT(s);
    if (!variant(k).kahan)
        m &= ~PP_SITE_BIT(PP_SITE_ADAMW_COMP);
    pp_adamw_grad_kind g = (pp_adamw_grad_kind)(int)prm(p, P_GRADIENTS);
    if (g == PP_ADAMW_GRAD_SYNTHETIC || g == PP_ADAMW_GRAD_INPUT)
        m &= ~PP_SITE_BIT(PP_SITE_ADAMW_G);
    return m;
}

const pp_op pp_op_adamw = {
    .name = "adamw",
    .doc = "T AdamW steps on theta[n] (AnyPrecisionAdamW or torch.optim.AdamW order), states in any format",
    .params = params,
    .n_params = (int)(sizeof params / sizeof params[0]),
    .knobs = knobs,
    .n_knobs = (int)(sizeof knobs / sizeof knobs[0]),
    .inputs = inputs,
    .n_inputs = 2,
    .outputs = outputs,
    .n_outputs = 3,
    .explain_sites = explain_sites,
    .input_layouts = input_layouts,
    .output_layouts = output_layouts,
    .check_params = check_params,
    .check_knobs = check_knobs,
    .knob_rules = knob_rules,
    .shape = shape,
    .format = format,
    .output_format = output_format,
    .describe = describe,
    .run_cpu = run_cpu,
    .run_cuda = PP_CUDA_FN(run_cuda),
    .reference = reference,
    .ref_methods = ref_methods,
    .traced = &hooks,
    .range_heads = range_heads,
    .range_cuda = 1,  // the GPU kernels note too (cuda/adamw_cuda.h, pp_adamw_cuda_ranges)
};
