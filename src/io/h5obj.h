// h5obj.h — HDF5 groups and small datasets as report.h5 keeps them: groups that remember the
// creation order of their links and attributes (a reader restores list order from it), UTF-8
// link names (h5py shows them as str), datasets written whole and read whole after their type
// class and shape are checked. Call inside an HDF5 error-silenced region (io/h5quiet.h).
#ifndef PP_H5OBJ_H
#define PP_H5OBJ_H

#include <hdf5.h>

// Creates group name in parent, creation order tracked and indexed. H5I_INVALID_HID on failure.
hid_t pp_h5obj_group(hid_t parent, const char *name);

// Creates dataset name in parent of file type ftype and shape dims (rank 0: a scalar) and writes
// buf (memory type mtype) into it. The open dataset, or H5I_INVALID_HID on failure.
hid_t pp_h5obj_dataset(hid_t parent, const char *name, hid_t ftype, hid_t mtype, int rank,
                       const hsize_t *dims, const void *buf);

// pp_h5obj_dataset, closed. Returns 0, or -1 on failure.
int pp_h5obj_put_dataset(hid_t parent, const char *name, hid_t ftype, hid_t mtype, int rank,
                         const hsize_t *dims, const void *buf);

// The extents (dims[rank]) of dataset name in parent when it holds type class cls in exactly
// rank dimensions. Returns 0, or -1 (missing, another class or rank, unreadable).
int pp_h5obj_dataset_dims(hid_t parent, const char *name, H5T_class_t cls, int rank, hsize_t *dims);

// Reads the whole of dataset name in parent as memory type mtype into out (sized by the caller
// from pp_h5obj_dataset_dims). Returns 0, or -1.
int pp_h5obj_dataset_read(hid_t parent, const char *name, hid_t mtype, void *out);

// The link names in group g in creation order, malloc'd (free with pp_h5obj_free_names); *n of
// them. Returns 0, or -1 (not a group, no creation-order index, out of memory).
int pp_h5obj_children(hid_t g, char ***names, int *n);
void pp_h5obj_free_names(char **names, int n);

#endif
