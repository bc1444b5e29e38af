// safetensors.h — safetensors files (the format of safetensors.torch.save_file): an 8-byte
// little-endian header length N, N bytes of JSON header, then the byte buffer the header indexes.
// Floating dtypes are read natively (a BF16 tensor stays bf16); writing follows the reference
// implementation byte for byte.
#ifndef PP_SAFETENSORS_H
#define PP_SAFETENSORS_H

#include <stddef.h>

#include "error.h"
#include "core/tensor.h"

// Largest header accepted, as in the reference implementation: a bigger one is hostile.
#define PP_SAFETENSORS_MAX_HEADER 100000000u

// Parses a whole safetensors file held in buf[0..n) and loads one tensor from it.
// @param [in]  file         the file's name, the first word of every error message
// @param [in]  tensor_name  the tensor to load; NULL: the file must hold exactly one tensor
// @param [out] t            values exact, format from the dtype: F64 fp64, F32 fp32, F16 fp16,
//                           BF16 bf16, F8_E4M3 e4m3, F8_E5M2 e5m2; zeroed on failure.
// The whole header is validated first, whatever tensor is asked for: the header length
// (<= 100 MB and within the file), UTF-8 JSON starting with '{', an object of
// name -> {"dtype": string, "shape": [int...], "data_offsets": [begin, end]} plus an optional
// "__metadata__" object of strings, unique names, at most PP_MAX_DIMS dimensions, no negative
// extent and at most PP_MAX_NUMEL elements, begin <= end within the buffer,
// end - begin == numel x itemsize (for the dtypes the reference implementation defines), and
// the tensors tiling the buffer exactly: sorted by offset they start at 0, each begins where the
// previous ends (no overlap, no hole) and the last ends at the end of the file. Holes are
// rejected because the reference implementation rejects them (MetadataIncompleteBuffer): the
// spec says the byte buffer must be entirely indexed, which prevents polyglot files.
// Tensors of other dtypes (I64, BOOL, ...) may sit in the file; loading one is an error naming
// its dtype.
// Returns PP_OK, PP_ERR_INPUT (one line: what is wrong, or which names the file holds) or
// PP_ERR_RUNTIME (out of memory).
int pp_safetensors_parse(const unsigned char *buf, size_t n, const char *file,
                         const char *tensor_name, pp_tensor *t, pp_error *err);

// pp_safetensors_parse on the bytes of the file at path (mapped, not copied).
int pp_safetensors_read(const char *path, const char *tensor_name, pp_tensor *t, pp_error *err);

// The tensor names in a validated file, in the order of their data (by offset), as a
// NULL-terminated array of strings the caller frees with pp_safetensors_free_names.
// @param [out] names  set on success, NULL on failure
// @param [out] count  the number of names (may be 0)
// Returns PP_OK, PP_ERR_INPUT or PP_ERR_RUNTIME, as pp_safetensors_parse.
int pp_safetensors_list_parse(const unsigned char *buf, size_t n, const char *file, char ***names,
                              int *count, pp_error *err);
int pp_safetensors_list(const char *path, char ***names, int *count, pp_error *err);
void pp_safetensors_free_names(char **names);

// Writes count tensors to path, atomically, as the reference implementation does: each in its
// format's dtype (tf32 as F32), sorted by dtype alignment (F64, F32, BF16, F16, F8_E4M3,
// F8_E5M2) then by name (bytewise), packed in that order, the compact JSON header padded with
// spaces to a multiple of 8 bytes, no "__metadata__".
// @param [in] names  count distinct UTF-8 names, none empty nor "__metadata__"
// @param [in] ts     count tensors, each with values representable in its format
// Returns PP_OK, PP_ERR_INPUT (bad name, duplicate, unrepresentable value) or PP_ERR_RUNTIME
// (the write failed; nothing is left at path but what was there before).
int pp_safetensors_write(const char *path, int count, const char *const *names,
                         const pp_tensor *const *ts, pp_error *err);

// Adds tensor name to the safetensors file at path or replaces it there, keeping the other
// tensors (their bytes untouched, whatever their dtype among the reference's BOOL..U64) and the
// "__metadata__"; a missing file is created. The result is laid out as pp_safetensors_write
// lays it out. Atomic.
// Returns PP_OK, PP_ERR_INPUT (an existing file that is not valid safetensors or holds a dtype
// precprobe does not know, a bad name or value) or PP_ERR_RUNTIME.
int pp_safetensors_update(const char *path, const char *name, const pp_tensor *t, pp_error *err);

#endif
