// pt.h — PyTorch's torch.save files (.pt, .pth): a ZIP of stored entries (src/io/zip_stored.h)
// holding PREFIX/data.pkl, a pickle naming the tensors (src/io/pt_pickle.h: read by a
// restricted interpreter, never executed), and PREFIX/data/KEY, each storage's raw little-endian
// bytes. A tensor is read through its storage offset, size and stride, so views (a transposed
// tensor, a slice) read as torch would show them.
#ifndef PP_PT_H
#define PP_PT_H

#include <stddef.h>

#include "error.h"
#include "core/tensor.h"

// Parses a whole torch.save file held in buf[0..n) and loads one tensor from it.
// @param [in]  file  the file's name, the first word of every error message
// @param [in]  name  the dict key to load (in nested dicts, the keys joined with '.':
//                    "layer.weight"); NULL: the file holds one tensor (alone, or the only tensor of
//                    its dict)
// @param [out] t     values exact, format from the dtype (float64, float32, float16, bfloat16,
//                    float8_e4m3fn, float8_e5m2); zeroed on failure.
// Rejected (PP_ERR_INPUT, one line): what pp_zip_open and pp_pt_unpickle reject, the legacy
// (pre-1.6, not ZIP) format, a missing or ambiguous data.pkl, a big-endian archive, a CRC
// mismatch of data.pkl or of the storage read, a missing name (the message lists the tensors), a
// value that is not a tensor, a dtype precprobe does not read, a storage whose size is not its
// record's, and a tensor whose offset, size and stride reach outside its storage.
// Returns PP_OK, PP_ERR_INPUT or PP_ERR_RUNTIME (out of memory).
int pp_pt_parse(const unsigned char *buf, size_t n, const char *file, const char *name, pp_tensor *t,
                pp_error *err);

// pp_pt_parse on the bytes of the file at path (mapped, not copied).
int pp_pt_read(const char *path, const char *name, pp_tensor *t, pp_error *err);

#endif
