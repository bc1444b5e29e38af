// ref_cache.h — references cached by content: the key is a SHA-256 of everything the reference
// depends on (op, parameters, input format, method, which outputs, the exact input bits), the
// entry an HDF5 file DIR/<key>.h5 written atomically; a corrupt entry is a miss, never trusted.
#ifndef PP_REF_CACHE_H
#define PP_REF_CACHE_H

#include <stdint.h>

#include "ops/op.h"
#include "core/results.h"

#define PP_REF_KEY_HEX 65  // 64 hex digits and the NUL

// Bumped whenever any reference's arithmetic changes (a fix, a new method, a tighter bound), so
// cached entries computed by the old code are never served again.
#define PP_REF_EPOCH 6

// The key of the reference of op under params p, on inputs in[0..op->n_inputs) of format f, by
// method (the resolved method name), computing the outputs with want[t] set. Written as 64
// lowercase hex digits into hex.
void pp_ref_cache_key(const pp_op *op, const pp_op_params *p, pp_format_id f, const char *method, const int *want,
                      const pp_tensor *in, char hex[PP_REF_KEY_HEX]);

// Looks the key up in dir. On a hit, refs[t] (binary64) and info[t] are filled for every t with
// want[t] (refs[t] must be zeroed on entry; the caller frees them) and 1 is returned. A missing
// entry returns 0. An entry that is unreadable, truncated, for another key, of the wrong shapes,
// or whose values do not match their stored checksum returns 0 with a one-line reason in why
// (when why is non-NULL): the caller recomputes and stores over it.
int pp_ref_cache_load(const char *dir, const char hex[PP_REF_KEY_HEX], const pp_op *op, const pp_op_params *p,
                      const int *want, pp_tensor *refs, pp_reference_info *info, char *why, size_t why_n);

// Stores refs[t] and info[t] (for t with want[t]) under the key in dir (created if needed),
// atomically. Returns PP_OK or PP_ERR_RUNTIME (the cache is then simply not written).
int pp_ref_cache_store(const char *dir, const char hex[PP_REF_KEY_HEX], const pp_op *op, const int *want,
                       const pp_tensor *refs, const pp_reference_info *info, pp_error *err);

// One computation per entry, across processes and machines sharing the folder: before computing
// a missing entry a process takes an exclusive lock on DIR/<key>.lock (flock(2); on NFS the
// kernel maps it to a POSIX lock), looks the entry up again (another process may have stored it
// while this one waited), computes and stores only on a second miss, and unlocks. Without the
// lock two shards would compute the same reference at the same time; both would still succeed
// and leave one valid entry (the store is atomic), at twice the cost. The lock files stay (a few
// bytes each; removing one while another process waits on it would let a third compute too).
// The wait polls, so a stop request (base/interrupt.h) ends it.
// Returns PP_OK with *fd >= 0 (locked), PP_OK with *fd = -1 when no lock can be had (the folder
// cannot be created or written, a file system without locks: compute without it),
// PP_ERR_INTERRUPTED when a stop request came while waiting. Sets *waited to 1 when another
// process held the lock first (waited may be NULL).
int pp_ref_cache_lock(const char *dir, const char hex[PP_REF_KEY_HEX], int *fd, int *waited);

// Releases pp_ref_cache_lock's lock (fd < 0: nothing).
void pp_ref_cache_unlock(int fd);

// The default cache directory: $PRECPROBE_CACHE, else $XDG_CACHE_HOME/precprobe, else
// $HOME/.cache/precprobe; "" when none can be formed.
void pp_ref_cache_default_dir(char *buf, size_t n);

#endif
