// report_schema.h — report.h5 described as data. Each HDF5 group of the layout is a table of
// fields (attributes, datasets, child groups, lists of groups, tables of rows), each field naming
// its HDF5 item, its kind and where its value lives in the C struct. Three walkers go over a
// table: check (the struct can be written and read back), write, read. So each item of the
// layout is named once, and the rules a read enforces are the rules a write checks. What the
// kinds cannot say is a hook: three functions beside the field, still in its place in the table.
#ifndef PP_REPORT_SCHEMA_H
#define PP_REPORT_SCHEMA_H

#include <hdf5.h>
#include <stddef.h>

#include "error.h"
#include "core/results.h"

// A link name after escaping: every byte may triple ("%2F").
#define PP_RS_ESC_MAX (3 * PP_NAME_MAX + 1)
// An object's path inside the file, for messages.
#define PP_RS_WHERE_MAX (4 * PP_RS_ESC_MAX + 64)

typedef enum pp_rs_kind {
    PP_RS_STR,      // attr str (variable-length UTF-8) <-> char[size]; in ROWS: a fixed-length
                    // UTF-8 member of size bytes
    PP_RS_STR_PTR,  // attr str <-> char * (owned); NULL: not written
    PP_RS_TEXT,     // dataset, scalar str <-> char * (owned); NULL: not written
    PP_RS_I64,      // attr int64 <-> int64_t
    PP_RS_U64,      // attr uint64 <-> uint64_t
    PP_RS_F64,      // attr float64 <-> double
    PP_RS_BOOL,     // attr int32, 0 or 1 <-> int (written 1 when nonzero); in ROWS: an int32 member
    PP_RS_I64_VEC,  // attr int64[n] <-> int64_t[size], n the int at count
    PP_RS_FORMAT,   // attr str, a format name ("bf16") <-> pp_format_id
    PP_RS_VEC,      // dataset float64[n] <-> double * (owned), n the int64_t at count
    PP_RS_SUB,      // the fields of sub (a struct at off), each name prefixed with this one's
    PP_RS_GROUP,    // child group holding the fields of sub, which describe this same struct
    PP_RS_LIST,     // child group holding one group per element of the array at off (count
                    // elements of size bytes), named by the element's name at key, in order;
                    // sub: the element's fields
    PP_RS_ROWS,     // 1-D compound dataset, one row per element of the array at off (count
                    // elements of size bytes); sub: the members (STR, BOOL)
    PP_RS_HOOK,     // anything else: hook's functions
} pp_rs_kind;

// Field flags.
enum {
    // May be absent in a file. STR_PTR, TEXT: a missing item reads as NULL (else it is refused).
    // LIST: not written when empty, read as empty when absent. SUB: always written, skipped on
    // read when its first attribute is absent (reports older than the item). HOOK: a note; the
    // hook decides.
    PP_RS_OPTIONAL = 1,
    PP_RS_NONNEG = 2,  // F64: finite and >= 0, checked before a write and after a read
};

// Where a struct sits while a walker is inside it: a hook reaches the structs around it this way.
typedef struct pp_rs_frame {
    void *obj;                       // the struct the table describes (const while writing)
    int index;                       // its position in a LIST or ROWS, else -1
    const struct pp_rs_frame *up;    // the enclosing struct (NULL at the root)
} pp_rs_frame;

// One walk: the file, for messages, and the error.
typedef struct pp_rs_io {
    const char *path;
    pp_error *err;
    int reading;  // 1: a read (a bad item is a malformed report), 0: a check before a write
} pp_rs_io;

typedef struct pp_rs_field pp_rs_field;

// A hook for an item the kinds do not describe. Each function returns PP_OK or an error code
// with io->err set (write also -1: HDF5 failed, and the walker names the item). where: the HDF5
// path of the group (loc) the item belongs to; name: the field's name after a SUB's prefix. A
// NULL function does nothing (a derived attribute has no read, a constant no check).
typedef struct pp_rs_hook {
    int (*check)(const pp_rs_io *io, const char *where, const char *name, const pp_rs_frame *fr);
    int (*write)(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr);
    int (*read)(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr);
} pp_rs_hook;

// A group of the layout (or a struct inside one): its fields, in the order they are written.
typedef struct pp_rs_table {
    const pp_rs_field *fields;
    int n_fields;
    // Before a read of the struct (defaults for optional items), or NULL.
    void (*init)(void *obj);
    // After a read, and in the check before a write: rules across fields, or NULL.
    int (*consistent)(const pp_rs_io *io, const char *where, const pp_rs_frame *fr);
} pp_rs_table;

// A table of the static array fields, with init and consistent.
#define PP_RS_TABLE(fields, init, consistent) {fields, (int)(sizeof fields / sizeof fields[0]), init, consistent}

struct pp_rs_field {
    const char *name;           // the HDF5 name; SUB: the prefix; HOOK: whatever the hook needs
    pp_rs_kind kind;
    unsigned flags;             // PP_RS_OPTIONAL, PP_RS_NONNEG
    size_t off;                 // the value in the struct (LIST, ROWS: the array pointer)
    size_t size;                // STR: capacity; I64_VEC: most values; LIST, ROWS: element size
    size_t count;               // I64_VEC, LIST, ROWS: the int count; VEC: the int64_t length
    size_t key;                 // LIST: the element's char[PP_NAME_MAX] name, its link name
    const pp_rs_table *sub;     // SUB, GROUP, LIST, ROWS
    const pp_rs_hook *hook;     // HOOK
};

// The three walkers over table t for the struct in fr. loc: the HDF5 group holding its items;
// where: its path, for messages. Each returns PP_OK or an error code with io->err set:
// check: PP_ERR_INPUT "PATH: cannot write WHERE: WHAT" (nothing has touched the disk);
// write: PP_ERR_RUNTIME "PATH: HDF5 failed to write WHERE: NAME" (or a hook's PP_ERR_INPUT);
// read: PP_ERR_INPUT "PATH: malformed report: WHERE: WHAT", PP_ERR_RUNTIME out of memory.
// The read fills the struct in place; the arrays it allocates are the struct's to free, and
// their counts are set as soon as they are allocated, so a failed read frees cleanly.
int pp_rs_check(const pp_rs_io *io, const char *where, const pp_rs_table *t, const pp_rs_frame *fr);
int pp_rs_write(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_table *t,
                const pp_rs_frame *fr);
int pp_rs_read(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_table *t,
               const pp_rs_frame *fr);

// The messages above, for hooks: pp_rs_invalid is the read's or the check's, by io->reading.
int pp_rs_invalid(const pp_rs_io *io, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int pp_rs_write_failed(const pp_rs_io *io, const char *where, const char *name);
int pp_rs_oom(const pp_rs_io *io);

// A name as an HDF5 link name: HDF5 splits paths at '/' and reads "." as the group itself, so
// '/' becomes "%2F", the name "." becomes "%2E", and '%' becomes "%25" to keep the map
// one-to-one. Returns 0, or -1 for an empty name.
int pp_rs_name_escape(const char *in, char out[PP_RS_ESC_MAX]);
// The inverse, into out[n]. Returns 0, or -1 for a malformed escape, a NUL byte, an empty result
// or one longer than n - 1 bytes.
int pp_rs_name_unescape(const char *in, char *out, size_t n);

// where + "/" + name into out[PP_RS_WHERE_MAX] ("/" + name at the root "/").
void pp_rs_join(char *out, const char *where, const char *name);

#endif
