// adamw_ref_dd_scal.h — the per-step scalars of the double-double AdamW reference (shared by the
// element, adamw_ref_dd.h, and its step, adamw_ref_dd_step.h). Internal to reference/.
#ifndef PP_ADAMW_REF_DD_SCAL_H
#define PP_ADAMW_REF_DD_SCAL_H

// Step t's scalars a = lr_t/(1 − β1^t), b = 1/√(1 − β2^t), dec = 1 − lr_t·wd as double-doubles
// (hi, lo) with |x − (hi + lo)| ≤ rx·x, and upper bounds x_d ≥ |x|.
typedef struct pp_adamw_dd_scal_ {
    double a[2], b[2], dec[2];
    double a_d, b_d, dec_d;
    double ra, rb, rdec;
} pp_adamw_dd_scal_;

#endif
