// sweep_h5.h — a sweep's statistics as sweep.h5 (layout: reports/README.md, "sweep.h5"), written
// atomically from an in-memory image like report.h5, and read back into the same result.
#ifndef PP_SWEEP_H5_H
#define PP_SWEEP_H5_H

#include "report/sweep_result.h"

int pp_sweep_h5_write(const char *path, const pp_sweep_result *res, pp_error *err);

// Reads sweep.h5 into res (free with pp_sweep_result_free, also after a failure). PP_ERR_INPUT
// when the file is not a sweep.h5 of this layout, naming what is missing.
int pp_sweep_h5_read(const char *path, pp_sweep_result *res, pp_error *err);

#endif
