// pt_pickle.h — the data.pkl of a torch.save archive read by a restricted pickle interpreter:
// only what torch.save writes for a tensor or a dict of tensors (an OrderedDict state_dict
// included) is understood, and nothing is ever called or imported. Every other opcode and every
// global outside the short list below is refused with a one-line message naming it.
//
// Understood: PROTO 2-5, FRAME, STOP; MARK, the TUPLE opcodes, EMPTY_DICT, SETITEM(S); NONE,
// NEWTRUE/NEWFALSE, BININT/BININT1/BININT2/LONG1, BINUNICODE/SHORT_BINUNICODE; the memo
// (BINPUT, LONG_BINPUT, MEMOIZE, BINGET, LONG_BINGET); GLOBAL and STACK_GLOBAL of
// torch._utils._rebuild_tensor_v2/_v3, torch._utils._rebuild_parameter, collections.OrderedDict,
// torch.<Name>Storage, torch.storage.UntypedStorage and torch.<dtype>; BINPERSID of storage
// records ('storage', class, key, location, numel); REDUCE of the three rebuild functions and of
// OrderedDict(); BUILD on an OrderedDict (a state_dict's _metadata, ignored).
#ifndef PP_PT_PICKLE_H
#define PP_PT_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "core/tensor.h"

// Largest pickle accepted (a dict of thousands of tensors takes a few MB).
#define PP_PT_MAX_PICKLE ((size_t)256 << 20)

// One entry of what the pickle holds: the top-level tensor, or one key of the top-level dict; a
// dict nested in it (a state_dict of submodules, {"layer": {"weight": t}}) is flattened into its
// entries, named by the keys on the way joined with '.' ("layer.weight"), as state_dict names them.
typedef struct pp_pt_record {
    const char *name;        // the key, name_len bytes (in the pickle's bytes, or owned by the
    size_t name_len;         // contents for a joined name); NULL: a top-level tensor
    const char *what;        // NULL for a tensor; else what the value is ("an integer", "a dict", ...)
    const char *key;         // the tensor's storage record key (the archive's data/KEY), key_len bytes
    size_t key_len;
    int format;              // a pp_format_id, or -1 when precprobe does not read the dtype
    char dtype[40];          // torch's name of the dtype ("bfloat16", "int64")
    int64_t storage_bytes;   // the storage's size in bytes, as the record declares it
    int64_t offset;          // in elements
    int ndim;
    int64_t shape[PP_MAX_DIMS], stride[PP_MAX_DIMS];
} pp_pt_record;

typedef struct pp_pt_contents {
    pp_pt_record *recs;      // owned
    size_t count;
    int is_dict;             // the pickle holds a dict (else a single tensor, count 1)
    char *names;             // owned: the joined names of nested entries, one after another
} pp_pt_contents;

// Deepest nesting of dicts read, and the longest joined name.
#define PP_PT_MAX_DEPTH 32
#define PP_PT_MAX_NAME 1024

// Interprets pkl[0..n) (the bytes stay referenced by the records: keep them alive).
// @param [in] file  the archive's name, the first word of every message
// Returns PP_OK, PP_ERR_INPUT (one line: the opcode or global refused, or what is malformed) or
// PP_ERR_RUNTIME (out of memory).
int pp_pt_unpickle(const unsigned char *pkl, size_t n, const char *file, pp_pt_contents *c, pp_error *err);

void pp_pt_contents_free(pp_pt_contents *c);

#endif
