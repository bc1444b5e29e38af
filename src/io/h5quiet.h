// h5quiet.h — HDF5's error printing switched off around a stretch of libhdf5 calls. HDF5 prints
// its error stack to stderr by default; precprobe reports each failure its own way (one pp_error
// line, or a cache miss). The handler found at the start is restored at the end, so a caller's
// own setting survives.
#ifndef PP_H5QUIET_H
#define PP_H5QUIET_H

#include <hdf5.h>

typedef struct pp_h5_quiet {
    H5E_auto2_t func;
    void *data;
} pp_h5_quiet;

// Saves the current handler into *q and silences HDF5.
void pp_h5_quiet_begin(pp_h5_quiet *q);

// Restores the handler pp_h5_quiet_begin saved.
void pp_h5_quiet_end(const pp_h5_quiet *q);

#endif
