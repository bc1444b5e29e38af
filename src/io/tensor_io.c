// tensor_io.c — the spec dispatch (X.npy, X.safetensors[:NAME], X.h5:/DATASET, X.pt[:NAME])
// over the four formats.
#include "io/tensor_io.h"

#include <stdlib.h>
#include <string.h>

#include "io/h5io.h"
#include "io/npy.h"
#include "io/pt.h"
#include "io/safetensors.h"

// ---------------------------------------------------------------------------------------------
// Specs

typedef enum { SPEC_NPY, SPEC_SAFETENSORS, SPEC_H5, SPEC_PT } spec_kind;

// Splits spec into a file name (malloc'd into *file) and the part after ':' (*inner, pointing
// into spec, or NULL). The leftmost extension followed by the right character wins, so a
// tensor or dataset name may itself contain ".npy" or ':'.
static int spec_split(const char *spec, spec_kind *kind, char **file, const char **inner,
                      pp_error *err)
{
    static const struct {
        const char *ext;
        spec_kind kind;
    } exts[] = {{".safetensors", SPEC_SAFETENSORS}, {".hdf5", SPEC_H5}, {".h5", SPEC_H5},
                {".npy", SPEC_NPY}, {".pth", SPEC_PT}, {".pt", SPEC_PT}};
    *file = NULL;
    *inner = NULL;
    for (const char *p = spec; *p; p++) {
        if (*p != '.')
            continue;
        for (size_t k = 0; k < sizeof exts / sizeof exts[0]; k++) {
            size_t len = strlen(exts[k].ext);
            if (strncmp(p, exts[k].ext, len) != 0)
                continue;
            char next = p[len];
            if (next != '\0' && next != ':')
                continue;
            size_t flen = (size_t)(p - spec) + len;
            *file = malloc(flen + 1);
            if (!*file)
                return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", spec);
            memcpy(*file, spec, flen);
            (*file)[flen] = '\0';
            *kind = exts[k].kind;
            *inner = next == ':' ? p + len + 1 : NULL;
            if (*kind == SPEC_NPY && *inner)
                goto bad;  // a .npy holds one array: nothing to name
            if (*kind == SPEC_H5 && (!*inner || !**inner || !strcmp(*inner, "/"))) {
                pp_fail(err, PP_ERR_INPUT, "%s: name the dataset, as %s:/GROUP/DATASET", *file,
                        *file);
                free(*file);
                *file = NULL;
                return PP_ERR_INPUT;
            }
            if ((*kind == SPEC_SAFETENSORS || *kind == SPEC_PT) && *inner && !**inner)
                *inner = NULL;  // "X.safetensors:" is "X.safetensors"
            return PP_OK;
        }
    }
bad:
    free(*file);
    *file = NULL;
    return pp_fail(err, PP_ERR_INPUT, "%s: unknown kind of tensor file; give " PP_TENSOR_SPEC_FORMS,
                   spec);
}

int pp_tensor_load(const char *spec, pp_tensor *t, pp_error *err)
{
    return pp_tensor_load_as(spec, -1, t, err);
}

int pp_tensor_load_as(const char *spec, int raw_format, pp_tensor *t, pp_error *err)
{
    memset(t, 0, sizeof *t);
    spec_kind kind;
    char *file;
    const char *inner;
    int rc = spec_split(spec, &kind, &file, &inner, err);
    if (rc)
        return rc;
    switch (kind) {
    case SPEC_NPY: rc = pp_npy_read_as(file, raw_format, t, err); break;
    case SPEC_SAFETENSORS: rc = pp_safetensors_read(file, inner, t, err); break;
    case SPEC_H5: rc = pp_h5_read(file, inner, t, err); break;
    case SPEC_PT: rc = pp_pt_read(file, inner, t, err); break;
    }
    free(file);
    return rc;
}

int pp_tensor_save(const char *spec, const pp_tensor *t, pp_error *err)
{
    spec_kind kind;
    char *file;
    const char *inner;
    int rc = spec_split(spec, &kind, &file, &inner, err);
    if (rc)
        return rc;
    switch (kind) {
    case SPEC_NPY: rc = pp_npy_write(file, t, err); break;
    case SPEC_SAFETENSORS:
        if (!inner)
            rc = pp_fail(err, PP_ERR_INPUT, "%s: name the tensor to save, as %s:NAME", file, file);
        else
            rc = pp_safetensors_update(file, inner, t, err);
        break;
    case SPEC_H5: rc = pp_h5_write(file, inner, t, 0, err); break;
    case SPEC_PT:  // writing one would mean writing a pickle: safetensors is torch's safe format
        rc = pp_fail(err, PP_ERR_INPUT, "%s: precprobe reads .pt files but does not write them; save to "
                     "X.safetensors:NAME, X.npy or X.h5:/DATASET", file);
        break;
    }
    free(file);
    return rc;
}
