// pt_pickle.c — a pickle interpreter that understands torch.save's tensors and nothing else. It
// never imports or calls: a GLOBAL becomes an inert token for one of a few known names, REDUCE
// of a rebuild token records the tensor's storage key, dtype, offset, shape and stride, and
// anything else stops the reading with a message. Every size and index is checked against
// limits, so hostile bytes cost at most linear time and bounded memory.
#include "io/pt_pickle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/printable.h"

// ---- values ----------------------------------------------------------------------------------

typedef enum {
    V_NONE, V_BOOL, V_INT, V_STR, V_TUPLE, V_DICT, V_FUNC, V_STORAGE_CLASS, V_DTYPE, V_STORAGE, V_TENSOR
} vkind;

typedef enum { F_REBUILD_V2, F_REBUILD_V3, F_REBUILD_PARAM, F_ORDERED_DICT } fkind;

typedef struct val {
    vkind kind;
    int64_t i;        // V_INT, V_BOOL; V_FUNC: its fkind; V_STORAGE: bytes; V_TENSOR: record index
    int32_t a, b;     // V_TUPLE: first item, count; V_DICT: first and last pair (-1: none);
                      // V_STORAGE_CLASS, V_DTYPE, V_STORAGE: dtype table index
    const char *s;    // V_STR, V_STORAGE (its key): len bytes within the pickle
    size_t len;
} val;

typedef struct pair {
    int32_t key, value, next;
} pair;

// torch's dtypes: their names as a storage class ("BFloat16Storage") and as torch.<dtype>.
typedef struct dtype_def {
    const char *storage;  // NULL: no legacy storage class
    const char *name;
    int itemsize;
    int format;           // pp_format_id, or -1: not read by precprobe
} dtype_def;

static const dtype_def dtypes[] = {
    {"DoubleStorage", "float64", 8, PP_FMT_FP64},   {"FloatStorage", "float32", 4, PP_FMT_FP32},
    {"HalfStorage", "float16", 2, PP_FMT_FP16},     {"BFloat16Storage", "bfloat16", 2, PP_FMT_BF16},
    {NULL, "float8_e4m3fn", 1, PP_FMT_E4M3},        {NULL, "float8_e5m2", 1, PP_FMT_E5M2},
    {"LongStorage", "int64", 8, -1},                {"IntStorage", "int32", 4, -1},
    {"ShortStorage", "int16", 2, -1},               {"CharStorage", "int8", 1, -1},
    {"ByteStorage", "uint8", 1, -1},                {"BoolStorage", "bool", 1, -1},
    {"ComplexFloatStorage", "complex64", 8, -1},    {"ComplexDoubleStorage", "complex128", 16, -1},
    {NULL, "uint16", 2, -1},                        {NULL, "uint32", 4, -1},
    {NULL, "uint64", 8, -1},                        {NULL, "float8_e4m3fnuz", 1, -1},
    {NULL, "float8_e5m2fnuz", 1, -1},               {NULL, "float8_e8m0fnu", 1, -1},
};
#define N_DTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

// Limits far beyond what torch.save writes for thousands of tensors.
#define MAX_VALUES (1 << 22)
#define MAX_MEMO (1 << 22)
#define MAX_RECORDS (1 << 20)

typedef struct vm {
    const unsigned char *p, *end, *start;
    const char *file;
    pp_error *err;
    val *vals;
    int32_t nvals, capvals;
    int32_t *stack;
    int32_t nstack, capstack;
    int32_t *marks;
    int32_t nmarks, capmarks;
    int32_t *items;  // tuple items
    int32_t nitems, capitems;
    pair *pairs;
    int32_t npairs, cappairs;
    int32_t *memo;   // -1: unset
    int32_t nmemo, capmemo;
    pp_pt_record *recs;
    int32_t nrecs, caprecs;
} vm;

static int fail(vm *m, const char *what)
{
    return pp_fail(m->err, PP_ERR_INPUT, "%s: data.pkl at byte %ld: %s", m->file, (long)(m->p - m->start), what);
}

static int oom(vm *m)
{
    return pp_fail(m->err, PP_ERR_RUNTIME, "%s: out of memory reading data.pkl", m->file);
}

// Grows *arr (element size sz) to hold at least need elements, within limit.
static int grow(vm *m, void **arr, int32_t *cap, int32_t need, size_t sz, int32_t limit)
{
    if (need <= *cap)
        return 0;
    if (need > limit)
        return fail(m, "more objects than a torch.save of tensors holds");
    int32_t c = *cap ? *cap : 64;
    while (c < need)
        c = c > limit / 2 ? limit : c * 2;
    void *q = realloc(*arr, (size_t)c * sz);
    if (!q)
        return oom(m);
    *arr = q;
    *cap = c;
    return 0;
}

static int new_val(vm *m, vkind k, int32_t *id)
{
    if (grow(m, (void **)&m->vals, &m->capvals, m->nvals + 1, sizeof(val), MAX_VALUES))
        return PP_ERR_INPUT;
    memset(&m->vals[m->nvals], 0, sizeof(val));
    m->vals[m->nvals].kind = k;
    *id = m->nvals++;
    return 0;
}

static int push(vm *m, int32_t id)
{
    if (grow(m, (void **)&m->stack, &m->capstack, m->nstack + 1, sizeof(int32_t), MAX_VALUES))
        return PP_ERR_INPUT;
    m->stack[m->nstack++] = id;
    return 0;
}

static int push_new(vm *m, vkind k, int64_t i)
{
    int32_t id;
    if (new_val(m, k, &id))
        return PP_ERR_INPUT;
    m->vals[id].i = i;
    return push(m, id);
}

// The stack above the innermost mark holds at least n values.
static int need(vm *m, int32_t n)
{
    int32_t floor = m->nmarks ? m->marks[m->nmarks - 1] : 0;
    if (m->nstack - floor < n)
        return fail(m, "stack underflow (a malformed pickle)");
    return 0;
}

static int pop(vm *m, int32_t *id)
{
    if (need(m, 1))
        return PP_ERR_INPUT;
    *id = m->stack[--m->nstack];
    return 0;
}

static int take(vm *m, size_t n, const unsigned char **at)
{
    if ((size_t)(m->end - m->p) < n)
        return fail(m, "truncated");
    *at = m->p;
    m->p += n;
    return 0;
}

static uint64_t le(const unsigned char *q, int n)
{
    uint64_t x = 0;
    for (int k = 0; k < n; k++)
        x |= (uint64_t)q[k] << (8 * k);
    return x;
}

// ---- building values -------------------------------------------------------------------------

// A tuple of the n values on top of the stack (popped).
static int make_tuple(vm *m, int32_t n)
{
    if (need(m, n) || grow(m, (void **)&m->items, &m->capitems, m->nitems + n, sizeof(int32_t), MAX_VALUES))
        return PP_ERR_INPUT;
    int32_t id;
    if (new_val(m, V_TUPLE, &id))
        return PP_ERR_INPUT;
    m->vals[id].a = m->nitems;
    m->vals[id].b = n;
    if (n)  // (the pool may still be NULL for an empty tuple)
        memcpy(m->items + m->nitems, m->stack + m->nstack - n, (size_t)n * sizeof(int32_t));
    m->nitems += n;
    m->nstack -= n;
    return push(m, id);
}

static int dict_set(vm *m, int32_t dict, int32_t key, int32_t value)
{
    if (m->vals[dict].kind != V_DICT)
        return fail(m, "SETITEM on something other than a dict");
    if (grow(m, (void **)&m->pairs, &m->cappairs, m->npairs + 1, sizeof(pair), MAX_VALUES))
        return PP_ERR_INPUT;
    int32_t p = m->npairs++;
    m->pairs[p] = (pair){key, value, -1};
    val *d = &m->vals[dict];
    if (d->b >= 0)
        m->pairs[d->b].next = p;
    else
        d->a = p;
    d->b = p;
    return 0;
}

static int new_dict(vm *m)
{
    int32_t id;
    if (new_val(m, V_DICT, &id))
        return PP_ERR_INPUT;
    m->vals[id].a = m->vals[id].b = -1;
    return push(m, id);
}

// A GLOBAL: an inert token for the few names torch.save writes for tensors.
static int global(vm *m, const char *mod, size_t mlen, const char *name, size_t nlen)
{
    char shown[160], full[140];
    snprintf(full, sizeof full, "%.*s.%.*s", (int)(mlen > 60 ? 60 : mlen), mod, (int)(nlen > 60 ? 60 : nlen), name);
#define IS(s, l, lit) ((l) == sizeof(lit) - 1 && memcmp((s), (lit), (l)) == 0)
    int32_t id;
    if (IS(mod, mlen, "torch._utils") || IS(mod, mlen, "collections")) {
        int f = -1;
        if (IS(mod, mlen, "torch._utils") && IS(name, nlen, "_rebuild_tensor_v2"))
            f = F_REBUILD_V2;
        else if (IS(mod, mlen, "torch._utils") && IS(name, nlen, "_rebuild_tensor_v3"))
            f = F_REBUILD_V3;
        else if (IS(mod, mlen, "torch._utils") && IS(name, nlen, "_rebuild_parameter"))
            f = F_REBUILD_PARAM;
        else if (IS(mod, mlen, "collections") && IS(name, nlen, "OrderedDict"))
            f = F_ORDERED_DICT;
        if (f >= 0)
            return push_new(m, V_FUNC, f);
    }
    if (IS(mod, mlen, "torch.storage") && IS(name, nlen, "UntypedStorage")) {
        if (new_val(m, V_STORAGE_CLASS, &id))
            return PP_ERR_INPUT;
        m->vals[id].a = -1;  // untyped: the dtype comes with _rebuild_tensor_v3
        return push(m, id);
    }
    if (IS(mod, mlen, "torch")) {
        for (int k = 0; k < N_DTYPES; k++) {
            int is_storage = dtypes[k].storage && strlen(dtypes[k].storage) == nlen &&
                             !memcmp(dtypes[k].storage, name, nlen);
            int is_dtype = strlen(dtypes[k].name) == nlen && !memcmp(dtypes[k].name, name, nlen);
            if (is_storage || is_dtype) {
                if (new_val(m, is_storage ? V_STORAGE_CLASS : V_DTYPE, &id))
                    return PP_ERR_INPUT;
                m->vals[id].a = k;
                return push(m, id);
            }
        }
    }
#undef IS
    char msg[300];
    snprintf(msg, sizeof msg,
             "the pickle names %s; precprobe reads only plain tensors and dicts of them (and never runs a pickle)",
             pp_printable(full, shown, sizeof shown));
    return fail(m, msg);
}

// A persistent id: ('storage', storage class, key, location, numel) -> a storage.
static int persid(vm *m, int32_t t)
{
    val *v = &m->vals[t];
    if (v->kind != V_TUPLE || v->b != 5)
        return fail(m, "a persistent id that is not a storage record");
    const int32_t *it = m->items + v->a;
    val *tag = &m->vals[it[0]], *cls = &m->vals[it[1]], *key = &m->vals[it[2]], *loc = &m->vals[it[3]],
        *num = &m->vals[it[4]];
    if (tag->kind != V_STR || tag->len != 7 || memcmp(tag->s, "storage", 7) || cls->kind != V_STORAGE_CLASS ||
        key->kind != V_STR || loc->kind != V_STR || num->kind != V_INT)
        return fail(m, "a persistent id that is not ('storage', class, key, location, numel)");
    if (num->i < 0 || num->i > ((int64_t)1 << 50))
        return fail(m, "a storage of absurd size");
    int64_t item = cls->a >= 0 ? dtypes[cls->a].itemsize : 1;
    int32_t id;
    int32_t cls_a = cls->a;
    const char *ks = key->s;
    size_t kl = key->len;
    int64_t bytes = num->i * item;
    if (new_val(m, V_STORAGE, &id))
        return PP_ERR_INPUT;
    m->vals[id].a = cls_a;
    m->vals[id].s = ks;
    m->vals[id].len = kl;
    m->vals[id].i = bytes;
    return push(m, id);
}

// An int tuple of at most PP_MAX_DIMS non-negative entries into out; -1 when it is not one.
static int int_tuple(vm *m, int32_t t, int64_t *out, int *n)
{
    val *v = &m->vals[t];
    if (v->kind != V_TUPLE || v->b > PP_MAX_DIMS)
        return -1;
    for (int32_t k = 0; k < v->b; k++) {
        val *e = &m->vals[m->items[v->a + k]];
        if (e->kind != V_INT || e->i < 0 || e->i > PP_MAX_NUMEL)
            return -1;
        out[k] = e->i;
    }
    *n = v->b;
    return 0;
}

// REDUCE: the callable applied to the args tuple, for the callables of the short list.
static int reduce(vm *m, int32_t fn, int32_t args)
{
    val *f = &m->vals[fn], *a = &m->vals[args];
    if (f->kind != V_FUNC || a->kind != V_TUPLE)
        return fail(m, "REDUCE of something other than torch's tensor rebuild or OrderedDict");
    const int32_t *it = a->b ? m->items + a->a : NULL;  // (the pool is NULL until a tuple has items)
    switch ((fkind)f->i) {
    case F_ORDERED_DICT:
        if (a->b != 0)
            return fail(m, "OrderedDict called with arguments");
        return new_dict(m);
    case F_REBUILD_PARAM:  // (tensor, requires_grad, backward_hooks): the tensor
        if (a->b < 1 || m->vals[it[0]].kind != V_TENSOR)
            return fail(m, "_rebuild_parameter of something other than a tensor");
        return push(m, it[0]);
    case F_REBUILD_V2:
    case F_REBUILD_V3: {
        // v2: (storage, offset, size, stride, requires_grad, hooks[, metadata])
        // v3: the same, then the dtype (the storage untyped)
        int v3 = f->i == F_REBUILD_V3;
        if (a->b < (v3 ? 7 : 6) || a->b > (v3 ? 8 : 7))
            return fail(m, "a tensor rebuild with the wrong number of arguments");
        val *st = &m->vals[it[0]], *off = &m->vals[it[1]];
        if (st->kind != V_STORAGE || off->kind != V_INT || off->i < 0 || off->i > PP_MAX_NUMEL)
            return fail(m, "a tensor rebuild without a storage and offset");
        int dt = st->a;
        if (v3) {
            val *d = &m->vals[it[6]];
            if (d->kind != V_DTYPE)
                return fail(m, "_rebuild_tensor_v3 without a dtype");
            dt = d->a;
        } else if (dt < 0) {
            return fail(m, "_rebuild_tensor_v2 of an untyped storage");
        }
        if (grow(m, (void **)&m->recs, &m->caprecs, m->nrecs + 1, sizeof(pp_pt_record), MAX_RECORDS))
            return PP_ERR_INPUT;
        pp_pt_record *r = &m->recs[m->nrecs];
        memset(r, 0, sizeof *r);
        int ns;
        if (int_tuple(m, it[2], r->shape, &r->ndim) || int_tuple(m, it[3], r->stride, &ns) || ns != r->ndim)
            return fail(m, "a tensor's size and stride are not tuples of as many integers (at most 8)");
        r->key = st->s;
        r->key_len = st->len;
        r->format = dtypes[dt].format;
        snprintf(r->dtype, sizeof r->dtype, "%s", dtypes[dt].name);
        r->storage_bytes = st->i;
        r->offset = off->i;
        int32_t id;
        if (new_val(m, V_TENSOR, &id))
            return PP_ERR_INPUT;
        m->vals[id].i = m->nrecs++;
        return push(m, id);
    }
    }
    return fail(m, "REDUCE of an unknown callable");
}

// ---- the loop --------------------------------------------------------------------------------

static int memo_put(vm *m, uint64_t k)
{
    if (k >= MAX_MEMO)
        return fail(m, "memo index too large");
    if (m->nstack < 1)
        return fail(m, "memo store from an empty stack");
    if (grow(m, (void **)&m->memo, &m->capmemo, (int32_t)k + 1, sizeof(int32_t), MAX_MEMO))
        return PP_ERR_INPUT;
    while (m->nmemo <= (int32_t)k)
        m->memo[m->nmemo++] = -1;
    m->memo[k] = m->stack[m->nstack - 1];
    return 0;
}

static int memo_get(vm *m, uint64_t k)
{
    if (k >= (uint64_t)m->nmemo || m->memo[k] < 0)
        return fail(m, "memo read of an unset index");
    return push(m, m->memo[k]);
}

static int string(vm *m, size_t len)
{
    const unsigned char *s = NULL;
    if (take(m, len, &s))
        return PP_ERR_INPUT;
    int32_t id;
    if (new_val(m, V_STR, &id))
        return PP_ERR_INPUT;
    m->vals[id].s = (const char *)s;
    m->vals[id].len = len;
    return push(m, id);
}

// A line of GLOBAL's operand: up to '\n', at most 200 bytes.
static int line(vm *m, const char **s, size_t *len)
{
    const unsigned char *q = m->p;
    while (q < m->end && *q != '\n' && q - m->p < 200)
        q++;
    if (q >= m->end || *q != '\n')
        return fail(m, "GLOBAL without its two lines");
    *s = (const char *)m->p;
    *len = (size_t)(q - m->p);
    m->p = q + 1;
    return 0;
}

static int run(vm *m, int32_t *result)
{
    for (;;) {
        const unsigned char *q = NULL;
        if (take(m, 1, &q))
            return fail(m, "no STOP at the end");
        unsigned char op = *q;
        int32_t x, y, z;
        int rc = 0;
        switch (op) {
        case 0x80:  // PROTO
            if (take(m, 1, &q))
                return PP_ERR_INPUT;
            if (*q < 2 || *q > 5)
                return fail(m, "pickle protocol other than 2 to 5");
            break;
        case 0x95:  // FRAME: a length hint only
            rc = take(m, 8, &q);
            break;
        case '.':   // STOP
            if (pop(m, result))
                return PP_ERR_INPUT;
            return 0;
        case '(':   // MARK
            if (grow(m, (void **)&m->marks, &m->capmarks, m->nmarks + 1, sizeof(int32_t), MAX_VALUES))
                return PP_ERR_INPUT;
            m->marks[m->nmarks++] = m->nstack;
            break;
        case ')':   // EMPTY_TUPLE
            rc = make_tuple(m, 0);
            break;
        case 0x85: case 0x86: case 0x87:  // TUPLE1..3
            rc = make_tuple(m, op - 0x84);
            break;
        case 't':   // TUPLE: everything above the mark
            if (!m->nmarks)
                return fail(m, "TUPLE without MARK");
            x = m->marks[--m->nmarks];
            rc = make_tuple(m, m->nstack - x);
            break;
        case '}':   // EMPTY_DICT
            rc = new_dict(m);
            break;
        case 's':   // SETITEM
            if (pop(m, &y) || pop(m, &x) || need(m, 1))
                return PP_ERR_INPUT;
            rc = dict_set(m, m->stack[m->nstack - 1], x, y);
            break;
        case 'u': { // SETITEMS: pairs above the mark into the dict below it
            if (!m->nmarks)
                return fail(m, "SETITEMS without MARK");
            int32_t base = m->marks[--m->nmarks];
            if ((m->nstack - base) % 2 || base < 1)
                return fail(m, "SETITEMS of an odd number of values, or without a dict");
            for (int32_t k = base; k < m->nstack && !rc; k += 2)
                rc = dict_set(m, m->stack[base - 1], m->stack[k], m->stack[k + 1]);
            m->nstack = base;
            break;
        }
        case 'N':   // NONE
            rc = push_new(m, V_NONE, 0);
            break;
        case 0x88: case 0x89:  // NEWTRUE, NEWFALSE
            rc = push_new(m, V_BOOL, op == 0x88);
            break;
        case 'K':   // BININT1
            rc = take(m, 1, &q) || push_new(m, V_INT, q[0]);
            break;
        case 'M':   // BININT2
            rc = take(m, 2, &q) || push_new(m, V_INT, (int64_t)le(q, 2));
            break;
        case 'J':   // BININT: signed 32-bit
            rc = take(m, 4, &q) || push_new(m, V_INT, (int64_t)(int32_t)(uint32_t)le(q, 4));
            break;
        case 0x8a: { // LONG1: n bytes, two's complement
            if (take(m, 1, &q))
                return PP_ERR_INPUT;
            int n = q[0];
            if (n > 8)
                return fail(m, "integer wider than 64 bits");
            if (take(m, (size_t)n, &q))
                return PP_ERR_INPUT;
            uint64_t u = le(q, n);
            if (n > 0 && n < 8 && (q[n - 1] & 0x80))
                u |= ~(uint64_t)0 << (8 * n);  // sign extension
            rc = push_new(m, V_INT, (int64_t)u);
            break;
        }
        case 'X':   // BINUNICODE
            rc = take(m, 4, &q) || string(m, (size_t)le(q, 4));
            break;
        case 0x8c:  // SHORT_BINUNICODE
            rc = take(m, 1, &q) || string(m, q[0]);
            break;
        case 'q':   // BINPUT
            rc = take(m, 1, &q) || memo_put(m, q[0]);
            break;
        case 'r':   // LONG_BINPUT
            rc = take(m, 4, &q) || memo_put(m, le(q, 4));
            break;
        case 0x94:  // MEMOIZE
            rc = memo_put(m, (uint64_t)m->nmemo);
            break;
        case 'h':   // BINGET
            rc = take(m, 1, &q) || memo_get(m, q[0]);
            break;
        case 'j':   // LONG_BINGET
            rc = take(m, 4, &q) || memo_get(m, le(q, 4));
            break;
        case 'c': { // GLOBAL "module\nname\n"
            const char *mod, *name;
            size_t ml, nl;
            rc = line(m, &mod, &ml) || line(m, &name, &nl) || global(m, mod, ml, name, nl);
            break;
        }
        case 0x93:  // STACK_GLOBAL
            if (pop(m, &y) || pop(m, &x))
                return PP_ERR_INPUT;
            if (m->vals[x].kind != V_STR || m->vals[y].kind != V_STR)
                return fail(m, "STACK_GLOBAL of something other than two strings");
            rc = global(m, m->vals[x].s, m->vals[x].len, m->vals[y].s, m->vals[y].len);
            break;
        case 'Q':   // BINPERSID
            rc = pop(m, &x) || persid(m, x);
            break;
        case 'R':   // REDUCE
            rc = pop(m, &y) || pop(m, &x) || reduce(m, x, y);
            break;
        case 'b':   // BUILD: only a state_dict's attributes (its _metadata), ignored
            if (pop(m, &z) || need(m, 1))
                return PP_ERR_INPUT;
            if (m->vals[m->stack[m->nstack - 1]].kind != V_DICT ||
                (m->vals[z].kind != V_DICT && m->vals[z].kind != V_NONE && m->vals[z].kind != V_TUPLE))
                return fail(m, "BUILD on something other than an OrderedDict");
            break;
        default: {
            char msg[120];
            snprintf(msg, sizeof msg,
                     "opcode 0x%02x is not one torch.save writes for tensors (precprobe never runs a pickle)", op);
            m->p--;
            return fail(m, msg);
        }
        }
        if (rc)  // the code pp_fail recorded (an allocation failure is PP_ERR_RUNTIME)
            return m->err && m->err->code ? m->err->code : PP_ERR_INPUT;
    }
}

static const char *describe(vkind k)
{
    switch (k) {
    case V_NONE: return "None";
    case V_BOOL: return "a bool";
    case V_INT: return "an integer";
    case V_STR: return "a string";
    case V_TUPLE: return "a tuple";
    case V_DICT: return "a dict";
    case V_STORAGE: return "a storage";
    default: return "an object";
    }
}

// ---- a dict of dicts of tensors, flattened -------------------------------------------------------

// The entries walked under dict d at depth (nested dicts and theirs: at least the records to
// come) and the bytes of the joined names (prefix_len the length of the name that leads to d, with
// its '.'), added to *count and *bytes. Fails on a key that is not a string, nesting deeper than PP_PT_MAX_DEPTH (a dict that
// holds itself), a joined name longer than PP_PT_MAX_NAME, or more than MAX_RECORDS entries walked,
// nested dicts included (the same dict held many times, even an empty one: the walk stops there,
// so hostile bytes cost bounded time).
static int count_entries(const vm *m, const val *d, int depth, size_t prefix_len, size_t *count, size_t *bytes,
                         const char *file, pp_error *err)
{
    if (depth > PP_PT_MAX_DEPTH)
        return pp_fail(err, PP_ERR_INPUT, "%s: dicts nested deeper than %d (a dict that holds itself?)", file,
                       PP_PT_MAX_DEPTH);
    for (int32_t p = d->a; p >= 0; p = m->pairs[p].next) {
        const val *k = &m->vals[m->pairs[p].key], *v = &m->vals[m->pairs[p].value];
        if (k->kind != V_STR)
            return pp_fail(err, PP_ERR_INPUT, "%s: a dict key is not a string", file);
        if (++*count > MAX_RECORDS)
            return pp_fail(err, PP_ERR_INPUT, "%s: more entries than a torch.save of tensors holds", file);
        if (prefix_len + k->len > PP_PT_MAX_NAME)
            return pp_fail(err, PP_ERR_INPUT, "%s: a nested key longer than %d bytes", file, PP_PT_MAX_NAME);
        if (v->kind == V_DICT) {
            int rc = count_entries(m, v, depth + 1, prefix_len + k->len + 1, count, bytes, file, err);
            if (rc)
                return rc;
            continue;
        }
        if (depth > 0)
            *bytes += prefix_len + k->len;
    }
    return PP_OK;
}

// Appends the entries under dict d to c (counted by count_entries, so space is there): a tensor's
// record, or what another value is; prefix (prefix_len bytes, its trailing '.' included) names d.
static void add_entries(const vm *m, const val *d, int depth, const char *prefix, size_t prefix_len,
                        pp_pt_contents *c, size_t *name_at)
{
    for (int32_t p = d->a; p >= 0; p = m->pairs[p].next) {
        const val *k = &m->vals[m->pairs[p].key], *v = &m->vals[m->pairs[p].value];
        if (v->kind == V_DICT) {
            char sub[PP_PT_MAX_NAME + 2];
            memcpy(sub, prefix, prefix_len);
            memcpy(sub + prefix_len, k->s, k->len);
            sub[prefix_len + k->len] = '.';
            add_entries(m, v, depth + 1, sub, prefix_len + k->len + 1, c, name_at);
            continue;
        }
        pp_pt_record *r = &c->recs[c->count++];
        if (v->kind == V_TENSOR)
            *r = m->recs[v->i];
        else
            r->what = describe(v->kind);
        if (depth == 0) {
            r->name = k->s;
            r->name_len = k->len;
        } else {
            char *at = c->names + *name_at;
            memcpy(at, prefix, prefix_len);
            memcpy(at + prefix_len, k->s, k->len);
            r->name = at;
            r->name_len = prefix_len + k->len;
            *name_at += r->name_len;
        }
    }
}

int pp_pt_unpickle(const unsigned char *pkl, size_t n, const char *file, pp_pt_contents *c, pp_error *err)
{
    memset(c, 0, sizeof *c);
    if (n > PP_PT_MAX_PICKLE)
        return pp_fail(err, PP_ERR_INPUT, "%s: data.pkl is larger than 256 MB", file);
    vm m;
    memset(&m, 0, sizeof m);
    m.p = m.start = pkl;
    m.end = pkl + n;
    m.file = file;
    m.err = err;
    int32_t top = -1;
    int rc = run(&m, &top);
    if (!rc) {
        val *t = &m.vals[top];
        if (t->kind == V_TENSOR) {
            c->recs = calloc(1, sizeof *c->recs);
            if (!c->recs)
                rc = oom(&m);
            else
                c->recs[c->count++] = m.recs[t->i];
        } else if (t->kind == V_DICT) {
            c->is_dict = 1;
            size_t count = 0, bytes = 0, name_at = 0;
            rc = count_entries(&m, t, 0, 0, &count, &bytes, file, err);
            if (!rc) {
                c->recs = calloc(count ? count : 1, sizeof *c->recs);
                c->names = malloc(bytes ? bytes : 1);
                if (!c->recs || !c->names)
                    rc = oom(&m);
            }
            if (!rc)
                add_entries(&m, t, 0, "", 0, c, &name_at);
        } else {
            rc = pp_fail(err, PP_ERR_INPUT, "%s: holds %s, not a tensor or a dict of tensors", file,
                         describe(t->kind));
        }
    }
    free(m.vals);
    free(m.stack);
    free(m.marks);
    free(m.items);
    free(m.pairs);
    free(m.memo);
    free(m.recs);
    if (rc)
        pp_pt_contents_free(c);
    return rc;
}

void pp_pt_contents_free(pp_pt_contents *c)
{
    free(c->recs);
    free(c->names);
    memset(c, 0, sizeof *c);
}
