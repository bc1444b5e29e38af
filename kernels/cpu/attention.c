// cpu/attention.c — the CPU emulation of attention: the launch plan (kernels/attention_plan.c,
// the GPU's sequence of launches and per-thread bodies) run on the CPU device
// (cpu/attention_device.c). The order of every operation is the plan's; nothing is restated here.
#include "attention.h"
#include "attention_te_fp8.h"
#include "attention_te_fp8_bwd.h"

#include "attention_check.h"
#include "attention_device.h"

int pp_attention_cpu_opts(const pp_attn_variant *v, const pp_attn_dims *dm, int backward,
                          const double *q, const double *k, const double *vv, const double *dout,
                          double *out, double *lse, double *dq, double *dk, double *dv, int threads,
                          const pp_attn_cpu_opts *opts, pp_error *err)
{
    int force_cp = opts && opts->force_cp;
    char msg[sizeof err->msg] = "";
    if (v->fp8 == PP_ATTN_FP8_TE) {  // not the launch plan's: its own row loop (cpu/attention_te_fp8.c)
        if (pp_attn_check(v, dm, backward, force_cp, q, k, vv, dout, out, lse, dq, dk, dv, msg, sizeof msg))
            return pp_fail(err, PP_ERR_INPUT, "%s", msg);
        if (backward)  // cpu/attention_te_fp8_bwd.c: forward and backward
            return pp_attn_te_fp8_bwd_cpu(v, dm, q, k, vv, dout, out, lse, dq, dk, dv, threads, NULL,
                                          opts ? opts->ranges : NULL, err);
        return pp_attn_te_fp8_cpu(v, dm, q, k, vv, out, lse, threads, NULL, err);
    }
    if (v->engine != PP_ATTN_ENGINE_OURS) {  // src/pipeline/run.c's --cross-check skips on this message
        int cp = force_cp || v->cp_world > 1;
        if (pp_attn_check(v, dm, backward, cp, q, k, vv, dout, out, lse, dq, dk, dv, msg, sizeof msg))
            return pp_fail(err, PP_ERR_INPUT, "%s", msg);
        return pp_fail(err, PP_ERR_RUNTIME, "attention: engine 'cublas' runs only on the GPU (--device cuda)");
    }
    pp_attn_cpu_ctx ctx = {.threads = threads, .portable = opts ? opts->portable : 0, .errbuf = msg,
                           .errlen = sizeof msg, .ranges = opts ? opts->ranges : NULL,
                           .isa = opts ? opts->isa : PP_ISA_AUTO};
    pp_attn_device dev;
    pp_attn_cpu_device(&ctx, &dev);
    int rc = pp_attn_plan_run_opts(&dev, v, dm, backward, force_cp, q, k, vv, dout, out, lse, dq, dk, dv, msg,
                                   sizeof msg);
    if (rc)
        return pp_fail(err, rc == 2 ? PP_ERR_INPUT : PP_ERR_RUNTIME, "%s", msg);
    return PP_OK;
}

int pp_attention_cpu(const pp_attn_variant *v, const pp_attn_dims *dims, int backward,
                     const double *q, const double *k, const double *vv, const double *dout,
                     double *out, double *lse, double *dq, double *dk, double *dv, int threads,
                     pp_error *err)
{
    return pp_attention_cpu_opts(v, dims, backward, q, k, vv, dout, out, lse, dq, dk, dv, threads,
                                 NULL, err);
}
