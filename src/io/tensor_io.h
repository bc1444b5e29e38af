// tensor_io.h — loading and saving a tensor named by a spec (X.npy, X.safetensors:NAME,
// X.h5:/dataset, X.pt:NAME): the dispatch above the four formats (.pt is read only). What the formats share lies below them:
// file_bytes.h (whole-file reading), atomic_file.h (writing), printable.h, tensor_writable.h.
#ifndef PP_TENSOR_IO_H
#define PP_TENSOR_IO_H

#include "error.h"
#include "core/tensor.h"
// Re-exported for the spec API's callers, which name tensors in messages and check them before
// writing reports (pipeline/case.c, report/report_h5.c).
#include "io/printable.h"
#include "io/tensor_writable.h"

// ---------------------------------------------------------------------------------------------
// Specs

// The accepted spec forms, for usage texts and error messages.
#define PP_TENSOR_SPEC_FORMS \
    "FILE.npy, FILE.safetensors[:NAME], FILE.h5:/DATASET, FILE.hdf5:/DATASET or FILE.pt[:NAME] (.pth)"

// Loads the tensor spec names into *t (values as binary64, format from the file).
// @param [in]  spec  "X.npy"; "X.safetensors:NAME" or "X.safetensors" (the file must then hold
//                    exactly one tensor); "X.h5:/group/dataset" or "X.hdf5:/group/dataset";
//                    "X.pt:NAME" or "X.pt" (torch.save of a dict of tensors, or of one tensor;
//                    also ".pth"). The file name ends at the leftmost ".npy" ending the spec,
//                    ".safetensors", ".pt" or ".pth" followed by ':' or the end, or
//                    ".h5"/".hdf5" followed by ':'; what follows
//                    the ':' names the tensor or dataset (and may hold ':' and dots itself).
// @param [out] t     on success a tensor the caller frees with pp_tensor_free; zeroed on failure.
// Returns PP_OK, or PP_ERR_INPUT (unknown form, unreadable or malformed file, missing tensor)
// or PP_ERR_RUNTIME (out of memory), with a one-line message starting with the file name.
int pp_tensor_load(const char *spec, pp_tensor *t, pp_error *err);

// pp_tensor_load for files whose items do not say their format: raw_format (a pp_format_id, or
// -1 for none) is the format the caller declares, used where the file holds raw items (a .npy of
// '<V2' or '<V1' items, as numpy saves ml_dtypes' bfloat16 and float8 arrays); files that name
// their dtype ignore it (the caller checks the values against its declaration).
int pp_tensor_load_as(const char *spec, int raw_format, pp_tensor *t, pp_error *err);

// Saves t as the spec names, atomically (temporary file, then rename).
// @param [in] spec  as for pp_tensor_load; ".pt" is refused. "X.npy" replaces the file. "X.safetensors:NAME" adds
//                   or replaces the tensor NAME, keeping the file's other tensors and metadata
//                   (the name is required). "X.h5:/dataset" adds or replaces that dataset,
//                   keeping the rest of the file.
// Returns PP_OK, PP_ERR_INPUT (bad spec, a value not representable in t->format, an existing
// file that cannot be updated) or PP_ERR_RUNTIME (the write failed; the old file is intact).
int pp_tensor_save(const char *spec, const pp_tensor *t, pp_error *err);

#endif
