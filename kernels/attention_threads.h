// attention_threads.h — the per-thread bodies of the attention, written once as PP_HD C: the
// GPU (kernels/cuda/attention_kernels.cu) runs them one thread at a time, the CPU emulation
// (kernels/cpu/attention_device.c) runs them in runs of lanes on its thread pool, and
// tests/test_attention_threads.c runs them single-threaded in adversarial order. With the launch
// sequence of kernels/attention_plan.c they are the only statement of the attention's loop order.
//
// A launch is one pp_attn_launch (the op, its thread count n and every pointer and scalar it
// needs); thread t of it runs pp_attn_thread(L, t). Threads of one launch never read what another
// thread of the same launch writes, so any execution order gives the same bits; launches run in
// the order kernels/attention_plan.c issues them. A host device may run a whole run of threads
// with pp_attn_run (see Lanes): the same statements, each thread's chain in its own order.
//
// Layout on the device: every tensor head-major, q', dout, out, dq [b][h][s_q][d], k', v, dk, dv
// [b][h_kv][s_kv][d], lse [b][h][s_q] (binary32 values; the values of F are exact in binary32);
// k' and v also key-major, kT, vT [b][h_kv][d][s_kv], for the dot products' key lanes; a host
// device may lay each head's kT, vT out in tiles of key_tile keys instead (see Key-major tiles).
//
// Blocks. A block is a q-row range against a kv-row range with a mask. Plain attention has one
// block per (b, head): all rows against all keys, mask off = s_kv − s_q. The CP ring (world W,
// chunk c = s/(2W)) has per step one block per (b, head, rank r): rank r's rows (chunks r and
// 2W−1−r, local rows [q0, q0 + nq)) against the kv of rank o (chunk o, and 2W−1−o unless the step
// type takes only the first chunk; pp_attn_geom_of). A launch covers every rank of its step (their
// blocks write disjoint rows), so a ring step is one launch per stage below.
// Block-local scratch (scores, P, dS, PB-Relax maxima, per-head dk/dv) is indexed
// [b][h][r][x][y] with extents R (1 or W), BQ, BK (s_q, s_kv, or 2c, 2c); block outputs (out,
// lse, dq partials) go straight to their global rows. The plan may run the blocks in slices of
// (batch, kv head) units (a launch then sees b = units, h = grp, h_kv = 1: the same layouts).
//
// Reduction orders (each a sequential chain, one thread's or one lane's):
//   dot products (scores, dP, flash s): from +0, c = 0..d−1, fma (fp32) or pp_gemm_step_storage;
//   P·V, dq (over j), dk, dv (over i): one thread per output element, the chain over the block's
//     rows/keys in increasing order from +0 (masked terms skipped, zeroed rows included);
//   softmax max/sum, flash tiles, D: one thread per row, j increasing;
//   PB-Relax max: one thread per row (j increasing), then one per block over the rows in order
//     (the NaN-sticky max composes: the bits of a single pass over the block);
//   GQA sums: one thread per dk/dv element, heads of the group in order from +0;
//   CP merges: one thread per row (lse, step order) or element (out after the ring; dq, dk, dv
//     per ring step, one launch per step, so the step order is the launch order).
#ifndef PP_ATTENTION_THREADS_H
#define PP_ATTENTION_THREADS_H

#include <math.h>
#include <stdint.h>

#include "attention.h"
#include "attention_fp8.h"
#include "gemm_thread.h"
#include "ranges.h"

typedef enum {
    PP_AT_GATHER = 0,    // dst[b][H][S][d] ← scale(src[b][S][H][d]): (b, hh, s, e)
    PP_AT_FILL0,         // dst[t] = +0: t
    PP_AT_TRANSPOSE,     // dst[bh][e][s] ← src[bh][s][e] (kT, vT: keys contiguous for the lanes): (bh, e, s)
    PP_AT_UNF_SCORES,    // S_xy of visible (x, y): (b, hh, r, x, y)
    PP_AT_UNF_PB_ROW,    // Mrow = NaN-sticky max |S| over row x: (b, hh, r, x)
    PP_AT_UNF_PB_BLOCK,  // Mblk = the same over the block's rows: (b, hh, r)
    PP_AT_UNF_SOFTMAX,   // row x: S → P in place, lse (forward): (b, hh, r, x)
    PP_AT_UNF_PV,        // out_xe: (b, hh, r, x, e)
    PP_AT_FLASH_FWD,     // row x through the key tiles: out, lse: (b, hh, r, x)
    PP_AT_FLASH_BWD_ROW, // row x: P, dS: (b, hh, r, x)
    PP_AT_UNF_DP,        // dP_xy into dS: (b, hh, r, x, y)
    PP_AT_UNF_BWD_ROW,   // row x: D, dS in place: (b, hh, r, x)
    PP_AT_BWD_DQ,        // dq'_xe (block partial, global row): (b, hh, r, x, e)
    PP_AT_BWD_DKV,       // dk'_ye, dv_ye of one q head (block scratch): (b, hh, r, y, e)
    PP_AT_PLAIN_DQ,      // dq = prescale backward of the block's dq': (b, hh, s, e)
    PP_AT_PLAIN_DKV,     // GQA sum, RN_F, prescale backward: (b, g, j, e)
    PP_AT_CP_LSE,        // running lse merge of step i: (b, hh, s)
    PP_AT_CP_OUT,        // out merge after the ring: (b, hh, s, e)
    PP_AT_CP_DQ,         // dq accumulator step: (b, hh, s, e)
    PP_AT_CP_DKV,        // dk, dv accumulators along the ring path: (b, g, r, y, e)
    PP_AT_CP_FINAL_DQ,   // (b, hh, s, e)
    PP_AT_CP_FINAL_DKV,  // (b, g, s, e)
    // engine cublas only (the GEMMs are the device's; these are the steps around them)
    PP_AT_UNF_ZERO_MASKED, // P_xy = +0 where (x, y) is masked, before P·V reads the whole block: (b, hh, r, x, y)
    PP_AT_SCALE,         // dst[t] = RN_F(RN_32(gscale·src[t])) (baddbmm backward's alpha): t
    PP_AT_N_OPS
} pp_attn_thread_op;

// The lane step y_l = fma(a, x_l, y_l), l < n, as a host device supplies it (vector FMA).
typedef void (*pp_attn_axpy_fn)(float a, const float *x, float *y, int64_t n);
// nt lane steps in order, y_l = fma(a_t, x_t[l], y_l) for t = 0 … nt − 1 (each lane's chain in t
// order), as a host device supplies it: y may stay in registers between the steps.
typedef void (*pp_attn_axpy_n_fn)(const float *a, const float *const *x, int nt, float *y, int64_t n);
// The flash softmax's exponentials of a run of key lanes, as a host device supplies them (vector
// binary64 arithmetic): p_i = pp_attn_exp2f(fmaf(s_i, a, b)) for i < n, the same IEEE operations
// in the same order per lane, so the same bits.
typedef void (*pp_attn_exp2_fn)(const float *s, float a, float b, float *p, int64_t n);
// Key lanes' dot products as a host device supplies them: acc_l = fma chain from +0 over
// c = 0 … nc − 1 (in that order) of a_c·xT[c·ld + l], for l < m ≤ PP_ATTN_MAX_LANES.
typedef void (*pp_attn_dots_fn)(const float *a, const float *xT, int64_t ld, int64_t nc, float *acc, int64_t m);
// explain's exact chains (attention.h "Exact sites", chains) in binary64 lanes, as a host device
// supplies them: the lane step y_l = fma((double)a, (double)x_l, y_l), l < n; and the key lanes'
// dot products acc_l = fma chain from +0 over c = 0 … nc − 1 (in that order) of
// (double)a_c·(double)xT[c·ld + l], l < m ≤ PP_ATTN_MAX_LANES. One binary64 rounding a step in
// every lane: the scalar loops' bits.
typedef void (*pp_attn_axpy64_fn)(float a, const float *x, double *y, int64_t n);
typedef void (*pp_attn_dots64_fn)(const float *a, const float *xT, int64_t ld, int64_t nc, double *acc, int64_t m);
// The flash forward's NaN-sticky running max over a run of keys, as a host device supplies it:
// the value of the loop "for i < n: if (s_i > m || s_i != s_i) m = s_i; return m" with its bits
// (the first of equal maxima, so −0 before +0 stays −0; the last NaN).
typedef float (*pp_attn_rowmax_fn)(const float *s, int64_t n, float m);
// Two rows' key-lane dot products in one pass over the keys, as a host device supplies them: for
// l < m ≤ PP_ATTN_MAX_LANES, acc0_l and acc1_l the chains of pp_attn_dots_fn of a0 and of a1 (from
// +0, c = 0 … nc − 1 in order): each key's loads serve both rows, each lane the same bits.
typedef void (*pp_attn_dots2_fn)(const float *a0, const float *a1, const float *xT, int64_t ld, int64_t nc,
                                 float *acc0, float *acc1, int64_t m);
// Four rows' key-lane dot products, as a host device supplies them: for i < 4, acc[i][l] the
// chain of pp_attn_dots_fn for a[i] (l < m ≤ PP_ATTN_MAX_LANES), each key vector loaded once.
typedef void (*pp_attn_dots4_fn)(const float *const *a, const float *xT, int64_t ld, int64_t nc, float *const *acc,
                                 int64_t m);
// The unfused softmax's exponentials of a row, as a host device supplies them (vector binary64
// arithmetic): p_i = pp_expf(x_i − m) for i < n (the binary32 subtraction, then pp_expf's IEEE
// operations in its order per lane: the same bits); p may be x.
typedef void (*pp_attn_expf_fn)(const float *x, float m, float *p, int64_t n);
// The unfused softmax's probabilities of a row, as a host device supplies them: p_i =
// pp_attn_store(f, e_i / sum) for i < n (the binary32 division, then the store): p may be e.
typedef void (*pp_attn_prob_fn)(pp_format_id f, const float *e, float sum, float *p, int64_t n);
// Rank-1 updates of a group of key chains (dk, dv), as a host device supplies them: for rows
// r = 0 … nr − 1 in order and each key g < min(na_r, ng) (a row's active keys are a prefix),
// acc[g·PP_ATTN_MAX_LANES + l] = fma(a_r[g], x_r[l], acc[g·PP_ATTN_MAX_LANES + l]) for l < m ≤
// PP_ATTN_MAX_LANES: each chain's steps in row order, one rounding each, so any blocking of keys
// and lanes gives the scalar loop's bits.
typedef void (*pp_attn_ger_fn)(int nr, const float *const *a, const float *const *x, const int *na, int ng,
                               float *acc, int64_t m);

typedef struct pp_attn_launch {
    int op;
    int64_t n;  // threads
    // the problem
    pp_format_id f;
    pp_attn_kernel kernel;
    pp_attn_accum accum;
    pp_attn_scale scale;
    pp_attn_softmax softmax;
    pp_attn_max max_subtract;
    pp_format_id cp_accum, cp_grad_accum;
    pp_attn_cp_flavour cp_flavour;
    int bn;        // flash forward key tile
    int fp8;       // pp_attn_fp8: 0, or FA3's FP8 forward (attention_fp8.h); fp8_xv its v descale
    float fp8_xv;
    double fp8_sig;  // fp8: σ' (sc.sl2), in binary64 when explain's softmax_scale is exact
    // fp8 block scalings (attention.h "FP8 scaling schemes"): fp8_sch the pp_scaling, fp8_block
    // its block (0: per-tensor); qs, ksT, vs each element's block scale, laid out as q, kT, v
    int fp8_sch, fp8_block;
    int fp8_mx_rule;  // pp_mx_rule of scaling mx (P's blocks)
    const float *qs, *ksT, *vs;
    int mma;       // fp8: 1 for Hopper's FP8 accumulation in S and P·V (attention_fp8.h), else 0
    int bbm, bbn;  // flash backward tiles: query rows (dk/dv's blocks), keys (dq's blocks)
    pp_attn_scalars sc;
    uint64_t order_seed;  // the variant's (attention.h, "Order band"); 0 nominal
    int64_t order_row0, order_rows;  // a slice's first row in the problem's [B][H][s_q]; its row count
    pp_site_mask exact_sites;  // the variant's (attention.h, "Exact sites"); 0 nominal
    int64_t b, h, h_kv, grp, sq, skv, d;
    int causal;
    // the block geometry: cp = 0 plain (R = 1), else ring world W, chunk c, step, direction
    int cp, W, step, ring_bwd;
    int64_t c, R, BQ, BK;
    // inputs (head-major)
    const float *q, *k, *v, *go;
    const float *kT, *vT;        // k', v' key-major [b][h_kv][d][s_kv] (the lanes' dot products;
                                 // in tiles of key_tile keys when set, pp_attn_keyT_at)
    const float *out_f, *lse_f;  // backward: the forward's final out and lse
    // block outputs
    float *O, *Lse;              // forward: out and lse at global rows (CP: step i's partials)
    float *SP, *DS, *Mrow, *Mblk;
    float *dqb, *dkh, *dvh;      // backward partials: dq' [b][h][s][d]; dk', dv [b][h][R][BK][d]
    // CP state
    const float *Oall, *Lall;    // all steps' partials [W][b][h][s][d], [W][b][h][s]
    float *run_lse, *acc_dq, *acc_dk, *acc_dv;
    double *run_lse64;           // cp_flavour te-2024: the binary64 running lse [b][h][s]
    // explain's binary64 shadows (attention.h "Exact sites", kind 1): a store site made exact keeps
    // its value here, laid out as the binary32 buffer it shadows, which then holds RN_32 of it;
    // NULL unless the site is exact (the CPU emulation only: the CUDA launchers refuse exact sites)
    double *O64, *Lse64;         // forward block out and lse (sites out or out_partial, lse)
    const double *out_f64, *lse_f64;  // backward: the forward's final out (site out), lse (plain:
                                      // site lse; CP: cp_lse_merge's run_lse64)
    const double *Oall64, *Lall64;    // CP: all steps' partials (out_partial, lse)
    double *out64;               // CP: the merged out (site out)
    double *dqb64, *dkh64, *dvh64;    // backward partials (sites dq, dk, dv)
    double *acc_dq64, *acc_dk64, *acc_dv64;  // CP accumulators (cp_dq_acc, cp_dkv_acc)
    double *Oacc64;              // flash forward: the running P·V accumulator o (site pv_acc), as O
    double *dq64, *dk64, *dv64;  // finals (plain: sites dq, dk, dv; CP: cp_dq_acc, cp_dkv_acc)
    // finals
    float *out, *dq, *dk, *dv;
    // PP_AT_GATHER / PP_AT_FILL0
    const float *src;
    float *dst;
    int64_t gS, gH;
    float gscale;
    // How a host device runs the threads (see Lanes; the plan and the GPU leave them 0): up to
    // `lanes` threads of a run together, the lane step `axpy` (NULL: the plain fmaf loop), and
    // `axpy_n` for several steps on one accumulator (NULL: axpy once per step), and `exp2_fma`
    // for the flash softmax's exponentials of a run of keys.
    int lanes;
    // key_tile: the key-major arrays (kT, vT, ksT) in tiles of this many keys (0: one row of s_kv
    // per column; see Key-major tiles), for every launch of a plan alike, PP_AT_TRANSPOSE's too
    int64_t key_tile;
    pp_attn_axpy_fn axpy;
    pp_attn_axpy_n_fn axpy_n;
    pp_attn_exp2_fn exp2_fma;  // NULL: pp_attn_exp2f one key at a time
    pp_attn_dots_fn dots_T;    // the plain order's key-lane dot products (NULL: lane steps)
    pp_attn_axpy64_fn axpy64;  // explain's binary64 chains (NULL: the scalar fma loops)
    pp_attn_dots64_fn dots64;
    pp_attn_rowmax_fn rowmax;  // the flash forward's row max (NULL: the scalar loop)
    pp_attn_dots2_fn dots2_T;  // two rows' dots (NULL: the flash backward's rows one at a time)
    pp_attn_dots4_fn dots4_T;  // four rows' dots (NULL: the flash rows' groups by twos)
    pp_attn_expf_fn expf_sub;  // the unfused softmax's exponentials (NULL: pp_expf one key at a time)
    pp_attn_prob_fn prob;      // the unfused softmax's probabilities (NULL: one key at a time)
    pp_attn_ger_fn ger;        // dk/dv's key groups (NULL: each key's lane steps, pp_attn_step_push)
    // Range diagnostics (kernels/ranges.h, kernels/sites.h): where the threads note their sites
    // (NULL: nowhere; the CPU device gives each worker its own, the GPU one device accumulator
    // that every thread notes into atomically); a slice's (b, hh) is the run's q head
    // ((unit0 + b) mod hkv_all)·grp + hh (pp_attn_range_head);
    // finite_in: every input finite (an Inf at a chain's end is then an overflow in it).
    // recompute: the unfused backward's recomputation of S and P, whose sites the forward noted.
    pp_ranges *ranges;
    int64_t unit0, hkv_all;
    int finite_in, recompute;
} pp_attn_launch;

// The run's q head of a launch's (b, hh), and its kv head, for range notes.
PP_HD static inline int64_t pp_attn_range_head(const pp_attn_launch *L, int64_t b, int64_t hh)
{
    return L->hkv_all > 0 ? ((L->unit0 + b) % L->hkv_all) * L->grp + hh : hh;
}
PP_HD static inline int64_t pp_attn_range_kvhead(const pp_attn_launch *L, int64_t b, int64_t g)
{
    return L->hkv_all > 0 ? (L->unit0 + b) % L->hkv_all : g;
}

// The format of a block's out store: site out_partial in a CP ring step, out in plain attention
// (attention.h "Exact sites").
PP_HD static inline pp_format_id pp_attn_out_fmt(const pp_attn_launch *L)
{
    return pp_attn_site_fmt(L->exact_sites, L->cp ? PP_SITE_ATTN_OUT_PARTIAL : PP_SITE_ATTN_OUT, L->f);
}

// ---------------------------------------------------------------------------------------------
// Geometry

typedef struct pp_attn_geom {
    int64_t nq, nk, q0, off;
    int causal, r, o;
} pp_attn_geom;

// The step type of rank r at forward step i: 0 diagonal, 1 full q × first kv chunk, 2 second-half q × full kv, 3 no mask.
PP_HD static inline int pp_attn_step_type(int causal, int r, int i)
{
    if (!causal)
        return 3;
    return i == 0 ? 0 : i <= r ? 1 : 2;
}

// The block of rank r in L's step (TE's ring schedule; the whole problem when not CP).
PP_HD static inline void pp_attn_geom_of(const pp_attn_launch *L, int r, pp_attn_geom *G)
{
    if (!L->cp) {
        G->nq = L->sq, G->nk = L->skv, G->q0 = 0, G->off = L->skv - L->sq;
        G->causal = L->causal, G->r = 0, G->o = 0;
        return;
    }
    int W = L->W, i = L->step;
    int fi = L->ring_bwd ? W - 1 - i : i;  // backward step i runs forward step W−1−i's block
    int o = L->ring_bwd ? (r + 1 + i) % W : ((r - i) % W + W) % W;
    int t = pp_attn_step_type(L->causal, r, fi);
    G->nk = t == 1 ? L->c : 2 * L->c;
    G->nq = t == 2 ? L->c : 2 * L->c;
    G->q0 = t == 2 ? L->c : 0;
    G->off = 0;
    G->causal = t == 0;
    G->r = r, G->o = o;
}

// Global sequence position of the rank-local row lx of rank r (chunks r, 2W−1−r).
PP_HD static inline int64_t pp_attn_cp_row(const pp_attn_launch *L, int r, int64_t lx)
{
    return lx < L->c ? r * L->c + lx : (2 * L->W - 1 - r) * L->c + lx - L->c;
}

PP_HD static inline int64_t pp_attn_qrow(const pp_attn_launch *L, const pp_attn_geom *G, int64_t x)
{
    return L->cp ? pp_attn_cp_row(L, G->r, G->q0 + x) : x;
}

PP_HD static inline int64_t pp_attn_krow(const pp_attn_launch *L, const pp_attn_geom *G, int64_t y)
{
    return L->cp ? pp_attn_cp_row(L, G->o, y) : y;
}

// The order band's key of global row s of q head hh of batch b (launch-local indices), forward
// step L->step: the row's index in the whole problem [B][H][s_q], plus the step times the rows of
// the problem, so a slice of units (order_row0: its first row; order_rows: the problem's rows)
// draws what the whole problem would ("Order band").
PP_HD static inline int64_t pp_attn_order_row(const pp_attn_launch *L, int64_t b, int64_t hh, int64_t s)
{
    return L->order_row0 + (b * L->h + hh) * L->sq + s + (int64_t)L->step * L->order_rows;
}

// Last visible key of block row x, or −1.
PP_HD static inline int64_t pp_attn_jend(const pp_attn_geom *G, int64_t x)
{
    if (!G->causal)
        return G->nk - 1;
    int64_t e = x + G->off;
    return e < G->nk - 1 ? (e < -1 ? -1 : e) : G->nk - 1;
}

// Whether global row s of head data is touched by L's step (CP: rank-local rows ≥ q0).
PP_HD static inline int pp_attn_cp_touched(const pp_attn_launch *L, int64_t s)
{
    int64_t ch = s / L->c;
    int r = (int)(ch < L->W ? ch : 2 * L->W - 1 - ch);
    pp_attn_geom G;
    pp_attn_geom_of(L, r, &G);
    int64_t lx = ch < L->W ? s % L->c : L->c + s % L->c;
    return lx >= G.q0;
}

// Row pointers of block row x / key y for q head hh.
PP_HD static inline int64_t pp_attn_qoff(const pp_attn_launch *L, int64_t b, int64_t hh, int64_t s)
{
    return ((b * L->h + hh) * L->sq + s) * L->d;
}
PP_HD static inline int64_t pp_attn_koff(const pp_attn_launch *L, int64_t b, int64_t hh, int64_t s)
{
    return ((b * L->h_kv + hh / L->grp) * L->skv + s) * L->d;
}
// Key row s's offset from its head's key row 0 (kh = pp_attn_koff(L, b, hh, 0)): the same integer
// as pp_attn_koff(L, b, hh, s), without a division by grp in every key's step of a chain.
PP_HD static inline int64_t pp_attn_koff_at(const pp_attn_launch *L, int64_t kh, int64_t s)
{
    return kh + s * L->d;
}

// Key-major tiles. A head's key-major array (kT, vT, ksT: S = s_kv keys by d columns) is one row
// of S keys per column (key_tile 0: [d][S], what the GPU reads), or, where a host device sets
// key_tile = T, tiles of T consecutive keys, each [d][w] (w = T, the last tile's w the rest) and
// the tiles in key order: a run of key lanes (which never crosses a tile, pp_attn_key_lanes) then
// reads its d columns T floats apart, not S (a 16 KiB stride at s 4096 that maps every column to
// the same cache sets). Only addresses change: every chain reads the same values in its order.
// Element (key s, column e) of a head's array, from the head's start; the column stride at key s.
PP_HD static inline int64_t pp_attn_keyT_at(const pp_attn_launch *L, int64_t S, int64_t s, int64_t e)
{
    if (L->key_tile <= 0)
        return e * S + s;
    int64_t s0 = s - s % L->key_tile, w = S - s0 < L->key_tile ? S - s0 : L->key_tile;
    return s0 * L->d + e * w + (s - s0);
}
PP_HD static inline int64_t pp_attn_keyT_ld_at(const pp_attn_launch *L, int64_t S, int64_t s)
{
    if (L->key_tile <= 0)
        return S;
    int64_t s0 = s - s % L->key_tile;
    return S - s0 < L->key_tile ? S - s0 : L->key_tile;
}
// Key-major (kT, vT) pointer of block key y of q head hh, and its column stride.
PP_HD static inline const float *pp_attn_keyT(const pp_attn_launch *L, const pp_attn_geom *G, const float *xT,
                                              int64_t b, int64_t hh, int64_t y)
{
    return xT + (b * L->h_kv + hh / L->grp) * L->d * L->skv + pp_attn_keyT_at(L, L->skv, pp_attn_krow(L, G, y), 0);
}
PP_HD static inline int64_t pp_attn_keyT_ld(const pp_attn_launch *L, const pp_attn_geom *G, int64_t y)
{
    return pp_attn_keyT_ld_at(L, L->skv, pp_attn_krow(L, G, y));
}
// Block scratch [b][h][R][BQ][BK] and row scratch [b][h][R][BQ].
PP_HD static inline int64_t pp_attn_blk_row(const pp_attn_launch *L, int64_t b, int64_t hh, int r, int64_t x)
{
    return ((b * L->h + hh) * L->R + r) * L->BQ + x;
}

// ---------------------------------------------------------------------------------------------
// Lanes. The threads of one row that differ only in the key y (scores, dP) or the column e (P·V,
// dq, dk, dv) form a run, and a run may be computed together, each thread one lane of a vector:
// the lane loop is the innermost loop, every lane's chain keeps its own order, so a run gives the
// bits of its threads run one by one, whatever the lane count. The GPU runs one thread at a time
// (lanes 1); the CPU device (kernels/cpu/attention_device.c) runs up to PP_ATTN_MAX_LANES lanes
// with a vector FMA. Dot products run their lanes over keys, so they read k', v' key-major (kT,
// vT: contiguous lanes); a CP block's keys are two chunks of c rows, so lanes never cross y = c,
// nor a key-major tile (Key-major tiles).

#ifdef __CUDA_ARCH__
#define PP_ATTN_MAX_LANES 1
#else
#define PP_ATTN_MAX_LANES 128
#endif

PP_HD static inline int64_t pp_attn_lanes(const pp_attn_launch *L, int64_t n)
{
    int64_t w = L->lanes > 1 ? (L->lanes < PP_ATTN_MAX_LANES ? L->lanes : PP_ATTN_MAX_LANES) : 1;
    return n < w ? n : w;
}

// The lanes from block key y on (at most n): contiguous global key rows of one key-major tile.
PP_HD static inline int64_t pp_attn_key_lanes(const pp_attn_launch *L, const pp_attn_geom *G, int64_t y, int64_t n)
{
    int64_t m = pp_attn_lanes(L, n);
    m = L->cp && y < L->c && y + m > L->c ? L->c - y : m;
    if (L->key_tile > 0) {
        int64_t k = pp_attn_krow(L, G, y), left = L->key_tile - k % L->key_tile;
        m = m < left ? m : left;
    }
    return m;
}

// The lane step: y_l = fma(a, x_l, y_l) for l < n (one rounding each: every FMA unit agrees).
PP_HD static inline void pp_attn_axpy(const pp_attn_launch *L, float a, const float *x, float *y, int64_t n)
{
#ifndef __CUDA_ARCH__
    if (L->axpy) {
        L->axpy(a, x, y, n);
        return;
    }
#endif
    for (int64_t l = 0; l < n; l++)
        y[l] = fmaf(a, x[l], y[l]);
}

// A chain's next steps, collected: pp_attn_step_push(L, T, a, x, y, n) stands for the lane step
// pp_attn_axpy(L, a, x, y, n), which runs when the buffer is full or at pp_attn_step_flush (before
// y is read), the buffered steps in their order through the device's axpy_n. The same steps in the
// same order: the same bits. On the GPU (one lane) a step runs at once.
#ifdef __CUDA_ARCH__
#define PP_ATTN_STEP_BUF 1
#else
#define PP_ATTN_STEP_BUF 32
#endif

typedef struct pp_attn_steps {
    float a[PP_ATTN_STEP_BUF];
    const float *x[PP_ATTN_STEP_BUF];
    int n;
} pp_attn_steps;

PP_HD static inline void pp_attn_step_flush(const pp_attn_launch *L, pp_attn_steps *T, float *y, int64_t n)
{
#ifndef __CUDA_ARCH__
    if (L->axpy_n && T->n > 1) {
        L->axpy_n(T->a, T->x, T->n, y, n);
        T->n = 0;
        return;
    }
#endif
    for (int t = 0; t < T->n; t++)
        pp_attn_axpy(L, T->a[t], T->x[t], y, n);
    T->n = 0;
}

PP_HD static inline void pp_attn_step_push(const pp_attn_launch *L, pp_attn_steps *T, float a, const float *x,
                                           float *y, int64_t n)
{
    T->a[T->n] = a;
    T->x[T->n++] = x;
    if (T->n == PP_ATTN_STEP_BUF)
        pp_attn_step_flush(L, T, y, n);
}

// The NaN-sticky running max of m over s_0 … s_{n−1} (pp_attn_rowmax_fn), in the host device's
// vector lanes where it has them.
PP_HD static inline float pp_attn_rowmax(const pp_attn_launch *L, const float *s, int64_t n, float m)
{
#ifndef __CUDA_ARCH__
    if (L->rowmax)
        return L->rowmax(s, n, m);
#else
    (void)L;
#endif
    for (int64_t i = 0; i < n; i++)
        if (s[i] > m || s[i] != s[i])
            m = s[i];
    return m;
}

// p_i = pp_attn_exp2f(fmaf(s_i, a, b)) for i < n through the host device's vector exponentials
// (exp2_fma: the same bits); returns 0, having done nothing, where there are none (the GPU, the
// portable CPU path): the caller then computes each p_i itself.
PP_HD static inline int pp_attn_exp2_lanes(const pp_attn_launch *L, const float *s, float a, float b, float *p,
                                           int64_t n)
{
#ifndef __CUDA_ARCH__
    if (L->exp2_fma) {
        L->exp2_fma(s, a, b, p, n);
        return 1;
    }
#endif
    (void)L, (void)s, (void)a, (void)b, (void)p, (void)n;
    return 0;
}

// Whether the host device has the unfused softmax's vector exponentials (pp_attn_expf_lanes then
// computes them): 0 on the GPU and the portable CPU path.
PP_HD static inline int pp_attn_expf_has(const pp_attn_launch *L)
{
#ifndef __CUDA_ARCH__
    return L->expf_sub != 0;
#else
    (void)L;
    return 0;
#endif
}

// p_i = pp_expf(x_i − m) for i < n (p may be x) through the host device's vector exponentials
// (expf_sub: the same bits); returns 0, having done nothing, where there are none (the GPU, the
// portable CPU path).
PP_HD static inline int pp_attn_expf_lanes(const pp_attn_launch *L, const float *x, float m, float *p, int64_t n)
{
#ifndef __CUDA_ARCH__
    if (L->expf_sub) {
        L->expf_sub(x, m, p, n);
        return 1;
    }
#endif
    (void)L, (void)x, (void)m, (void)p, (void)n;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// MMA k-chunks (attention.h "Order band"): a chain over the reduction indices [lo, hi) of one of
// the attention's GEMMs walks the chunks of 16 indices (aligned to multiples of 16 from the GEMM's
// index 0: a block's first row, key or column) in increasing order, and the indices inside each
// chunk in the chunk's seeded order (pp_attn_mma_chunk; increasing at seed 0, so seed 0 is the
// plain chain lo, lo + 1, …, hi − 1). Indices of a chunk outside [lo, hi) are skipped: they are
// masked or past the end, zero products in the MMA.

typedef struct pp_attn_mma_walk {
    uint64_t seed;
    int gemm;
    int64_t lo, hi, cb, r, a, c;  // chunk base cb, position r in it, its permutation (a, c)
} pp_attn_mma_walk;

PP_HD static inline void pp_attn_mma_begin(pp_attn_mma_walk *w, uint64_t seed, int gemm, int64_t lo, int64_t hi)
{
    w->seed = seed, w->gemm = gemm, w->lo = lo, w->hi = hi, w->r = 0;
    w->cb = lo - lo % PP_GEMM_MMA_CHUNK;
    if (seed != 0)
        pp_attn_mma_chunk(seed, gemm, w->cb / PP_GEMM_MMA_CHUNK, &w->a, &w->c);
    else  // the identity permutation (seed 0's draw), walked directly by pp_attn_mma_next
        w->a = 1, w->c = 0;
}

// The next reduction index into *l; 0 when the chain is done: at seed 0 inline (every chunk's
// permutation the identity: lo, lo + 1, …, hi − 1 in order), else the chunks' walk.
PP_HD static inline int pp_attn_mma_next_perm(pp_attn_mma_walk *w, int64_t *l);
PP_HD static PP_ATTN_STORE_INLINE int pp_attn_mma_next(pp_attn_mma_walk *w, int64_t *l)
{
    if (w->seed == 0) {
        if (w->lo >= w->hi)
            return 0;
        *l = w->lo++;
        return 1;
    }
    return pp_attn_mma_next_perm(w, l);
}
PP_HD static inline int pp_attn_mma_next_perm(pp_attn_mma_walk *w, int64_t *l)
{
    for (;;) {
        if (w->r == PP_GEMM_MMA_CHUNK) {
            w->cb += PP_GEMM_MMA_CHUNK, w->r = 0;
            if (w->cb < w->hi)
                pp_attn_mma_chunk(w->seed, w->gemm, w->cb / PP_GEMM_MMA_CHUNK, &w->a, &w->c);
        }
        if (w->cb >= w->hi)
            return 0;
        int64_t x = pp_gemm_perm_step(w->cb + w->r++, w->a, w->c);
        if (x >= w->lo && x < w->hi) {
            *l = x;
            return 1;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Dot products: one chain per (row, key), from +0, over c = 0..d−1 in the MMA k-chunk walk of
// GEMM `gemm` (c increasing at seed 0), fma (fp32) or pp_gemm_step_storage.

PP_HD static inline float pp_attn_dot32(const float *a, const float *x, int64_t d)
{
    float acc = 0.0f;
    for (int64_t c = 0; c < d; c++)
        acc = fmaf(a[c], x[c], acc);
    return acc;
}

// The same chain with a binary64 second operand (explain: the forward's out kept in binary64):
// each step RN_32 of the binary64 fma (a double rounding: for a binary32 x an ulp_32 off fmaf's
// one rounding where the binary64 value lies next to a binary32 midpoint).
PP_HD static inline float pp_attn_dot32_x64(const float *a, const double *x, int64_t d)
{
    float acc = 0.0f;
    for (int64_t c = 0; c < d; c++)
        acc = (float)fma((double)a[c], x[c], (double)acc);
    return acc;
}

// The dot chains with their site exact (attention.h "Exact sites", chains): one binary64 fma chain
// from +0, c increasing (a binary64 sum's order moves it by rounding errors of binary64 only), of
// binary32 a with m consecutive keys of key-major xT (row length ld), or with a binary32 or binary64
// row x (x64 non-NULL: the forward's out kept in binary64, D = dO·O).
PP_HD static inline void pp_attn_dots_T64(const pp_attn_launch *L, const float *a, const float *xT, int64_t ld,
                                          int64_t m, int64_t d, double *acc)
{
#ifndef __CUDA_ARCH__
    if (L->dots64) {
        L->dots64(a, xT, ld, d, acc, m);
        return;
    }
#else
    (void)L;
#endif
    for (int64_t l = 0; l < m; l++)
        acc[l] = 0.0;
    for (int64_t c = 0; c < d; c++)
        for (int64_t l = 0; l < m; l++)
            acc[l] = fma((double)a[c], (double)xT[c * ld + l], acc[l]);
}
// The binary64 chain step y_l = fma((double)a, (double)x_l, y_l), l < n (explain's pv_acc, dq_acc,
// dkv_acc), in the device's binary64 lanes where it has them.
PP_HD static inline void pp_attn_axpy64(const pp_attn_launch *L, float a, const float *x, double *y, int64_t n)
{
#ifndef __CUDA_ARCH__
    if (L->axpy64) {
        L->axpy64(a, x, y, n);
        return;
    }
#else
    (void)L;
#endif
    for (int64_t l = 0; l < n; l++)
        y[l] = fma((double)a, (double)x[l], y[l]);
}
PP_HD static inline double pp_attn_dot64(const float *a, const float *x, const double *x64, int64_t d)
{
    double acc = 0.0;
    for (int64_t c = 0; c < d; c++)
        acc = fma((double)a[c], x64 ? x64[c] : (double)x[c], acc);
    return acc;
}

PP_HD static inline double pp_attn_dot_storage(pp_format_id f, const float *a, const float *x, int64_t d,
                                               uint64_t seed, int gemm)
{
    double s = 0.0;
    pp_attn_mma_walk w;
    int64_t c;
    for (pp_attn_mma_begin(&w, seed, gemm, 0, d); pp_attn_mma_next(&w, &c);)
        s = pp_gemm_step_storage(f, a[c], x[c], s);
    return s;
}

// The fp32 dots of a with m consecutive keys as lanes: acc_l = chain over c of a_c·xT[c·ld + l]
// (xT points at the first key in a key-major array of row length ld), c in GEMM gemm's chunk walk.
// The same chains over c in [c0, c1) only (an fp8 block scaling's block of d).
PP_HD static inline void pp_attn_dots_T_span(const pp_attn_launch *L, int gemm, const float *a, const float *xT,
                                             int64_t ld, int64_t m, float *acc, int64_t c0, int64_t c1)
{
#ifndef __CUDA_ARCH__
    if (L->dots_T && L->order_seed == 0) {  // seed 0: the walk is c0, c0 + 1, …, c1 − 1
        L->dots_T(a + c0, xT + c0 * ld, ld, c1 - c0, acc, m);
        return;
    }
#endif
    for (int64_t l = 0; l < m; l++)
        acc[l] = 0.0f;
    pp_attn_mma_walk w;
    pp_attn_steps T;
    T.n = 0;
    int64_t c;
    for (pp_attn_mma_begin(&w, L->order_seed, gemm, c0, c1); pp_attn_mma_next(&w, &c);)
        pp_attn_step_push(L, &T, a[c], xT + c * ld, acc, m);
    pp_attn_step_flush(L, &T, acc, m);
}

PP_HD static inline void pp_attn_dots_T(const pp_attn_launch *L, int gemm, const float *a, const float *xT,
                                        int64_t ld, int64_t m, float *acc)
{
    pp_attn_dots_T_span(L, gemm, a, xT, ld, m, acc, 0, L->d);
}

// The flash forward's scores: pp_attn_dots_T, or under an fp8 block scaling (attention.h "FP8
// scaling schemes") Σ over the blocks of d, in order, of the block's chain (from +0) scaled by
// the product of q's and k's block scales and added (pp_gemm_block_add: acc ⊕ RN_32(p·x_q·x_k),
// the scaled GEMM's block step). as, xsT: the block scales laid out as a, xT (column stride ld).
PP_HD static inline void pp_attn_fp8_dots(const pp_attn_launch *L, const float *a, const float *as, const float *xT,
                                          const float *xsT, int64_t ld, int64_t m, float *acc)
{
    if (!L->fp8_block) {
        pp_attn_dots_T(L, PP_ATTN_MMA_S, a, xT, ld, m, acc);
        return;
    }
    float part[PP_ATTN_MAX_LANES];
    for (int64_t l = 0; l < m; l++)
        acc[l] = 0.0f;
    for (int64_t c0 = 0; c0 < L->d; c0 += L->fp8_block) {
        int64_t c1 = c0 + L->fp8_block < L->d ? c0 + L->fp8_block : L->d;
        pp_attn_dots_T_span(L, PP_ATTN_MMA_S, a, xT, ld, m, part, c0, c1);
        for (int64_t l = 0; l < m; l++)
            acc[l] = pp_gemm_block_add(acc[l], part[l], (double)as[c0] * (double)xsT[c0 * ld + l]);
    }
}

// PP_AT_GATHER, threads [t0, t0 + n) of one row (b, hh, s): the prescale (a copy when the
// factor is 1) and the transpose to head-major.
PP_HD static inline void pp_attn_r_gather(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    int64_t e0 = t0 % L->d, row = t0 / L->d, s = row % L->gS, hh = (row / L->gS) % L->gH, b = row / (L->gS * L->gH);
    const float *x = L->src + ((b * L->gS + s) * L->gH + hh) * L->d;
    for (int64_t e = e0; e < e0 + n; e++)
        L->dst[t0 - e0 + e] = L->gscale == 1.0f ? x[e] : pp_attn_mul_store(L->f, L->gscale, x[e]);
}

// PP_AT_TRANSPOSE, threads [t0, t0 + n) of one row (bh, e) of a head's [S][d] → [d][S] (or its
// key-major tiles, pp_attn_keyT_at).
PP_HD static inline void pp_attn_r_transpose(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    int64_t s0 = t0 % L->gS, e = (t0 / L->gS) % L->d, bh = t0 / (L->gS * L->d);
    float *dst = L->dst + bh * L->gS * L->d;
    for (int64_t s = s0; s < s0 + n; s++)
        dst[pp_attn_keyT_at(L, L->gS, s, e)] = L->src[(bh * L->gS + s) * L->d + e];
}

// Decodes t = (((b·h + hh)·R + r)·BQ + x) [·inner + y].
// Row task t of a launch: its (b, head, rank r, block-local row x) and r's block geometry G.
// Returns 0 when x lies past the block's rows (the launch is sized for the largest block).
PP_HD static inline int pp_attn_row(const pp_attn_launch *L, int64_t t, int64_t *b, int64_t *hh, int *r, int64_t *x,
                                    pp_attn_geom *G)
{
    *x = t % L->BQ;
    t /= L->BQ;
    *r = (int)(t % L->R);
    t /= L->R;
    *hh = t % L->h;
    *b = t / L->h;
    pp_attn_geom_of(L, *r, G);
    return *x < G->nq;
}

// The fp32 epilogue of m keys' chains acc of a scores (dp 0) or dP row of q head hh: out_l the
// score's or dP's store, and the range notes.
PP_HD static inline void pp_attn_row_dots_end(const pp_attn_launch *L, int dp, int64_t b, int64_t hh,
                                              const float *acc, float *out, int64_t m)
{
    // (the format and the branch hoisted: loops the compiler may vectorise)
    pp_format_id f = pp_attn_site_fmt(L->exact_sites, dp ? PP_SITE_ATTN_DP : PP_SITE_ATTN_SCORES, L->f);
    float alpha = (float)L->sc.alpha_c;
    if (dp && f == PP_FMT_BF16)
        for (int64_t l = 0; l < m; l++)
            out[l] = pp_round_bf16_ne(acc[l]);
    else if (dp)
        for (int64_t l = 0; l < m; l++)
            out[l] = pp_attn_store(f, acc[l]);
    else if (f == PP_FMT_BF16)  // pp_attn_score_fp32's bf16 path: RN_bf16 of the binary32 product
        for (int64_t l = 0; l < m; l++)
            out[l] = pp_round_bf16_ne(alpha * acc[l]);
    else
        for (int64_t l = 0; l < m; l++)
            out[l] = pp_attn_score_fp32(f, &L->sc, acc[l]);
    for (int64_t l = 0; L->ranges && (dp || !L->recompute) && l < m; l++)
        pp_range_note(L->ranges, dp ? PP_SITE_ATTN_DP : PP_SITE_ATTN_SCORES, pp_attn_range_head(L, b, hh), L->f,
                      dp ? (double)acc[l] : L->sc.alpha_c * acc[l], out[l]);
}

// Threads [t0, t0 + n) of one row of a [..][BQ][BK] launch (scores or dP): the visible keys'
// dot products of the row's a (q' or dout) with x (k' or v; xT key-major), then the epilogue.
PP_HD static inline void pp_attn_r_row_dots(const pp_attn_launch *L, int64_t t0, int64_t n, int dp)
{
    int64_t y0 = t0 % L->BK, b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t0 / L->BK, &b, &hh, &r, &x, &G))
        return;
    int64_t y1 = pp_attn_jend(&G, x) + 1;  // masked keys: nothing written
    y1 = y1 < y0 + n ? y1 : y0 + n;
    const float *a = (dp ? L->go : L->q) + pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x));
    const float *xs = dp ? L->v : L->k;
    float *out = (dp ? L->DS : L->SP) + t0 - y0;  // the row
    int gemm = dp ? PP_ATTN_MMA_DP : PP_ATTN_MMA_S;
    if (pp_site_exact(L->exact_sites, dp ? PP_SITE_ATTN_DP : PP_SITE_ATTN_SCORES)) {
        // the unfused S (scores) or dP (dp) exact (attention.h "Exact sites", chains): the GEMM's
        // chain in binary64 (fp32 or storage accumulation alike), then one rounding to the binary32
        // buffer (S: RN_32(α_c·chain), the product in binary64); no binary64 shadow of S or dP
        double acc64[PP_ATTN_MAX_LANES];
        for (int64_t y = y0, m; y < y1; y += m) {
            m = pp_attn_key_lanes(L, &G, y, y1 - y);
            pp_attn_dots_T64(L, a, pp_attn_keyT(L, &G, dp ? L->vT : L->kT, b, hh, y), pp_attn_keyT_ld(L, &G, y), m,
                             L->d, acc64);
            for (int64_t l = 0; l < m; l++)
                out[y + l] = dp ? (float)acc64[l] : pp_attn_score_storage(PP_FMT_FP32, &L->sc, acc64[l]);
            for (int64_t l = 0; L->ranges && (dp || !L->recompute) && l < m; l++)
                pp_range_note(L->ranges, dp ? PP_SITE_ATTN_DP : PP_SITE_ATTN_SCORES, pp_attn_range_head(L, b, hh),
                              L->f, dp ? acc64[l] : L->sc.alpha_c * acc64[l], out[y + l]);
        }
        return;
    }
    if (L->accum == PP_ATTN_ACC_STORAGE) {
        for (int64_t y = y0; y < y1; y++) {
            double acc = pp_attn_dot_storage(L->f, a, xs + pp_attn_koff(L, b, hh, pp_attn_krow(L, &G, y)), L->d,
                                             L->order_seed, gemm);
            out[y] = dp ? (float)acc : pp_attn_score_storage(pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_SCORES, L->f),
                                                             &L->sc, acc);
            if (L->ranges && (dp || !L->recompute))
                pp_range_note(L->ranges, dp ? PP_SITE_ATTN_DP : PP_SITE_ATTN_SCORES, pp_attn_range_head(L, b, hh),
                              L->f, isinf(acc) && L->finite_in ? 0.0 : dp ? acc : L->sc.alpha_c * acc, out[y]);
        }
        return;
    }
    float acc[PP_ATTN_MAX_LANES];
    for (int64_t y = y0, m; y < y1; y += m) {
        m = pp_attn_key_lanes(L, &G, y, y1 - y);
        pp_attn_dots_T(L, gemm, a, pp_attn_keyT(L, &G, dp ? L->vT : L->kT, b, hh, y), pp_attn_keyT_ld(L, &G, y), m,
                       acc);
        pp_attn_row_dots_end(L, dp, b, hh, acc, out + y, m);
    }
}

#ifndef __CUDA_ARCH__
// The host device's pairs of rows of a scores or dP launch (dots2_T, fp32 accumulation, seed 0,
// the site not exact): two consecutive rows of one block get their chains from one pass over the
// keys either sees (each key's loads serve both rows), then each row's epilogue on its own visible
// keys (a row's chains past its last key are dropped: masked keys are not written). Each chain is
// the one pp_attn_r_row_dots computes, so the same bits; other runs go alone. Whole runs only.
PP_HD static inline int pp_attn_row_dots_pairs(const pp_attn_launch *L, int dp)
{
    return L->dots2_T && L->order_seed == 0 && L->accum != PP_ATTN_ACC_STORAGE &&
           !pp_site_exact(L->exact_sites, dp ? PP_SITE_ATTN_DP : PP_SITE_ATTN_SCORES);
}

static inline void pp_attn_r_row_dots_pairs(const pp_attn_launch *L, int64_t t0, int64_t n, int dp)
{
    int64_t t = t0, BK = L->BK;
    float acc[2][PP_ATTN_MAX_LANES];
    while (t + BK < t0 + n) {
        int64_t b[2], hh[2], x[2];
        int r[2];
        pp_attn_geom G[2];
        int ok = pp_attn_row(L, t / BK, &b[0], &hh[0], &r[0], &x[0], &G[0]);
        ok = pp_attn_row(L, t / BK + 1, &b[1], &hh[1], &r[1], &x[1], &G[1]) && ok;
        ok = ok && b[0] == b[1] && hh[0] == hh[1] && r[0] == r[1];  // one block: G[0] is G[1]
        if (!ok) {
            pp_attn_r_row_dots(L, t, BK, dp);
            t += BK;
            continue;
        }
        int64_t y1[2] = {pp_attn_jend(&G[0], x[0]) + 1, pp_attn_jend(&G[1], x[1]) + 1};
        int64_t ye = y1[0] > y1[1] ? y1[0] : y1[1];
        const float *a0 = (dp ? L->go : L->q) + pp_attn_qoff(L, b[0], hh[0], pp_attn_qrow(L, &G[0], x[0]));
        const float *a1 = (dp ? L->go : L->q) + pp_attn_qoff(L, b[1], hh[1], pp_attn_qrow(L, &G[1], x[1]));
        float *out0 = (dp ? L->DS : L->SP) + t, *out1 = out0 + BK;
        for (int64_t y = 0, m; y < ye; y += m) {
            m = pp_attn_key_lanes(L, &G[0], y, ye - y);
            L->dots2_T(a0, a1, pp_attn_keyT(L, &G[0], dp ? L->vT : L->kT, b[0], hh[0], y),
                       pp_attn_keyT_ld(L, &G[0], y), L->d, acc[0], acc[1], m);
            int64_t m0 = y1[0] - y < m ? y1[0] - y : m, m1 = y1[1] - y < m ? y1[1] - y : m;
            if (m0 > 0)
                pp_attn_row_dots_end(L, dp, b[0], hh[0], acc[0], out0 + y, m0);
            if (m1 > 0)
                pp_attn_row_dots_end(L, dp, b[1], hh[1], acc[1], out1 + y, m1);
        }
        t += 2 * BK;
    }
    for (; t < t0 + n; t += BK)
        pp_attn_r_row_dots(L, t, BK, dp);
}
#endif

// NaN-sticky max of |x|: one step of PB-Relax's M.
PP_HD static inline float pp_attn_pb_step(float M, float s)
{
    return fabsf(s) > M || s != s ? fabsf(s) : M;
}

PP_HD static inline void pp_attn_t_unf_pb_row(const pp_attn_launch *L, int64_t t)
{
    int64_t b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t, &b, &hh, &r, &x, &G))
        return;
    const float *S = L->SP + t * L->BK;
    float M = 0.0f;
    for (int64_t j = 0; j <= pp_attn_jend(&G, x); j++)
        M = pp_attn_pb_step(M, S[j]);
    L->Mrow[t] = M;
}

PP_HD static inline void pp_attn_t_unf_pb_block(const pp_attn_launch *L, int64_t t)
{
    pp_attn_geom G;
    pp_attn_geom_of(L, (int)(t % L->R), &G);
    float M = 0.0f;
    for (int64_t x = 0; x < G.nq; x++)
        M = pp_attn_pb_step(M, L->Mrow[t * L->BQ + x]);
    L->Mblk[t] = M;
}

// The unfused softmax of row x after the scores: S[0..je] → P in place; lse into L->Lse when set.
PP_HD static inline void pp_attn_t_unf_softmax(const pp_attn_launch *L, int64_t t)
{
    int64_t b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t, &b, &hh, &r, &x, &G))
        return;
    int64_t je = pp_attn_jend(&G, x), s = pp_attn_qrow(L, &G, x);
    float *P = L->SP + t * L->BK;
    pp_ranges *R = L->recompute ? (pp_ranges *)0 : L->ranges;  // the forward noted them
    float *lse = L->Lse ? L->Lse + (b * L->h + hh) * L->sq + s : (float *)0;
    if (je < 0) {
        if (lse)
            *lse = -INFINITY;
        return;
    }
    int pb = L->max_subtract == PP_ATTN_MAX_PB_RELAX;
    float M = pb ? L->Mblk[t / L->BQ] : 0.0f;
    int64_t rh = pp_attn_range_head(L, b, hh);
    pp_format_id xf = L->softmax == PP_ATTN_SOFTMAX_FP32 ? PP_FMT_FP32 : L->f;  // x's format
    // (no PB-Relax, L = 1 and no range notes: x = S, nothing to do)
    for (int64_t j = 0; (pb || L->sc.L != 1.0f || R) && j <= je; j++) {
        pp_format_id fx = pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_SCALED_SCORES, L->f);
        float tt = pb ? pp_attn_pb_relax(fx, L->softmax, P[j], M, L->sc.A) : P[j];
        P[j] = pp_attn_layer_scale(fx, L->softmax, tt, L->sc.L);
        pp_range_note(R, PP_SITE_ATTN_SCALED_SCORES, rh, xf, (double)tt * L->sc.L, P[j]);
    }
    // the max: the NaN-sticky loop m = P[0], then P[j] > m || P[j] != P[j] ? P[j] : m (j
    // increasing), pp_attn_rowmax's, in the device's lanes where it has them
    float m = L->max_subtract != PP_ATTN_MAX_NONE ? pp_attn_rowmax(L, P + 1, je, P[0]) : 0.0f;
    int naive = L->softmax == PP_ATTN_SOFTMAX_NAIVE;
    pp_format_id nf = naive ? L->f : PP_FMT_FP32;  // the naive softmax rounds its steps to F
    pp_range_note1(R, PP_SITE_ATTN_ROW_MAX, rh, xf, m);
    float sum = 0.0f;
    // row_sum exact without naive: the sum's binary64 chain (pp_attn_softmax_prob_s64, _lse_sd)
    int xsum = !naive && pp_site_exact(L->exact_sites, PP_SITE_ATTN_ROW_SUM);
    double sum64 = 0.0;
    // e = pp_expf(x − m) (pp_attn_softmax_exp but for naive) of the whole row in the device's
    // vector lanes, first (the notes of its argument before: they read x), then the sums over the
    // e in j order: each e and each sum step as the one-key loop below computes them
    int lanes = !naive && !pp_site_exact(L->exact_sites, PP_SITE_ATTN_SOFTMAX_IN) && pp_attn_expf_has(L);
    for (int64_t j = 0; lanes && R && j <= je; j++)
        pp_range_note(R, PP_SITE_ATTN_SOFTMAX_IN, rh, nf, (double)P[j] - m, P[j] - m);
    lanes = lanes && pp_attn_expf_lanes(L, P, m, P, je + 1);
    pp_format_id fsum = pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_ROW_SUM, L->f);
    for (int64_t j = 0; j <= je; j++) {
        if (R && !lanes)  // the exponent's argument, as pp_attn_softmax_exp forms it
            pp_range_note(R, PP_SITE_ATTN_SOFTMAX_IN, rh, nf, (double)P[j] - m,
                          naive ? pp_attn_store(L->f, P[j] - m) : P[j] - m);
        if (!lanes)
            P[j] = pp_site_exact(L->exact_sites, PP_SITE_ATTN_SOFTMAX_IN)
                       ? pp_attn_softmax_exp64(L->f, L->softmax, P[j], m)
                       : pp_attn_softmax_exp(L->f, L->softmax, P[j], m);
        sum = pp_attn_softmax_sum_step(fsum, L->softmax, sum, P[j]);
        sum64 += P[j];
    }
    if (xsum)
        sum = (float)sum64;
    pp_range_note1(R, PP_SITE_ATTN_ROW_SUM, rh, nf, sum);
    // P = RN_F(e / sum) of the row in the device's lanes where it has them (no notes to take: they
    // read e before the store)
    int probs = 0;
#ifndef __CUDA_ARCH__
    if (L->prob && !xsum && !R) {
        L->prob(pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_P, L->f), P, sum, P, je + 1);
        probs = 1;
    }
#endif
    for (int64_t j = 0; !probs && j <= je; j++) {
        double e = (double)P[j] / sum;
        P[j] = xsum ? pp_attn_softmax_prob_s64(pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_P, L->f), P[j], sum64)
                    : pp_attn_softmax_prob(pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_P, L->f), P[j], sum);
        pp_range_note(R, PP_SITE_ATTN_P, rh, L->f, e, P[j]);
    }
    float shift = pb ? (M * L->sc.A) * L->sc.L : 0.0f;
    if (lse) {
        if (L->Lse64) {  // the lse's store exact: kept in binary64
            double lx = xsum ? pp_attn_lse_sd(m, sum64, shift) : pp_attn_lse_d(m, sum, shift);
            L->Lse64[lse - L->Lse] = lx;
            *lse = (float)lx;
        } else if (xsum) {
            *lse = pp_site_exact(L->exact_sites, PP_SITE_ATTN_LSE) ? (float)pp_attn_lse_sd(m, sum64, shift)
                                                                   : pp_attn_lse_s64(m, sum64, shift);
        } else {
            *lse = pp_site_exact(L->exact_sites, PP_SITE_ATTN_LSE) ? pp_attn_lse64(m, sum, shift)
                                                                   : pp_attn_lse(m, sum, shift);
        }
        pp_range_note1(R, PP_SITE_ATTN_LSE, rh, PP_FMT_FP32, *lse);
    }
}

// The unfused P·V's fp32 chains acc[l] (l < m) stored into out at o: RN_F of each, its binary64
// shadow (the binary32 opmath value is the value: exact), its range note.
PP_HD static inline void pp_attn_unf_pv_store(const pp_attn_launch *L, int64_t rh, const float *acc, float *o,
                                              int64_t m)
{
    for (int64_t l = 0; l < m; l++)
        o[l] = pp_attn_store(pp_attn_out_fmt(L), acc[l]);
    for (int64_t l = 0; L->O64 && l < m; l++)
        L->O64[o - L->O + l] = acc[l];
    for (int64_t l = 0; L->ranges && l < m; l++)
        pp_range_note(L->ranges, L->cp ? PP_SITE_ATTN_OUT_PARTIAL : PP_SITE_ATTN_OUT, rh, L->f, acc[l], o[l]);
}

// Threads [t0, t0 + n) of row rt's out (columns from t0's e on): out_xe = RN_F(acc) of P_x·V_e
// (a row that sees no key: +0, the empty chain's value).
PP_HD static inline void pp_attn_r_unf_pv(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    int64_t e0 = t0 % L->d, rt = t0 / L->d, b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, rt, &b, &hh, &r, &x, &G))
        return;
    int64_t je = pp_attn_jend(&G, x);
    float *o = L->O + pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x));
    const float *P = L->SP + rt * L->BK;
    float acc[PP_ATTN_MAX_LANES];
    double dacc[PP_ATTN_MAX_LANES];
    int64_t kh = pp_attn_koff(L, b, hh, 0);
    pp_attn_mma_walk w;
    int64_t j;
    // pv_acc exact (attention.h "Exact sites", chains): P·V's chain in binary64 (fp32 or storage
    // accumulation alike), RN_32 of it then the store; carried in binary64 to the out shadow
    int xpv = pp_site_exact(L->exact_sites, PP_SITE_ATTN_PV_ACC);
    for (int64_t e = e0, m; e < e0 + n; e += m) {
        m = pp_attn_lanes(L, e0 + n - e);
        if (xpv) {
            for (int64_t l = 0; l < m; l++)
                dacc[l] = 0.0;
            for (pp_attn_mma_begin(&w, L->order_seed, PP_ATTN_MMA_PV, 0, je + 1); pp_attn_mma_next(&w, &j);)
                pp_attn_axpy64(L, P[j], L->v + pp_attn_koff_at(L, kh, pp_attn_krow(L, &G, j)) + e, dacc, m);
            for (int64_t l = 0; l < m; l++)
                o[e + l] = pp_attn_store(pp_attn_out_fmt(L), (float)dacc[l]);
            for (int64_t l = 0; L->O64 && l < m; l++)
                L->O64[o - L->O + e + l] = dacc[l];
            for (int64_t l = 0; L->ranges && l < m; l++)
                pp_range_note(L->ranges, L->cp ? PP_SITE_ATTN_OUT_PARTIAL : PP_SITE_ATTN_OUT,
                              pp_attn_range_head(L, b, hh), L->f, dacc[l], o[e + l]);
            continue;
        }
        if (L->accum == PP_ATTN_ACC_STORAGE) {
            for (int64_t l = 0; l < m; l++)
                dacc[l] = 0.0;
            for (pp_attn_mma_begin(&w, L->order_seed, PP_ATTN_MMA_PV, 0, je + 1); pp_attn_mma_next(&w, &j);) {
                const float *vr = L->v + pp_attn_koff_at(L, kh, pp_attn_krow(L, &G, j)) + e;
                for (int64_t l = 0; l < m; l++)
                    dacc[l] = pp_gemm_step_storage(L->f, P[j], vr[l], dacc[l]);
            }
            for (int64_t l = 0; l < m; l++)
                o[e + l] = (float)dacc[l];
            for (int64_t l = 0; L->O64 && l < m; l++)  // a value of F already: binary64 adds nothing
                L->O64[o - L->O + e + l] = dacc[l];
            for (int64_t l = 0; L->ranges && l < m; l++)
                pp_range_note_chain(L->ranges, L->cp ? PP_SITE_ATTN_OUT_PARTIAL : PP_SITE_ATTN_OUT,
                                    pp_attn_range_head(L, b, hh), L->f, dacc[l], L->finite_in);
            continue;
        }
        for (int64_t l = 0; l < m; l++)
            acc[l] = 0.0f;
        // the lane steps collected (pp_attn_step_push: the device's axpy_n keeps acc in registers
        // across PP_ATTN_STEP_BUF keys), the same steps in the same order
        pp_attn_steps T;
        T.n = 0;
        for (pp_attn_mma_begin(&w, L->order_seed, PP_ATTN_MMA_PV, 0, je + 1); pp_attn_mma_next(&w, &j);)
            pp_attn_step_push(L, &T, P[j], L->v + pp_attn_koff_at(L, kh, pp_attn_krow(L, &G, j)) + e, acc, m);
        pp_attn_step_flush(L, &T, acc, m);
        pp_attn_unf_pv_store(L, pp_attn_range_head(L, b, hh), acc, o + e, m);
    }
}

// Range notes of one flash key (see pp_attn_t_flash_fwd): the raw score, the exponent's argument
// (the FFMA pp_attn_flash_p forms) and P as stored for P·V.
PP_HD static inline void pp_attn_flash_fwd_notes(const pp_attn_launch *L, int64_t rh, float s, float ms, float p,
                                                float pstored)
{
    pp_range_note1(L->ranges, PP_SITE_ATTN_SCORES, rh, PP_FMT_FP32, s);
    pp_range_note1(L->ranges, PP_SITE_ATTN_SOFTMAX_IN, rh, PP_FMT_FP32, fmaf(s, L->sc.sl2, -ms));
    // P as P·V reads it: RN_F(p), or e4m3 under fp8 = fa3 (attention_fp8.h); the block scalings
    // note P per block (pp_attn_fp8_block_pv)
    if (!L->fp8_block)
        pp_range_note(L->ranges, PP_SITE_ATTN_P, rh, L->fp8 ? PP_FMT_E4M3 : L->f, p, pstored);
}

// P·V of one block of keys [lo, hi) under an fp8 block scaling (attention.h "FP8 scaling
// schemes"): P's binary32 p (pch[j − lo]) quantised in place with the block's scale x_P
// (pp_attn_fp8_p_block; pexact: explain's site p, P kept, x_P = 1), then per column c the chain
// over the block's keys (MMA walk order, from +0) of P8·v8, added to o_c with the block scales'
// product: o_c = o_c ⊕ RN_32(chain·x_P·x_v(block, c)) (pp_gemm_block_add). od (explain's pv_acc
// exact; NULL: the kernel's o): the block's chain in binary64 (exact: products of e4m3 or e2m1
// elements), times x_P·x_v(block, c) (exact in binary64: scales of 4-bit significands or powers of
// two), added to the binary64 o_c: the block add's RN_32 and ⊕ are the accumulation's roundings.
PP_HD static inline void pp_attn_fp8_block_pv(const pp_attn_launch *L, const pp_attn_geom *G, int64_t b,
                                              int64_t hh, float *pch, int64_t lo, int64_t hi, int pexact, float *o,
                                              double *od)
{
    int64_t n = hi - lo, rh = pp_attn_range_head(L, b, hh);
    float praw[PP_GEMM_MMA_CHUNK > PP_MX_BLOCK ? PP_GEMM_MMA_CHUNK : PP_MX_BLOCK];
    for (int64_t j = 0; j < n; j++)
        praw[j] = pch[j];
    double amax = 0, xp = pexact ? 1.0
                                 : pp_attn_fp8_p_block((pp_scaling)L->fp8_sch, (pp_mx_rule)L->fp8_mx_rule, pch, n,
                                                       pp_site_exact(L->exact_sites, PP_SITE_ATTN_BLOCK_SCALE_P), &amax);
    if (L->ranges && !pexact) {
        pp_format_id ef = pp_attn_fp8_elem((pp_scaling)L->fp8_sch);
        double X = L->fp8_sch == PP_SCALING_NVFP4 ? xp * pp_attn_fp8_p_global() : xp;
        for (int64_t j = 0; j < n; j++)
            pp_range_note(L->ranges, PP_SITE_ATTN_P, rh, ef, X != 0 ? (double)praw[j] / X : 0.0, pch[j]);
        pp_attn_fp8_scale_note(L->ranges, PP_SITE_ATTN_BLOCK_SCALE_P, rh, (pp_scaling)L->fp8_sch,
                               (pp_mx_rule)L->fp8_mx_rule, amax,
                               L->fp8_sch == PP_SCALING_NVFP4 ? pp_attn_fp8_p_global() : 1.0, xp);
    }
    const float *vs0 = L->vs + pp_attn_koff(L, b, hh, pp_attn_krow(L, G, lo));
    for (int64_t c = 0; c < L->d; c++) {
        float part = 0.0f;
        double part64 = 0.0;
        pp_attn_mma_walk mw;
        int64_t j;
        for (pp_attn_mma_begin(&mw, L->order_seed, PP_ATTN_MMA_PV, lo, hi); pp_attn_mma_next(&mw, &j);) {
            float vj = L->v[pp_attn_koff(L, b, hh, pp_attn_krow(L, G, j)) + c];
            if (od)
                part64 = fma((double)pch[j - lo], (double)vj, part64);
            else
                part = pp_gemm_step_fp32(pch[j - lo], vj, part);
        }
        if (od)
            od[c] += part64 * (xp * (double)vs0[c]);
        else
            o[c] = pp_gemm_block_add(o[c], part, xp * (double)vs0[c]);
    }
}

// Flash forward of row x through the key tiles, the last tile first (FA2 flash_fwd_kernel.h: n_block
// from n_block_max − 1 down to n_block_min); o lives in the output row itself. Raw scores (the
// scale is folded into the exponent); the row sum as FA2's 4 per-thread partials, key y into
// partial (y mod 8)/2 (the m16n8 accumulator layout), in key order. A tile's scores are computed
// in key lanes for its max, then again for p (the same values), unless one run of lanes held it.
// P·V runs per MMA k-chunk of 16 keys: the chunk's p first (row sums in key order), then o's
// chain over the chunk's keys in the chunk's order (increasing at seed 0: "Order band").
// The flash forward's S for w keys from key-major kT: the fp32 chain (pp_attn_dots_T; per block
// under the fp8 block scalings, pp_attn_fp8_dots), or under mma Hopper's FP8 accumulation
// (attention_fp8.h, pp_attn_fp8_sm90_dots).
// qs, ksT: the block scales of q and of the keys (fp8 block scalings, pp_attn_fp8_dots; mma is
// refused with those when the case is read). Block key j of rank r's block G (kT, ksT: the unit's).
PP_HD static inline void pp_attn_flash_dots(const pp_attn_launch *L, const pp_attn_geom *G, int64_t b, int64_t hh,
                                            int64_t j, const float *qr, const float *qs, int64_t w, float *sv)
{
    const float *kT = pp_attn_keyT(L, G, L->kT, b, hh, j);
    int64_t ld = pp_attn_keyT_ld(L, G, j);
    if (L->mma)
        pp_attn_fp8_sm90_dots(qr, kT, ld, L->d, w, sv);
    else
        pp_attn_fp8_dots(L, qr, qs, kT, L->fp8_block ? pp_attn_keyT(L, G, L->ksT, b, hh, j) : NULL, ld, w, sv);
}

// The flash forward's S for w keys kept in binary64 (explain's scores exact, attention.h "Exact
// sites", chains): the binary64 chain of q·k over d from +0, c increasing (pp_attn_dots_T64: FA2's
// q'·k'; FA3 fp8's e4m3 or e2m1 elements, whose products are exact in binary64), whatever the
// kernel accumulates in (fp32 chain or mma sm90); under an fp8 block scaling each block's binary64
// chain times x_q,b·x_k,b (exact: powers of two, or E4M3 scales), summed over the blocks in one
// binary64 chain. The per-tensor factors stay in σ', where the kernel folds them.
PP_HD static inline void pp_attn_flash_dots64(const pp_attn_launch *L, const pp_attn_geom *G, int64_t b, int64_t hh,
                                              int64_t j, const float *qr, const float *qs, int64_t w, double *sd)
{
    const float *kT = pp_attn_keyT(L, G, L->kT, b, hh, j);
    int64_t ld = pp_attn_keyT_ld(L, G, j);
    if (!L->fp8_block) {
        pp_attn_dots_T64(L, qr, kT, ld, w, L->d, sd);
        return;
    }
    const float *ksT = pp_attn_keyT(L, G, L->ksT, b, hh, j);
    double part[PP_ATTN_MAX_LANES];
    for (int64_t l = 0; l < w; l++)
        sd[l] = 0.0;
    for (int64_t c0 = 0; c0 < L->d; c0 += L->fp8_block) {
        int64_t c1 = c0 + L->fp8_block < L->d ? c0 + L->fp8_block : L->d;
        pp_attn_dots_T64(L, qr + c0, kT + c0 * ld, ld, w, c1 - c0, part);
        for (int64_t l = 0; l < w; l++)
            sd[l] += part[l] * ((double)qs[c0] * (double)ksT[c0 * ld + l]);
    }
}

// The flash epilogue (FA2's or FA3's, pp_attn_fp8_flash_finish) of row o, lse, with explain's
// FA2 lse site (attention.h "Exact sites": m·α_32 + log l in binary64) and the binary64 shadows
// of the out and lse stores (o·inv, or fp8's o·s, kept before finish rounds o).
// FA2's epilogue with explain's row_sum or row_inv exact (attention.h "Exact sites"): l the
// binary64 sum of the partials l4d (row_sum) or the kernel's binary32 l; inv = 1/l in binary64
// (row_inv) or RN_32 of it (the kernel's 1 ⊘ l: RN_32 of the binary64 quotient is the same, a
// division's double rounding being innocuous at 53 ≥ 2·24 + 2 bits); out_c = RN_F(RN_32(o_c·inv)),
// its binary64 shadow o_c·inv (o64: the out site exact); lse from the same l, m·α_32 + log l in
// binary64 when its site is exact (kept in lse64), else the kernel's fmaf on RN_32(l).
// od: the binary64 P·V accumulator (site pv_acc exact; NULL: the kernel's o), then out_c's value is
// RN_64(od_c·inv), a binary64 product rounded once.
PP_HD static inline void pp_attn_flash_finish_sum_x(const pp_attn_launch *L, int seen, float m, const float *l4,
                                                   const double *l4d, const double *od, float *o, float *lse,
                                                   int64_t grow)
{
    int64_t d = L->d;
    double *o64 = L->O64 ? L->O64 + (o - L->O) : NULL, *lse64 = L->Lse64 ? L->Lse64 + (lse - L->Lse) : NULL;
    double l = pp_attn_finish_l_x(L->exact_sites, L->order_seed, grow, l4, l4d);
    if (!seen || l == 0.0) {
        pp_attn_finish_empty_x(o, o64, d, lse, lse64);
        return;
    }
    double inv = pp_site_exact(L->exact_sites, PP_SITE_ATTN_ROW_INV) ? 1.0 / l : (double)(float)(1.0 / l);
    for (int64_t c = 0; c < d; c++) {
        double x = (od ? od[c] : (double)o[c]) * inv;
        if (o64)
            o64[c] = x;
        o[c] = o64 ? (float)x : pp_attn_store(pp_attn_out_fmt(L), (float)x);
    }
    pp_attn_finish_lse_x(L->exact_sites, m, (double)L->sc.alpha32, L->sc.alpha32, l, 1.0, L->order_seed, grow, lse,
                         lse64);
}

PP_HD static inline void pp_attn_flash_finish_x(const pp_attn_launch *L, int seen, float m, const float *l4, float *o,
                                               float *lse, int64_t grow)
{
    int64_t d = L->d;
    if (L->O64)
        pp_attn_fp8_flash_out64(L->fp8, L->fp8_xv, seen, pp_attn_order_row_sum(L->order_seed, grow, l4), o, d,
                                L->O64 + (o - L->O));
    pp_attn_fp8_flash_finish(L->fp8, L->fp8_xv, pp_attn_out_fmt(L), &L->sc, seen, m, l4, o, d, lse, L->order_seed,
                             grow);
    if (pp_site_exact(L->exact_sites, PP_SITE_ATTN_LSE) && *lse != -INFINITY) {  // the same l as finish's
        double lx = pp_attn_flash_lse_d(&L->sc, m, pp_attn_order_row_sum(L->order_seed, grow, l4));
        *lse = (float)lx;
        if (L->Lse64)
            L->Lse64[lse - L->Lse] = lx;
    } else if (L->Lse64) {
        L->Lse64[lse - L->Lse] = *lse;
    }
    for (int64_t c = 0; L->O64 && c < d; c++)
        o[c] = (float)L->O64[o - L->O + c];
}

// The range notes at a flash forward row's end (a row that sees a key): its max, its sum l (as
// finish reads it), its lse and its d outputs (partial under CP).
PP_HD static inline void pp_attn_flash_row_notes(const pp_attn_launch *L, int64_t rh, float m, float lsum,
                                                 float lse, const float *o)
{
    pp_range_note1(L->ranges, PP_SITE_ATTN_ROW_MAX, rh, PP_FMT_FP32, m);
    pp_range_note1(L->ranges, PP_SITE_ATTN_ROW_SUM, rh, PP_FMT_FP32, lsum);
    pp_range_note1(L->ranges, PP_SITE_ATTN_LSE, rh, PP_FMT_FP32, lse);
    for (int64_t c = 0; c < L->d; c++)
        pp_range_note1(L->ranges, L->cp ? PP_SITE_ATTN_OUT_PARTIAL : PP_SITE_ATTN_OUT, rh, L->f, o[c]);
}

PP_HD static inline void pp_attn_t_flash_fwd(const pp_attn_launch *L, int64_t t)
{
    int64_t b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t, &b, &hh, &r, &x, &G))
        return;
    int64_t d = L->d, je = pp_attn_jend(&G, x), s = pp_attn_qrow(L, &G, x);
    const float *qr = L->q + pp_attn_qoff(L, b, hh, s);
    float *o = L->O + pp_attn_qoff(L, b, hh, s);
    float *lse = L->Lse + (b * L->h + hh) * L->sq + s;
    int64_t grow = pp_attn_order_row(L, b, hh, s), kh = pp_attn_koff(L, b, hh, 0);
    int none = L->max_subtract == PP_ATTN_MAX_NONE;
    float m = none ? 0.0f : -INFINITY, l4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float sv[PP_ATTN_MAX_LANES], pe[PP_ATTN_MAX_LANES];
    float pch[PP_GEMM_MMA_CHUNK > PP_MX_BLOCK ? PP_GEMM_MMA_CHUNK : PP_MX_BLOCK];
    const float *qsr = L->fp8_block ? L->qs + pp_attn_qoff(L, b, hh, s) : qr;  // q's block scales
    // P·V's step: one MMA k-chunk, or one block of keys (fp8 block scalings: P and v in blocks)
    int64_t pstep = L->fp8_block > PP_GEMM_MMA_CHUNK ? L->fp8_block : PP_GEMM_MMA_CHUNK;
    int pexact = pp_site_exact(L->exact_sites, PP_SITE_ATTN_P);
    float pgrp[PP_SM90_FP8_GROUP];           // mma: the P of the current group of 32 keys
    const float *vgrp[PP_SM90_FP8_GROUP];    // and their rows of V
    int xin = pp_site_exact(L->exact_sites, PP_SITE_ATTN_SOFTMAX_IN);
    int xmax = pp_site_exact(L->exact_sites, PP_SITE_ATTN_ROW_MAX);
    // fp8 with a softmax scalar exact (attention_fp8.h, PP_ATTN_FP8_SOFTMAX_SITES): its own steps,
    // the row sums' binary64 shadows in l4d
    int x8 = L->fp8 && (L->exact_sites & PP_ATTN_FP8_SOFTMAX_SITES) != 0;
    // FA2 with row_sum or row_inv exact: the same binary64 shadows, its own epilogue
    // (pv_acc exact: o's binary64 chain in od, the launch's Oacc64, read by that epilogue)
    int x2 = !L->fp8 && (L->exact_sites & (PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM) | PP_SITE_BIT(PP_SITE_ATTN_ROW_INV) |
                                           PP_SITE_BIT(PP_SITE_ATTN_PV_ACC))) != 0;
    // scores exact (attention.h "Exact sites", chains; FA2's and FA3 fp8's under either mma): S's
    // binary64 chain in sd, read by the exponent's argument; the max and the range notes read
    // RN_32 of it (sv)
    int xs = pp_site_exact(L->exact_sites, PP_SITE_ATTN_SCORES);
    double *od = L->Oacc64 ? L->Oacc64 + (o - L->O) : NULL;
    double sd[PP_ATTN_MAX_LANES];
    double l4d[4] = {0.0, 0.0, 0.0, 0.0};
    for (int64_t c = 0; c < d; c++)
        o[c] = 0.0f;
    for (int64_t c = 0; od && c < d; c++)
        od[c] = 0.0;
    // tiles past row x's last visible key are exact no-ops (every score masked), so the row
    // starts at the tile holding je whatever the block's first tile is: block_m changes nothing
    for (int64_t j0 = je < 0 ? -1 : je - je % L->bn; j0 >= 0; j0 -= L->bn) {
        int64_t j1 = j0 + L->bn <= je + 1 ? j0 + L->bn : je + 1, w;
        float mn = m;
        for (int64_t j = j0; j < j1; j += w) {
            w = pp_attn_key_lanes(L, &G, j, j1 - j);
            if (xs) {
                pp_attn_flash_dots64(L, &G, b, hh, j, qr, qsr, w, sd);
                for (int64_t i = 0; i < w; i++)
                    sv[i] = (float)sd[i];
            } else {
                pp_attn_flash_dots(L, &G, b, hh, j, qr, qsr, w, sv);
            }
            if (!none)
                mn = pp_attn_rowmax(L, sv, w, mn);
        }
        int kept = pp_attn_key_lanes(L, &G, j0, j1 - j0) == j1 - j0;  // sv holds the tile
        float corr = none ? 1.0f
                   : x8   ? pp_attn_fp8_corr_x(L->exact_sites, L->fp8_sig, m, mn)
                   : xin  ? pp_attn_flash_corr64(&L->sc, m, mn)
                          : pp_attn_flash_corr(&L->sc, m, mn);
        float ms = pp_attn_fp8_max_scaled(L->fp8, &L->sc, mn);
        double msd = x8 ? pp_attn_fp8_ms_x(L->exact_sites, L->fp8_sig, mn)  // attention.h "Exact sites"
                   : xmax ? pp_attn_flash_max_scaled64(&L->sc, mn) : (double)ms;
        pp_attn_flash_rescale(o, d, l4, corr);
        for (int q = 0; (x8 || x2) && q < 4; q++)
            l4d[q] *= corr;
        for (int64_t c = 0; od && c < d; c++)
            od[c] *= corr;
        for (int64_t cb = j0 - j0 % pstep; cb < j1; cb += pstep) {
            int64_t lo = cb > j0 ? cb : j0, hi = cb + pstep < j1 ? cb + pstep : j1;
            for (int64_t j = lo; j < hi; j += w) {
                w = pp_attn_key_lanes(L, &G, j, hi - j);
                const float *sj = sv + (j - j0);
                const double *sdj = sd + (j - j0);
                if (!kept && xs) {
                    pp_attn_flash_dots64(L, &G, b, hh, j, qr, qsr, w, sd);
                    for (int64_t i = 0; i < w; i++)
                        sv[i] = (float)sd[i];
                    sj = sv, sdj = sd;
                } else if (!kept) {
                    pp_attn_flash_dots(L, &G, b, hh, j, qr, qsr, w, sv);
                    sj = sv;
                }
                // pp_attn_flash_p's exponentials, in vector lanes where the device has them
                int vexp = !(x8 || xin || xmax || xs) && pp_attn_exp2_lanes(L, sj, L->sc.sl2, -ms, pe, w);
                for (int64_t i = 0; i < w; i++) {
                    float p = pp_attn_order_exp(L->order_seed, PP_ATTN_ORDER_FWD_P, grow, j + i,
                                                xs && L->fp8 ? pp_attn_fp8_p_s64(L->exact_sites, L->fp8_sig, sdj[i], msd)
                                                : xs ? pp_attn_flash_p_s64(&L->sc, sdj[i], msd, xin)
                                                : x8 ? pp_attn_fp8_p_x(L->exact_sites, L->fp8_sig, sj[i], msd)
                                                : xin || xmax ? pp_attn_flash_p64(&L->sc, sj[i], msd, xin)
                                                : vexp        ? pe[i]
                                                              : pp_attn_flash_p(&L->sc, sj[i], ms));
                    int64_t q = ((j + i) & 7) >> 1;
                    l4[q] = l4[q] + p;
                    l4d[q] += p;
                    // P as P·V reads it (fp8: e4m3; block scalings: the block's, below)
                    pch[j + i - cb] = L->fp8_block ? p
                                    : pp_attn_fp8_p(L->fp8, pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_P, L->f), p);
                    if (L->ranges)
                        pp_attn_flash_fwd_notes(L, pp_attn_range_head(L, b, hh), sj[i], ms, p, pch[j + i - cb]);
                }
            }
            if (L->fp8_block) {
                pp_attn_fp8_block_pv(L, &G, b, hh, pch, lo, hi, pexact, o, od);
                continue;
            }
            // Hopper's FP8 accumulation: groups of 32 keys from the tile's first (bn % 32 = 0);
            // pv_acc exact: the binary64 chain below instead, no groups
            if (L->mma && !od) {
                for (int64_t jj = lo; jj < hi; jj++) {
                    pgrp[(jj - j0) % PP_SM90_FP8_GROUP] = pch[jj - cb];
                    vgrp[(jj - j0) % PP_SM90_FP8_GROUP] = L->v + pp_attn_koff_at(L, kh, pp_attn_krow(L, &G, jj));
                }
                int64_t g0 = j0 + (hi - 1 - j0) / PP_SM90_FP8_GROUP * PP_SM90_FP8_GROUP;
                if ((hi - j0) % PP_SM90_FP8_GROUP == 0 || hi == j1)
                    pp_attn_fp8_sm90_pv(pgrp, vgrp, hi - g0, o, d);
                continue;
            }
            pp_attn_mma_walk mw;
            pp_attn_steps T;
            T.n = 0;
            int64_t j;
            for (pp_attn_mma_begin(&mw, L->order_seed, PP_ATTN_MMA_PV, lo, hi); pp_attn_mma_next(&mw, &j);) {
                const float *vr = L->v + pp_attn_koff_at(L, kh, pp_attn_krow(L, &G, j));
                if (!od) {
                    pp_attn_step_push(L, &T, pch[j - cb], vr, o, d);
                    continue;
                }
                pp_attn_axpy64(L, pch[j - cb], vr, od, d);  // pv_acc exact: o's chain in binary64
            }
            pp_attn_step_flush(L, &T, o, d);
        }
        m = mn;
    }
    float lsum = L->ranges ? pp_attn_order_row_sum(L->order_seed, grow, l4) : 0.0f;  // finish's l
    // fp8's epilogue with its exact sites (out's and lse's binary64 shadows, pv_acc's binary64 o)
    if (x8 || (L->fp8 && od))
        pp_attn_fp8_finish_x(L->exact_sites, pp_attn_out_fmt(L), L->fp8_sig, L->fp8_xv, je >= 0, m, l4, l4d, od, o, d,
                             lse, L->O64 ? L->O64 + (o - L->O) : NULL, L->Lse64 ? L->Lse64 + (lse - L->Lse) : NULL,
                             L->order_seed, grow);
    else if (x2)
        pp_attn_flash_finish_sum_x(L, je >= 0, m, l4, l4d, od, o, lse, grow);
    else
        pp_attn_flash_finish_x(L, je >= 0, m, l4, o, lse, grow);
    if (L->ranges && je >= 0)
        pp_attn_flash_row_notes(L, pp_attn_range_head(L, b, hh), m, lsum, *lse, o);
}

#ifndef __CUDA_ARCH__
// The host device's groups of flash forward rows (ger, dots2_T): up to PP_ATTN_FWD_ROWS
// consecutive live rows of one block go through the key tiles together, from the group's last
// tile down. Each row takes a tile only from its own first tile on (a tile past a row's last
// visible key is an exact no-op, as in pp_attn_t_flash_fwd), and within it computes what it
// computes alone: its scores (two rows per pass over the tile's key-major keys, dots2_T: each
// row's chains the ones pp_attn_flash_dots runs), its max, correction, max offset, rescale,
// exponentials (element by element: one call for the tile is the chunks' calls), row sums in key
// order and P's store, in the same order. Then P·V of the tile for every row at once as rank-1
// updates (ger: each key's v row loaded once for the group), each row's o chain over the tile's
// keys in increasing order: the single row's MMA chunks of 16 keys one after the other at seed 0.
// The same operations in the same order on each row: the same bits (tests/test_attention_cpu.c,
// test_attention_run_levels.c: the baseline copy has no ger and runs every row alone). The plain
// FA2 forward only (seed 0, no exact site, no fp8, a row max, d and block_n at most the lanes);
// every other launch, rows of other blocks and rows that see no key run alone. 8 rows: each key
// tile's v rows and key-major keys are read for 8 rows (from L2: a head's v is 2 MiB at s 4096).
#define PP_ATTN_FWD_ROWS 8
static inline int pp_attn_fwd_rows(const pp_attn_launch *L)
{
    return L->dots2_T && L->ger && L->order_seed == 0 && L->exact_sites == 0 && !L->fp8 && !L->fp8_block &&
           !L->mma && L->max_subtract != PP_ATTN_MAX_NONE && !L->O64 && !L->Oacc64 && !L->Lse64 &&
           L->bn <= PP_ATTN_MAX_LANES && L->d <= PP_ATTN_MAX_LANES;
}

// A group's rows g < nr (row tasks rt[g] of one block, nr ≥ 1): their batch, head and block
// geometry (one for all), block rows x[g] and last visible keys je[g].
static inline void pp_attn_group_rows(const pp_attn_launch *L, const int64_t *rt, int nr, int64_t *b, int64_t *hh,
                                      pp_attn_geom *G, int64_t *x, int64_t *je)
{
    int r = 0, g = 0;
    do {
        pp_attn_row(L, rt[g], b, hh, &r, &x[g], G);
        je[g] = pp_attn_jend(G, x[g]);
    } while (++g < nr);
}

// Rows g < nr of one block, given by their threads tg[g] (block rows x increasing, so their last
// visible keys je[g] do not decrease); P·V's rank-1 updates want the rows active at a key to be a
// prefix, so row g sits at ger position nr − 1 − g.
static inline void pp_attn_flash_fwd_group(const pp_attn_launch *L, const int64_t *tg, int nr)
{
    int64_t b = 0, hh = 0, x[PP_ATTN_FWD_ROWS], je[PP_ATTN_FWD_ROWS] = {0}, grow[PP_ATTN_FWD_ROWS];
    pp_attn_geom G;
    pp_attn_group_rows(L, tg, nr, &b, &hh, &G, x, je);
    int64_t d = L->d, bn = L->bn, kh = pp_attn_koff(L, b, hh, 0), rh = pp_attn_range_head(L, b, hh);
    const float *qr[PP_ATTN_FWD_ROWS];
    float *o[PP_ATTN_FWD_ROWS], *lse[PP_ATTN_FWD_ROWS];
    float m[PP_ATTN_FWD_ROWS], l4[PP_ATTN_FWD_ROWS][4];
    float oacc[PP_ATTN_FWD_ROWS * PP_ATTN_MAX_LANES];   // o of row g at ger position nr − 1 − g
    float sv[PP_ATTN_FWD_ROWS][PP_ATTN_MAX_LANES], pe[PP_ATTN_MAX_LANES];
    float pT[PP_ATTN_MAX_LANES * PP_ATTN_FWD_ROWS];     // P of key t for ger position k at [t·nr + k]
    const float *pa[PP_ATTN_MAX_LANES], *vx[PP_ATTN_MAX_LANES];
    int na[PP_ATTN_MAX_LANES];
    pp_format_id fp = pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_P, L->f);
    for (int g = 0; g < nr; g++) {
        int64_t s = pp_attn_qrow(L, &G, x[g]);
        qr[g] = L->q + pp_attn_qoff(L, b, hh, s);
        o[g] = L->O + pp_attn_qoff(L, b, hh, s);
        lse[g] = L->Lse + (b * L->h + hh) * L->sq + s;
        grow[g] = pp_attn_order_row(L, b, hh, s);
        m[g] = -INFINITY;
        l4[g][0] = l4[g][1] = l4[g][2] = l4[g][3] = 0.0f;
        for (int64_t c = 0; c < d; c++)
            oacc[(nr - 1 - g) * PP_ATTN_MAX_LANES + c] = 0.0f;
    }
    int64_t jl = je[nr - 1];  // the group's last visible key
    for (int64_t j0 = jl - jl % bn; j0 >= 0; j0 -= bn) {
        int64_t w[PP_ATTN_FWD_ROWS];  // row g's keys in this tile (0: not yet begun)
        for (int g = 0; g < nr; g++)
            w[g] = je[g] < j0 ? 0 : (j0 + bn <= je[g] + 1 ? bn : je[g] + 1 - j0);
        // scores: rows g..g + 3 (g a multiple of 4) four a pass over the key runs of the last one's
        // keys (w[g] ≤ w[g + 1]: all four take keys here when row g does) where the device has
        // dots4_T, the other rows two a pass, or one
        int quads = 0;  // rows 0 .. 4·quads − 1 done four a pass
        while (L->dots4_T && 4 * quads + 4 <= nr && w[4 * quads] > 0) {
            int g = 4 * quads++;
            for (int64_t j = j0, wl; j < j0 + w[g + 3]; j += wl) {
                wl = pp_attn_key_lanes(L, &G, j, j0 + w[g + 3] - j);
                float *acc[4] = {sv[g] + (j - j0), sv[g + 1] + (j - j0), sv[g + 2] + (j - j0), sv[g + 3] + (j - j0)};
                L->dots4_T(qr + g, pp_attn_keyT(L, &G, L->kT, b, hh, j), pp_attn_keyT_ld(L, &G, j), d, acc, wl);
            }
        }
        for (int g = 4 * quads; g < nr; g += 2) {
            int64_t wa = w[g], wb = g + 1 < nr ? w[g + 1] : 0, wt = wb > wa ? wb : wa;
            int one = wa > 0 ? g : g + 1;  // the row alone when the other takes no key here
            if (wt == 0)
                continue;
            for (int64_t j = j0, wl; j < j0 + wt; j += wl) {
                wl = pp_attn_key_lanes(L, &G, j, j0 + wt - j);
                const float *kT = pp_attn_keyT(L, &G, L->kT, b, hh, j);
                int64_t ld = pp_attn_keyT_ld(L, &G, j);
                if (wa > 0 && wb > 0)
                    L->dots2_T(qr[g], qr[g + 1], kT, ld, d, sv[g] + (j - j0), sv[g + 1] + (j - j0), wl);
                else
                    pp_attn_dots_T(L, PP_ATTN_MMA_S, qr[one], kT, ld, wl, sv[one] + (j - j0));
            }
        }
        int64_t nk = 0;  // the tile's keys any row takes
        for (int g = 0; g < nr; g++) {
            if (w[g] == 0)
                continue;
            nk = w[g] > nk ? w[g] : nk;
            float mn = pp_attn_rowmax(L, sv[g], w[g], m[g]);
            float corr = pp_attn_flash_corr(&L->sc, m[g], mn), ms = pp_attn_flash_max_scaled(&L->sc, mn);
            int k = nr - 1 - g;
            pp_attn_flash_rescale(oacc + k * PP_ATTN_MAX_LANES, d, l4[g], corr);
            int vexp = pp_attn_exp2_lanes(L, sv[g], L->sc.sl2, -ms, pe, w[g]);
            for (int64_t i = 0; i < w[g]; i++) {
                float p = vexp ? pe[i] : pp_attn_flash_p(&L->sc, sv[g][i], ms);
                int64_t q = ((j0 + i) & 7) >> 1;
                l4[g][q] = l4[g][q] + p;
                pT[i * nr + k] = pp_attn_fp8_p(0, fp, p);
                if (L->ranges)
                    pp_attn_flash_fwd_notes(L, rh, sv[g][i], ms, p, pT[i * nr + k]);
            }
            m[g] = mn;
        }
        for (int64_t i = 0; i < nk; i++) {
            int a = 0;  // rows whose keys reach j0 + i: the last ones, ger's first positions
            for (int g = 0; g < nr; g++)
                a += w[g] > i;
            na[i] = a;
            pa[i] = pT + i * nr;
            vx[i] = L->v + pp_attn_koff_at(L, kh, pp_attn_krow(L, &G, j0 + i));
        }
        L->ger((int)nk, pa, vx, na, nr, oacc, d);
    }
    for (int g = 0; g < nr; g++) {
        const float *og = oacc + (nr - 1 - g) * PP_ATTN_MAX_LANES;
        for (int64_t c = 0; c < d; c++)
            o[g][c] = og[c];
        float lsum = L->ranges ? pp_attn_order_row_sum(L->order_seed, grow[g], l4[g]) : 0.0f;  // finish's l
        pp_attn_flash_finish_x(L, 1, m[g], l4[g], o[g], lse[g], grow[g]);
        if (L->ranges)
            pp_attn_flash_row_notes(L, rh, m[g], lsum, *lse[g], o[g]);
    }
}

// The host's row groups: rows [row0, row1) whose live(L, row, &b, &hh, &r) holds, consecutive and of
// one (batch, head, block), at most max (≤ PP_ATTN_GROUP_MAX) to a group, go to group(L, rows, n),
// a group of one and every other row to alone(L, row), in row order. Each row's result is its own
// (the groups run each row's operations in its order), so how the rows are grouped moves no bit.
#define PP_ATTN_GROUP_MAX 8
typedef int (*pp_attn_row_live_fn)(const pp_attn_launch *L, int64_t row, int64_t *b, int64_t *hh, int *r);
typedef void (*pp_attn_row_alone_fn)(const pp_attn_launch *L, int64_t row);
typedef void (*pp_attn_row_group_fn)(const pp_attn_launch *L, const int64_t *rows, int n);
static inline void pp_attn_row_groups(const pp_attn_launch *L, int64_t row0, int64_t row1, int max,
                                      pp_attn_row_live_fn live, pp_attn_row_alone_fn alone,
                                      pp_attn_row_group_fn group)
{
    int64_t rows[PP_ATTN_GROUP_MAX], gb = -1, gh = -1;
    int nr = 0, gr = -1;
    for (int64_t row = row0; row <= row1; row++) {
        int64_t b = -1, hh = -1;
        int r = -1;
        int ok = row < row1 && live(L, row, &b, &hh, &r);
        if (nr > 0 && (!ok || b != gb || hh != gh || r != gr || nr == max)) {
            if (nr == 1)
                alone(L, rows[0]);
            else
                group(L, rows, nr);
            nr = 0;
        }
        if (row == row1)
            break;
        if (!ok) {
            alone(L, row);
            continue;
        }
        gb = b, gh = hh, gr = r;
        rows[nr++] = row;
    }
}

// A flash forward row that sees a key (its thread is its row).
static inline int pp_attn_fwd_live(const pp_attn_launch *L, int64_t t, int64_t *b, int64_t *hh, int *r)
{
    int64_t x = 0;
    pp_attn_geom G;
    return pp_attn_row(L, t, b, hh, r, &x, &G) && pp_attn_jend(&G, x) >= 0;
}

// Threads [t0, t0 + n) of the flash forward: groups of up to PP_ATTN_FWD_ROWS consecutive rows of
// one block that see a key (pp_attn_flash_fwd_group), every other row alone.
static inline void pp_attn_r_flash_fwd_rows(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    pp_attn_row_groups(L, t0, t0 + n, PP_ATTN_FWD_ROWS, pp_attn_fwd_live, pp_attn_t_flash_fwd,
                       pp_attn_flash_fwd_group);
}
#if PP_ATTN_FWD_ROWS > PP_ATTN_GROUP_MAX
#error "a forward group must fit pp_attn_row_groups"
#endif
#endif

// A row the backward skips (no visible key, or lse −Inf): P = dS = 0.
PP_HD static inline int pp_attn_bwd_row_dead(const pp_attn_launch *L, const pp_attn_geom *G, int64_t b, int64_t hh,
                                             int64_t x)
{
    int64_t s = pp_attn_qrow(L, G, x);
    return pp_attn_jend(G, x) < 0 || L->lse_f[(b * L->h + hh) * L->sq + s] == -INFINITY;
}

// Flash backward of row x: P and dS (values of F) of the visible keys, 0 past them. Spre, dPpre
// (NULL: computed here): the row's S and dP chains at seed 0, key j at [j], computed by the caller
// (pp_attn_r_flash_bwd_pairs) with the same chains.
PP_HD static inline void pp_attn_flash_bwd_row_(const pp_attn_launch *L, int64_t t, const float *Spre,
                                                const float *dPpre)
{
    int64_t b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t, &b, &hh, &r, &x, &G))
        return;
    float *P = L->SP + t * L->BK, *dS = L->DS + t * L->BK;
    int64_t je = pp_attn_bwd_row_dead(L, &G, b, hh, x) ? -1 : pp_attn_jend(&G, x);
    if (je >= 0) {
        int64_t d = L->d, s = pp_attn_qrow(L, &G, x), qo = pp_attn_qoff(L, b, hh, s);
        const float *qr = L->q + qo, *go = L->go + qo, *out = L->out_f + qo;
        float lse = L->lse_f[(b * L->h + hh) * L->sq + s];
        int64_t grow = pp_attn_order_row(L, b, hh, s);
        // the chains of D, S and dP with their sites exact (attention.h "Exact sites", chains): binary64,
        // read as binary64 by P's argument and dS (pp_attn_bwd_p_s64, pp_attn_bwd_ds64)
        int xd = pp_site_exact(L->exact_sites, PP_SITE_ATTN_D), xs = pp_site_exact(L->exact_sites, PP_SITE_ATTN_SCORES);
        int xdp = pp_site_exact(L->exact_sites, PP_SITE_ATTN_DP);
        double D64 = xd ? pp_attn_dot64(go, out, L->out_f64 ? L->out_f64 + qo : NULL, d) : 0.0;
        float D = xd ? (float)D64
                : L->out_f64 ? pp_attn_dot32_x64(go, L->out_f64 + qo, d) : pp_attn_dot32(go, out, d);
        if (!xd)
            D64 = D;
        double lse64 = L->lse_f64 ? L->lse_f64[(b * L->h + hh) * L->sq + s] : (double)lse;
        pp_range_note1(L->ranges, PP_SITE_ATTN_D, pp_attn_range_head(L, b, hh), PP_FMT_FP32, D);
        float sv[PP_ATTN_MAX_LANES], dpv[PP_ATTN_MAX_LANES], pe[PP_ATTN_MAX_LANES];
        double sd[PP_ATTN_MAX_LANES], dpd[PP_ATTN_MAX_LANES];
        int xin = pp_site_exact(L->exact_sites, PP_SITE_ATTN_SOFTMAX_IN), done = 0;
#ifndef __CUDA_ARCH__
        // The host's groups of rows (S, dP given) with nothing exact, at seed 0, where the device has
        // the exponentials' lanes: the loop below without its exact-site branches and copies, in
        // runs of the lanes: p = 2^(s·sl2 − RN_32(lse·log2e_32)) (pp_attn_bwd_p, pp_attn_exp2_lanes),
        // P and dS = p·(dP − D) stored as the loop below stores them; the same bits.
        if (Spre && dPpre && !xd && !xs && !xdp && !xin && !L->lse_f64 && L->order_seed == 0 && L->exp2_fma) {
            pp_format_id fP = pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_P, L->f);
            pp_format_id fS = pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_DS, L->f);
            int64_t rh = pp_attn_range_head(L, b, hh);
            for (int64_t j = 0, w; j <= je; j += w) {
                w = je + 1 - j < PP_ATTN_MAX_LANES ? je + 1 - j : PP_ATTN_MAX_LANES;
                L->exp2_fma(Spre + j, L->sc.sl2, -(lse * 1.44269502f), pe, w);
                if (!L->ranges && fP == PP_FMT_BF16 && fS == PP_FMT_BF16) {
                    // bf16 without notes (the usual case): pp_attn_store's bf16 rounding with no
                    // per-element format test or range branch, so the loop vectorises
                    for (int64_t i = 0; i < w; i++) {
                        P[j + i] = pp_round_bf16_ne(pe[i]);
                        dS[j + i] = pp_round_bf16_ne(pp_attn_bwd_ds(pe[i], dPpre[j + i], D));
                    }
                    continue;
                }
                for (int64_t i = 0; i < w; i++) {
                    float p = pe[i], ds = pp_attn_bwd_ds(p, dPpre[j + i], D);
                    P[j + i] = pp_attn_store(fP, p);
                    dS[j + i] = pp_attn_store(fS, ds);
                    if (L->ranges) {
                        pp_range_note(L->ranges, PP_SITE_ATTN_P, rh, L->f, p, P[j + i]);
                        pp_range_note1(L->ranges, PP_SITE_ATTN_DP, rh, PP_FMT_FP32, dPpre[j + i]);
                        pp_range_note(L->ranges, PP_SITE_ATTN_DS, rh, L->f, ds, dS[j + i]);
                    }
                }
            }
            done = 1;
        }
#endif
        for (int64_t j = 0, w; !done && j <= je; j += w) {  // s and dP in key lanes
            w = pp_attn_key_lanes(L, &G, j, je + 1 - j);
            int64_t ld = pp_attn_keyT_ld(L, &G, j);
            if (xs)
                pp_attn_dots_T64(L, qr, pp_attn_keyT(L, &G, L->kT, b, hh, j), ld, w, d, sd);
            else if (Spre)
                for (int64_t i = 0; i < w; i++)
                    sv[i] = Spre[j + i];
            else
                pp_attn_dots_T(L, PP_ATTN_MMA_S_BWD, qr, pp_attn_keyT(L, &G, L->kT, b, hh, j), ld, w, sv);
            if (xdp)
                pp_attn_dots_T64(L, go, pp_attn_keyT(L, &G, L->vT, b, hh, j), ld, w, d, dpd);
            else if (dPpre)
                for (int64_t i = 0; i < w; i++)
                    dpv[i] = dPpre[j + i];
            else
                pp_attn_dots_T(L, PP_ATTN_MMA_DP, go, pp_attn_keyT(L, &G, L->vT, b, hh, j), ld, w, dpv);
            for (int64_t i = 0; i < w; i++) {
                sv[i] = xs ? (float)sd[i] : sv[i];
                dpv[i] = xdp ? (float)dpd[i] : dpv[i];
                dpd[i] = xdp ? dpd[i] : (double)dpv[i];
            }
            // pp_attn_bwd_p's exponentials, in vector lanes where the device has them
            int vexp = !xin && !xs && !L->lse_f64 &&
                       pp_attn_exp2_lanes(L, sv, L->sc.sl2, -(lse * 1.44269502f), pe, w);
            for (int64_t i = 0; i < w; i++) {
                float p = pp_attn_order_exp(L->order_seed, PP_ATTN_ORDER_BWD_P, grow, j + i,
                                            xs            ? pp_attn_bwd_p_s64(&L->sc, sd[i], lse64, xin)
                                            : xin         ? pp_attn_bwd_p64(&L->sc, sv[i], lse64)
                                            : L->lse_f64 ? pp_attn_bwd_p_l64(&L->sc, sv[i], lse64)
                                            : vexp       ? pe[i]
                                                         : pp_attn_bwd_p(&L->sc, sv[i], lse));
                P[j + i] = pp_attn_store(pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_P, L->f), p);
                dS[j + i] = pp_attn_store(pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_DS, L->f),
                                          xd || xdp ? pp_attn_bwd_ds64(p, dpd[i], D64) : pp_attn_bwd_ds(p, dpv[i], D));
                if (L->ranges) {
                    int64_t rh = pp_attn_range_head(L, b, hh);
                    pp_range_note(L->ranges, PP_SITE_ATTN_P, rh, L->f, p, P[j + i]);
                    pp_range_note1(L->ranges, PP_SITE_ATTN_DP, rh, PP_FMT_FP32, dpv[i]);
                    pp_range_note(L->ranges, PP_SITE_ATTN_DS, rh, L->f, pp_attn_bwd_ds(p, dpv[i], D), dS[j + i]);
                }
            }
        }
    }
    for (int64_t j = je + 1; j < G.nk; j++)
        P[j] = dS[j] = 0.0f;
}

PP_HD static inline void pp_attn_t_flash_bwd_row(const pp_attn_launch *L, int64_t t)
{
    pp_attn_flash_bwd_row_(L, t, NULL, NULL);
}

#ifndef __CUDA_ARCH__
// The host device's groups of backward rows (dots4_T, dots2_T): up to four consecutive live rows of
// one block (two where the device has no dots4_T) get their S and dP chains from one pass over the
// keys (each key tile's loads serve every row of the group), over the keys the last of them sees
// (je does not decrease along a block's rows), then each row runs its body on them. Each chain is
// the one the row would compute alone (seed 0, neither chain exact), so the same bits; blocks of
// more than PP_ATTN_PAIR_KEYS keys, other rows, and a group's lone row run alone.
#define PP_ATTN_PAIR_KEYS 4096
#define PP_ATTN_BWD_ROWS 4
static inline int pp_attn_bwd_pairs(const pp_attn_launch *L)
{
    return L->dots2_T && L->order_seed == 0 && L->BK <= PP_ATTN_PAIR_KEYS &&
           !pp_site_exact(L->exact_sites, PP_SITE_ATTN_SCORES) && !pp_site_exact(L->exact_sites, PP_SITE_ATTN_DP);
}

static inline void pp_attn_r_flash_bwd_pairs(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    float S[PP_ATTN_BWD_ROWS][PP_ATTN_PAIR_KEYS], dP[PP_ATTN_BWD_ROWS][PP_ATTN_PAIR_KEYS];
    int most = L->dots4_T ? PP_ATTN_BWD_ROWS : 2;
    int64_t t = t0;
    while (t < t0 + n) {
        int64_t b[PP_ATTN_BWD_ROWS], hh[PP_ATTN_BWD_ROWS], x[PP_ATTN_BWD_ROWS], off[PP_ATTN_BWD_ROWS];
        int r[PP_ATTN_BWD_ROWS], k = 0;
        pp_attn_geom G[PP_ATTN_BWD_ROWS];
        for (; k < most && t + k < t0 + n; k++) {
            int ok = pp_attn_row(L, t + k, &b[k], &hh[k], &r[k], &x[k], &G[k]);
            ok = ok && (k == 0 || (b[k] == b[0] && hh[k] == hh[0] && r[k] == r[0]));  // one block: G[k] is G[0]
            if (!ok || pp_attn_bwd_row_dead(L, &G[k], b[k], hh[k], x[k]))
                break;
            off[k] = pp_attn_qoff(L, b[k], hh[k], pp_attn_qrow(L, &G[k], x[k]));
        }
        k = k == 3 ? 2 : k;  // a pair, and the third row starts the next group
        if (k < 2) {
            pp_attn_t_flash_bwd_row(L, t++);
            continue;
        }
        int64_t je = pp_attn_jend(&G[k - 1], x[k - 1]);
        for (int64_t j = 0, w; j <= je; j += w) {
            w = pp_attn_key_lanes(L, &G[0], j, je + 1 - j);
            int64_t ld = pp_attn_keyT_ld(L, &G[0], j);
            const float *kT = pp_attn_keyT(L, &G[0], L->kT, b[0], hh[0], j);
            const float *vT = pp_attn_keyT(L, &G[0], L->vT, b[0], hh[0], j);
            if (k == 2) {
                L->dots2_T(L->q + off[0], L->q + off[1], kT, ld, L->d, S[0] + j, S[1] + j, w);
                L->dots2_T(L->go + off[0], L->go + off[1], vT, ld, L->d, dP[0] + j, dP[1] + j, w);
                continue;
            }
            const float *qa[PP_ATTN_BWD_ROWS] = {L->q + off[0], L->q + off[1], L->q + off[2], L->q + off[3]};
            const float *ga[PP_ATTN_BWD_ROWS] = {L->go + off[0], L->go + off[1], L->go + off[2], L->go + off[3]};
            float *sa[PP_ATTN_BWD_ROWS] = {S[0] + j, S[1] + j, S[2] + j, S[3] + j};
            float *pa[PP_ATTN_BWD_ROWS] = {dP[0] + j, dP[1] + j, dP[2] + j, dP[3] + j};
            L->dots4_T(qa, kT, ld, L->d, sa, w);
            L->dots4_T(ga, vT, ld, L->d, pa, w);
        }
        for (int i = 0; i < k; i++)
            pp_attn_flash_bwd_row_(L, t + i, S[i], dP[i]);
        t += k;
    }
}
#endif

// Unfused backward of row x after P (SP) and dP (DS): D, then dS in place.
PP_HD static inline void pp_attn_t_unf_bwd_row(const pp_attn_launch *L, int64_t t)
{
    int64_t b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t, &b, &hh, &r, &x, &G))
        return;
    float *P = L->SP + t * L->BK, *dS = L->DS + t * L->BK;
    int64_t je = pp_attn_bwd_row_dead(L, &G, b, hh, x) ? -1 : pp_attn_jend(&G, x);
    if (je >= 0) {
        float D = 0.0f;
        // d exact without naive: D's chain in binary64 (exact products dP·P), read by dS
        // (pp_attn_softmax_bwd_dx64); the naive D's per-step stores are its site otherwise
        int xd = L->softmax != PP_ATTN_SOFTMAX_NAIVE && pp_site_exact(L->exact_sites, PP_SITE_ATTN_D);
        double D64 = 0.0;
        for (int64_t j = 0; j <= je; j++) {
            D = pp_attn_softmax_bwd_d_step(pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_D, L->f), L->softmax, D, dS[j],
                                           P[j]);
            D64 = xd ? fma((double)dS[j], (double)P[j], D64) : D64;
        }
        D = xd ? (float)D64 : D;
        int64_t rh = pp_attn_range_head(L, b, hh);
        pp_range_note1(L->ranges, PP_SITE_ATTN_D, rh, L->softmax == PP_ATTN_SOFTMAX_NAIVE ? L->f : PP_FMT_FP32, D);
        for (int64_t j = 0; j <= je; j++) {
            pp_format_id fs = pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_DS, L->f);
            dS[j] = xd ? pp_attn_softmax_bwd_dx64(fs, L->softmax, dS[j], P[j], D64, L->sc.L, L->sc.A)
                       : pp_attn_softmax_bwd_dx(fs, L->softmax, dS[j], P[j], D, L->sc.L, L->sc.A);
            pp_range_note1(L->ranges, PP_SITE_ATTN_DS, rh, L->f, dS[j]);
        }
    }
    for (int64_t j = je + 1; j < G.nk; j++)
        P[j] = dS[j] = 0.0f;
}

// The column chains of the backward (dq over keys, dk and dv over rows): fp32 chains (fma) end in
// RN_F(acc) then, when alpha ≠ 1, RN_F(alpha ⊗ ·) (post_round); without post_round (flash dq',
// dk') acc goes straight to RN_F(alpha ⊗ acc). Storage chains (unfused, accumulate storage)
// round every step; then RN_F(alpha ⊗ ·) when alpha ≠ 1.
PP_HD static inline int pp_attn_chain_storage(const pp_attn_launch *L)
{
    return L->kernel == PP_ATTN_UNFUSED && L->accum == PP_ATTN_ACC_STORAGE;
}

// site: the chain's (dq, dk or dv; attention.h "Exact sites": exact, its binary32 stores keep the
// opmath value; the binary64 value goes to the shadow, pp_attn_chain_end64)
PP_HD static inline float pp_attn_chain_end32(const pp_attn_launch *L, int site, float alpha, int post_round, float acc)
{
    pp_format_id f = pp_attn_site_fmt(L->exact_sites, site, L->f);
    float t = post_round ? pp_attn_store(f, acc) : acc;
    return alpha != 1.0f || !post_round ? pp_attn_mul_store(f, alpha, t) : t;
}

PP_HD static inline float pp_attn_chain_end_storage(const pp_attn_launch *L, int site, float alpha, double acc)
{
    pp_format_id f = pp_attn_site_fmt(L->exact_sites, site, L->f);
    return alpha != 1.0f ? pp_attn_mul_store(f, alpha, (float)acc) : (float)acc;
}

// The chain's end with its site exact, kept in binary64: α·acc (an exact product of two binary32
// values, or of a binary32 α and a storage chain's value of F), or acc where the kernel stores
// acc and multiplies nothing (alpha 1 with post_round).
PP_HD static inline double pp_attn_chain_end64(float alpha, int post_round, double acc)
{
    return alpha != 1.0f || !post_round ? (double)alpha * acc : acc;
}

// The backward's GEMM alpha (baddbmm's backward multiplies by it): α32 for post, else 1.
PP_HD static inline float pp_attn_bwd_alpha(const pp_attn_launch *L)
{
    return L->scale == PP_ATTN_SCALE_POST ? L->sc.alpha32 : 1.0f;
}

// Threads [t0, t0 + n) of row rt's dq' (columns from t0's e on): chain over j ≤ je of
// dS_xj·k'_je (0 for a dead row).
PP_HD static inline void pp_attn_r_bwd_dq(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    int64_t e0 = t0 % L->d, rt = t0 / L->d, b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, rt, &b, &hh, &r, &x, &G))
        return;
    float *y = L->dqb + pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x));
    int64_t je = pp_attn_bwd_row_dead(L, &G, b, hh, x) ? -1 : pp_attn_jend(&G, x);
    int64_t grow = pp_attn_order_row(L, b, hh, pp_attn_qrow(L, &G, x));
    if (je < 0) {
        for (int64_t e = e0; e < e0 + n; e++)
            y[e] = 0.0f;
        for (int64_t e = e0; L->dqb64 && e < e0 + n; e++)
            L->dqb64[y - L->dqb + e] = 0.0;
        return;
    }
    float alpha = pp_attn_bwd_alpha(L), acc[PP_ATTN_MAX_LANES];
    double dacc[PP_ATTN_MAX_LANES];
    int post_round = L->kernel != PP_ATTN_FLASH;
    const float *dS = L->DS + rt * L->BK;
    int64_t kh = pp_attn_koff(L, b, hh, 0);
    pp_attn_mma_walk w;
    int64_t j;
    // dq_acc exact (attention.h "Exact sites", chains): one binary64 chain over the keys (flash's
    // blocks and their sum folded into it), RN_32 of it then the kernel's end (RN_F, α)
    int xacc = pp_site_exact(L->exact_sites, PP_SITE_ATTN_DQ_ACC);
    for (int64_t e = e0, m; e < e0 + n; e += m) {
        m = pp_attn_lanes(L, e0 + n - e);
        if (xacc) {
            int pr = post_round || pp_attn_chain_storage(L);  // the chain's value is stored in F
            for (int64_t l = 0; l < m; l++)
                dacc[l] = 0.0;
            for (pp_attn_mma_begin(&w, L->order_seed, PP_ATTN_MMA_DQ, 0, je + 1); pp_attn_mma_next(&w, &j);) {
                const float *kr = L->k + pp_attn_koff_at(L, kh, pp_attn_krow(L, &G, j)) + e;
                pp_attn_axpy64(L, dS[j], kr, dacc, m);
            }
            for (int64_t l = 0; l < m; l++)
                y[e + l] = pp_attn_chain_end32(L, PP_SITE_ATTN_DQ, alpha, pr, (float)dacc[l]);
            for (int64_t l = 0; L->dqb64 && l < m; l++)
                L->dqb64[y - L->dqb + e + l] = pp_attn_chain_end64(alpha, pr, dacc[l]);
            for (int64_t l = 0; L->ranges && l < m; l++)
                pp_range_note1(L->ranges, PP_SITE_ATTN_DQ, pp_attn_range_head(L, b, hh), L->f, y[e + l]);
            continue;
        }
        if (pp_attn_chain_storage(L)) {
            for (int64_t l = 0; l < m; l++)
                dacc[l] = 0.0;
            for (pp_attn_mma_begin(&w, L->order_seed, PP_ATTN_MMA_DQ, 0, je + 1); pp_attn_mma_next(&w, &j);) {
                const float *kr = L->k + pp_attn_koff_at(L, kh, pp_attn_krow(L, &G, j)) + e;
                for (int64_t l = 0; l < m; l++)
                    dacc[l] = pp_gemm_step_storage(L->f, dS[j], kr[l], dacc[l]);
            }
            for (int64_t l = 0; l < m; l++)
                y[e + l] = pp_attn_chain_end_storage(L, PP_SITE_ATTN_DQ, alpha, dacc[l]);
            for (int64_t l = 0; L->dqb64 && l < m; l++)
                L->dqb64[y - L->dqb + e + l] = pp_attn_chain_end64(alpha, 0, dacc[l]);
            for (int64_t l = 0; L->ranges && l < m; l++)
                pp_range_note1(L->ranges, PP_SITE_ATTN_DQ, pp_attn_range_head(L, b, hh), L->f, y[e + l]);
            continue;
        }
        // flash: per key block of bbn keys a chain from +0, added in fp32 to the row's dQ (FA2's
        // atomicAdd into dq_accum; the real order across blocks is the GPU's, unknown: blocks in
        // increasing order here); unfused: one chain
        int64_t bn = L->kernel == PP_ATTN_FLASH && L->bbn > 0 ? L->bbn : je + 1;
        float part[PP_ATTN_MAX_LANES];
        for (int64_t l = 0; l < m; l++)
            acc[l] = 0.0f;
        int64_t nb = je / bn + 1, pa, pc;  // blocks visited as (pa·i + pc) mod nb: "Order band"
        pp_attn_order_blocks(L->order_seed, grow, nb, &pa, &pc);
        for (int64_t i = 0; i < nb; i++) {
            int64_t j0 = (pa * i + pc) % nb * bn;
            for (int64_t l = 0; l < m; l++)
                part[l] = 0.0f;
            int64_t j1 = j0 + bn < je + 1 ? j0 + bn : je + 1;
            pp_attn_steps T;
            T.n = 0;
            for (pp_attn_mma_begin(&w, L->order_seed, PP_ATTN_MMA_DQ, j0, j1); pp_attn_mma_next(&w, &j);)
                pp_attn_step_push(L, &T, dS[j], L->k + pp_attn_koff_at(L, kh, pp_attn_krow(L, &G, j)) + e, part, m);
            pp_attn_step_flush(L, &T, part, m);
            for (int64_t l = 0; l < m; l++)
                acc[l] = i == 0 ? part[l] : acc[l] + part[l];
        }
        for (int64_t l = 0; l < m; l++)
            y[e + l] = pp_attn_chain_end32(L, PP_SITE_ATTN_DQ, alpha, post_round, acc[l]);
        for (int64_t l = 0; L->dqb64 && l < m; l++)
            L->dqb64[y - L->dqb + e + l] = pp_attn_chain_end64(alpha, post_round, acc[l]);
        for (int64_t l = 0; L->ranges && l < m; l++)
            pp_range_note1(L->ranges, PP_SITE_ATTN_DQ, pp_attn_range_head(L, b, hh), L->f, y[e + l]);
    }
}

#ifndef __CUDA_ARCH__
// The host device's groups of dq rows (ger): up to PP_ATTN_DQ_ROWS consecutive live rows of
// one block, whole rows (t0 and n multiples of d), go through the key blocks together: per block
// each row's partial from +0 over the block's keys in increasing order (seed 0's MMA walk) as
// rank-1 updates (ger: each k row loaded once for the group; a row's keys end at its last visible
// key, the group's rows in reverse so that the rows a key reaches are a prefix), then added to the
// row's dQ in fp32 in block order, as pp_attn_r_bwd_dq does for each row alone: the same bits.
// The unfused kernel's one chain a row likewise (one block). fp32 chains only (seed 0, dq_acc not
// exact, no binary64 shadow, d at most the lanes); rows that are dead or of another block run alone.
#define PP_ATTN_DQ_ROWS 8
static inline int pp_attn_dq_rows(const pp_attn_launch *L)
{
    return L->ger && L->order_seed == 0 && !L->dqb64 &&
           !pp_site_exact(L->exact_sites, PP_SITE_ATTN_DQ_ACC) && !pp_attn_chain_storage(L) &&
           L->d <= PP_ATTN_MAX_LANES;
}

// The chains of a group's rows g < nr (row tasks rt[g] of one block G, last visible keys je[g] not
// decreasing): acc[g][c] = Σ over key blocks of bn keys, in order, of the block's chain from +0 over
// its keys in increasing order of coef(rt[g], j)·x_j[c] (x_j the key's row of xs: k or v), each a
// rank-1 update through ger (each x row loaded once for the group), the first block's chain the
// sum, every other added in fp32 — as one row alone computes it (pp_attn_r_bwd_dq, pp_attn_r_unf_pv
// at seed 0). coef: the rows' dS or P (row task t's keys at coef + t·BK).
static inline void pp_attn_group_chains(const pp_attn_launch *L, const pp_attn_geom *G, int64_t b, int64_t hh,
                                        const float *xs, const float *coef, const int64_t *rt, const int64_t *je,
                                        int nr, int64_t bn, float (*acc)[PP_ATTN_MAX_LANES])
{
    int64_t d = L->d, kh = pp_attn_koff(L, b, hh, 0);
    float part[PP_ATTN_DQ_ROWS * PP_ATTN_MAX_LANES];  // row g's partial at ger position nr − 1 − g
    float cT[PP_ATTN_MAX_LANES * PP_ATTN_DQ_ROWS];    // coef of key t for ger position k at [t·nr + k]
    const float *pa[PP_ATTN_MAX_LANES], *kx[PP_ATTN_MAX_LANES];
    int na[PP_ATTN_MAX_LANES];
    int64_t nb = je[nr - 1] / bn + 1;  // the last row's blocks: every row's are a prefix of them
    for (int64_t i = 0; i < nb; i++) {
        int64_t j0 = i * bn, end = j0 + bn < je[nr - 1] + 1 ? j0 + bn : je[nr - 1] + 1;
        for (int g = 0; g < nr; g++)
            for (int64_t c = 0; c < d; c++)
                part[(nr - 1 - g) * PP_ATTN_MAX_LANES + c] = 0.0f;
        // the block's keys at most the lanes per ger call (the chains go on in the next: ger adds to part)
        for (int64_t j1 = j0; j1 < end; j1 += PP_ATTN_MAX_LANES) {
            int64_t nk = end - j1 < PP_ATTN_MAX_LANES ? end - j1 : PP_ATTN_MAX_LANES;
            for (int64_t t = 0; t < nk; t++) {
                int a = 0;  // the rows that reach key j1 + t: the last ones, ger's first positions
                for (int g = nr - 1; g >= 0 && je[g] >= j1 + t; g--, a++)
                    cT[t * nr + a] = coef[rt[g] * L->BK + j1 + t];
                na[t] = a;
                pa[t] = cT + t * nr;
                kx[t] = xs + pp_attn_koff_at(L, kh, pp_attn_krow(L, G, j1 + t));
            }
            L->ger((int)nk, pa, kx, na, nr, part, d);
        }
        for (int g = 0; g < nr; g++) {
            if (je[g] < j0)
                continue;  // the row's blocks ended
            const float *pg = part + (nr - 1 - g) * PP_ATTN_MAX_LANES;
            for (int64_t c = 0; c < d; c++)
                acc[g][c] = i == 0 ? pg[c] : acc[g][c] + pg[c];
        }
    }
}

static inline void pp_attn_dq_group(const pp_attn_launch *L, const int64_t *rt, int nr)
{
    int64_t b = 0, hh = 0, x[PP_ATTN_DQ_ROWS], je[PP_ATTN_DQ_ROWS] = {0};
    pp_attn_geom G;
    pp_attn_group_rows(L, rt, nr, &b, &hh, &G, x, je);
    // flash: FA2's key blocks; unfused (or no blocks): one chain a row, here one block to the last
    // row's last key, each row's chain ending at its own (the keys a row reaches are its prefix)
    int post_round = L->kernel != PP_ATTN_FLASH;
    int64_t bn = L->kernel == PP_ATTN_FLASH && L->bbn > 0 ? L->bbn : je[nr - 1] + 1;
    float acc[PP_ATTN_DQ_ROWS][PP_ATTN_MAX_LANES];
    pp_attn_group_chains(L, &G, b, hh, L->k, L->DS, rt, je, nr, bn, acc);
    float alpha = pp_attn_bwd_alpha(L);
    int64_t d = L->d, rh = pp_attn_range_head(L, b, hh);
    for (int g = 0; g < nr; g++) {
        float *y = L->dqb + pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x[g]));
        for (int64_t c = 0; c < d; c++)
            y[c] = pp_attn_chain_end32(L, PP_SITE_ATTN_DQ, alpha, post_round, acc[g][c]);
        for (int64_t c = 0; L->ranges && c < d; c++)
            pp_range_note1(L->ranges, PP_SITE_ATTN_DQ, rh, L->f, y[c]);
    }
}

// The unfused P·V of a group's rows (pp_attn_group_chains over P and v, one block), each row's out
// as pp_attn_r_unf_pv's fp32 path stores and notes it.
static inline void pp_attn_unf_pv_group(const pp_attn_launch *L, const int64_t *rt, int nr)
{
    int64_t b = 0, hh = 0, x[PP_ATTN_DQ_ROWS], je[PP_ATTN_DQ_ROWS] = {0};
    pp_attn_geom G;
    pp_attn_group_rows(L, rt, nr, &b, &hh, &G, x, je);
    float acc[PP_ATTN_DQ_ROWS][PP_ATTN_MAX_LANES];
    pp_attn_group_chains(L, &G, b, hh, L->v, L->SP, rt, je, nr, je[nr - 1] + 1, acc);
    int64_t d = L->d, rh = pp_attn_range_head(L, b, hh);
    for (int g = 0; g < nr; g++)
        pp_attn_unf_pv_store(L, rh, acc[g], L->O + pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x[g])), d);
}

// Whether the unfused P·V takes row groups: fp32 accumulation at seed 0, nothing exact, d at most
// the lanes, the device's ger.
static inline int pp_attn_unf_pv_rows(const pp_attn_launch *L)
{
    return L->ger && L->order_seed == 0 && L->exact_sites == 0 && !L->O64 && L->accum != PP_ATTN_ACC_STORAGE &&
           L->d <= PP_ATTN_MAX_LANES;
}

// dq's and the unfused P·V's rows for pp_attn_row_groups: live (dq: not dead; P·V: sees a key,
// pp_attn_fwd_live), and one row alone (its d threads).
static inline int pp_attn_dq_live(const pp_attn_launch *L, int64_t row, int64_t *b, int64_t *hh, int *r)
{
    int64_t x = 0;
    pp_attn_geom G;
    return pp_attn_row(L, row, b, hh, r, &x, &G) && !pp_attn_bwd_row_dead(L, &G, *b, *hh, x);
}
static inline void pp_attn_dq_alone(const pp_attn_launch *L, int64_t row)
{
    pp_attn_r_bwd_dq(L, row * L->d, L->d);
}
static inline void pp_attn_unf_pv_alone(const pp_attn_launch *L, int64_t row)
{
    pp_attn_r_unf_pv(L, row * L->d, L->d);
}
#if PP_ATTN_DQ_ROWS > PP_ATTN_GROUP_MAX
#error "a dq group must fit pp_attn_row_groups"
#endif

// Threads [t0, t0 + n) of a dq (dq 1) or unfused P·V (dq 0) launch: whole rows in groups
// (pp_attn_dq_group, pp_attn_unf_pv_group); a part of a row, rows that see no key (dq: dead rows)
// and rows of other blocks alone (pp_attn_r_bwd_dq, pp_attn_r_unf_pv).
static inline void pp_attn_r_chain_rows(const pp_attn_launch *L, int dq, int64_t t0, int64_t n)
{
    int64_t d = L->d;
    if (t0 % d || n % d) {
        for (int64_t t = t0; t < t0 + n;) {
            int64_t w = d - t % d < t0 + n - t ? d - t % d : t0 + n - t;
            if (dq)
                pp_attn_r_bwd_dq(L, t, w);
            else
                pp_attn_r_unf_pv(L, t, w);
            t += w;
        }
        return;
    }
    if (dq)
        pp_attn_row_groups(L, t0 / d, (t0 + n) / d, PP_ATTN_DQ_ROWS, pp_attn_dq_live, pp_attn_dq_alone,
                           pp_attn_dq_group);
    else
        pp_attn_row_groups(L, t0 / d, (t0 + n) / d, PP_ATTN_DQ_ROWS, pp_attn_fwd_live, pp_attn_unf_pv_alone,
                           pp_attn_unf_pv_group);
}
#endif

// Keys per group in dk/dv: a group's chains share each row's loads (P, dS of consecutive keys
// lie side by side); the lane count caps it (1 on the GPU). 32: each group streams its head's q
// and dO rows (2 MiB each at s 4096, d 128: from L3, not L2) once for 32 keys' chains; 8 → 32 took
// the PR-config flash variant's fwd+bwd from 5.45 to 4.87 s CPU (bench_attention_cpu), 64 no further.
#ifdef __CUDA_ARCH__
#define PP_ATTN_DKV_KEYS 1
#else
#define PP_ATTN_DKV_KEYS 32
#endif

// Rows of dk/dv's chains collected for the host device's rank-1 updates (pp_attn_ger_fn): each
// row's P and dS at the group's first key, its dO and q' at the run's first column, its active keys.
typedef struct pp_attn_ger_rows {
    const float *P[PP_ATTN_STEP_BUF], *dS[PP_ATTN_STEP_BUF], *go[PP_ATTN_STEP_BUF], *q[PP_ATTN_STEP_BUF];
    int na[PP_ATTN_STEP_BUF];
    int n;
} pp_attn_ger_rows;

// The collected rows' steps: dv's chains av (P·dO), dk's ak (dS·q').
PP_HD static inline void pp_attn_ger_flush(const pp_attn_launch *L, pp_attn_ger_rows *R, int ng,
                                           float (*av)[PP_ATTN_MAX_LANES], float (*ak)[PP_ATTN_MAX_LANES], int64_t m)
{
#ifndef __CUDA_ARCH__
    if (R->n > 0) {
        L->ger(R->n, R->P, R->go, R->na, ng, &av[0][0], m);
        L->ger(R->n, R->dS, R->q, R->na, ng, &ak[0][0], m);
    }
#else
    (void)L, (void)ng, (void)av, (void)ak, (void)m;
#endif
    R->n = 0;
}

// dv and dk' of q head hh for the ng keys [y0, y0 + ng) of rank r's block, columns [e0, e0 + ne):
// per key y, chains over the block rows that see it (x ≥ i0(y)), increasing (P, dS of dead rows
// are 0). dvh, dkh indices start at out (key y0, column 0).
PP_HD static inline void pp_attn_dkv_keys(const pp_attn_launch *L, int64_t b, int64_t hh, int r, int64_t y0,
                                          int64_t ng, int64_t e0, int64_t ne, int64_t out)
{
    pp_attn_geom G;
    pp_attn_geom_of(L, r, &G);
    int64_t i0[PP_ATTN_DKV_KEYS];
    for (int64_t g = 0; g < ng; g++) {
        int64_t y = y0 + g;
        i0[g] = G.causal && y - G.off > 0 ? y - G.off : 0;
        i0[g] = i0[g] > G.nq ? G.nq : i0[g];
    }
    // fp32 chains in av, ak (the lane step); storage chains in dv, dk (rounded every step)
    float alpha = pp_attn_bwd_alpha(L), av[PP_ATTN_DKV_KEYS][PP_ATTN_MAX_LANES], ak[PP_ATTN_DKV_KEYS][PP_ATTN_MAX_LANES];
    double dv[PP_ATTN_DKV_KEYS][PP_ATTN_MAX_LANES], dk[PP_ATTN_DKV_KEYS][PP_ATTN_MAX_LANES];
    int post_round = L->kernel != PP_ATTN_FLASH, storage = pp_attn_chain_storage(L);
    // dkv_acc exact (attention.h "Exact sites", chains): the chains in binary64 in dv, dk (fma, one
    // binary64 rounding a step), RN_32 of them then the kernel's end (RN_F, α)
    int xacc = pp_site_exact(L->exact_sites, PP_SITE_ATTN_DKV_ACC), pr = post_round || storage;
    int64_t base = pp_attn_blk_row(L, b, hh, r, 0) * L->BK + y0, x;
    pp_attn_mma_walk w;
    for (int64_t e = e0, m; e < e0 + ne; e += m) {
        m = pp_attn_lanes(L, e0 + ne - e);
        pp_attn_steps tv[PP_ATTN_DKV_KEYS], tk[PP_ATTN_DKV_KEYS];  // av[g]'s and ak[g]'s steps
        for (int64_t g = 0; g < ng; g++) {
            tv[g].n = tk[g].n = 0;
            for (int64_t l = 0; l < m; l++) {
                av[g][l] = ak[g][l] = 0.0f;
                dv[g][l] = dk[g][l] = 0.0;
            }
        }
        // flash: FA2's query blocks of bbm rows from the last down (flash_bwd_kernel.h: m_block
        // from m_block_max − 1 down), rows increasing within a block; unfused: one chain, x increasing
        int64_t bm = L->kernel == PP_ATTN_FLASH && L->bbm > 0 ? L->bbm : G.nq;
        // (rows in the MMA k-chunk walk: increasing at seed 0, "Order band")
        // the host device's rank-1 updates (ger): the rows collected in chain order with their
        // active keys, then each key group's chains in the device's registers (the same steps)
        pp_attn_ger_rows gr;
        gr.n = 0;
        int ger = 0;
#ifndef __CUDA_ARCH__
        ger = L->ger && !xacc && !storage;
#endif
        for (int64_t x0 = G.nq <= 0 ? -1 : (G.nq - 1) - (G.nq - 1) % bm; x0 >= 0; x0 -= bm)
        for (pp_attn_mma_begin(&w, L->order_seed, PP_ATTN_MMA_DKV, x0 > i0[0] ? x0 : i0[0],
                               x0 + bm < G.nq ? x0 + bm : G.nq);
             pp_attn_mma_next(&w, &x);) {
            int64_t qo = pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x)) + e;
            const float *P = L->SP + base + x * L->BK, *dS = L->DS + base + x * L->BK;
            const float *go = L->go + qo, *qr = L->q + qo;
            if (ger) {
                int na = 0;
                while (na < ng && x >= i0[na])
                    na++;
                gr.P[gr.n] = P, gr.dS[gr.n] = dS, gr.go[gr.n] = go, gr.q[gr.n] = qr, gr.na[gr.n] = na;
                if (++gr.n == PP_ATTN_STEP_BUF)
                    pp_attn_ger_flush(L, &gr, (int)ng, av, ak, m);
                continue;
            }
            for (int64_t g = 0; g < ng && x >= i0[g]; g++) {
                if (xacc) {
                    pp_attn_axpy64(L, P[g], go, dv[g], m);
                    pp_attn_axpy64(L, dS[g], qr, dk[g], m);
                    continue;
                }
                if (storage) {
                    for (int64_t l = 0; l < m; l++) {
                        dv[g][l] = pp_gemm_step_storage(L->f, P[g], go[l], dv[g][l]);
                        dk[g][l] = pp_gemm_step_storage(L->f, dS[g], qr[l], dk[g][l]);
                    }
                    continue;
                }
                pp_attn_step_push(L, &tv[g], P[g], go, av[g], m);
                pp_attn_step_push(L, &tk[g], dS[g], qr, ak[g], m);
            }
        }
        if (ger)
            pp_attn_ger_flush(L, &gr, (int)ng, av, ak, m);
        for (int64_t g = 0; g < ng; g++) {
            pp_attn_step_flush(L, &tv[g], av[g], m);
            pp_attn_step_flush(L, &tk[g], ak[g], m);
        }
        for (int64_t g = 0; g < ng; g++)
            for (int64_t l = 0; l < m; l++) {
                int64_t o = out + g * L->d + e + l;
                if (xacc) {
                    L->dvh[o] = pp_attn_chain_end32(L, PP_SITE_ATTN_DV, 1.0f, 1, (float)dv[g][l]);
                    L->dkh[o] = pp_attn_chain_end32(L, PP_SITE_ATTN_DK, alpha, pr, (float)dk[g][l]);
                    if (L->dvh64)
                        L->dvh64[o] = dv[g][l];
                    if (L->dkh64)
                        L->dkh64[o] = pp_attn_chain_end64(alpha, pr, dk[g][l]);
                } else {
                    L->dvh[o] = storage ? pp_attn_chain_end_storage(L, PP_SITE_ATTN_DV, 1.0f, dv[g][l])
                                        : pp_attn_chain_end32(L, PP_SITE_ATTN_DV, 1.0f, 1, av[g][l]);
                    L->dkh[o] = storage ? pp_attn_chain_end_storage(L, PP_SITE_ATTN_DK, alpha, dk[g][l])
                                        : pp_attn_chain_end32(L, PP_SITE_ATTN_DK, alpha, post_round, ak[g][l]);
                    if (L->dvh64)
                        L->dvh64[o] = storage ? dv[g][l] : (double)av[g][l];
                    if (L->dkh64)
                        L->dkh64[o] = storage ? pp_attn_chain_end64(alpha, 0, dk[g][l])
                                              : pp_attn_chain_end64(alpha, post_round, ak[g][l]);
                }
                if (L->ranges) {
                    pp_range_note1(L->ranges, PP_SITE_ATTN_DV, pp_attn_range_head(L, b, hh), L->f, L->dvh[o]);
                    pp_range_note1(L->ranges, PP_SITE_ATTN_DK, pp_attn_range_head(L, b, hh), L->f, L->dkh[o]);
                }
            }
    }
}

// Threads [t0, t0 + n) of dv, dk' (t over (b, hh, r, y, e)): within one key's columns, or whole
// keys (t0, n multiples of d), taken in groups of consecutive keys of one block.
PP_HD static inline void pp_attn_r_bwd_dkv(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    int64_t d = L->d, e0 = t0 % d, whole = e0 == 0 && n % d == 0;
    int64_t maxg = pp_attn_lanes(L, PP_ATTN_DKV_KEYS);
    for (int64_t t = t0, ng; t < t0 + n; t += ng * d) {
        int64_t rest = t / d, y = rest % L->BK;
        rest /= L->BK;
        int r = (int)(rest % L->R);
        int64_t hh = (rest / L->R) % L->h, b = rest / (L->R * L->h);
        pp_attn_geom G;
        pp_attn_geom_of(L, r, &G);
        if (!whole) {  // part of one key's columns
            if (y < G.nk)
                pp_attn_dkv_keys(L, b, hh, r, y, 1, e0, n, t - e0);
            return;
        }
        ng = (t0 + n - t) / d;  // whole keys left
        ng = ng < maxg ? ng : maxg;
        ng = ng < L->BK - y ? ng : L->BK - y;  // one block
        int64_t live = G.nk - y < ng ? G.nk - y : ng;  // keys past the block's are no threads' work
        if (live > 0)
            pp_attn_dkv_keys(L, b, hh, r, y, live, 0, d, t);
    }
}

// Plain: dq = the prescale's backward of dq' (a copy when s_q = 1).
PP_HD static inline void pp_attn_t_plain_dq(const pp_attn_launch *L, int64_t t)
{
    float x = L->dqb[t];
    L->dq[t] = L->sc.s_q == 1.0f ? x : pp_attn_mul_store(L->f, L->sc.s_q, x);
    if (L->dqb64) {  // dq exact: the partial's binary64 value, through the prescale's backward
        double x64 = L->dqb64[t];
        L->dq64[t] = L->sc.s_q == 1.0f ? x64 : (double)pp_attn_store(L->f, (float)((double)L->sc.s_q * x64));
        L->dq[t] = (float)L->dq64[t];
    }
}

// Sum over the group's q heads (in order, from +0) of the per-head dk', dv at block key y.
PP_HD static inline void pp_attn_group_sum(const pp_attn_launch *L, int64_t b, int64_t g, int r, int64_t y, int64_t e,
                                           float *dk, float *dv)
{
    float sk = 0.0f, sv = 0.0f;
    for (int64_t hh = g * L->grp; hh < (g + 1) * L->grp; hh++) {
        int64_t i = (((b * L->h + hh) * L->R + r) * L->BK + y) * L->d + e;
        sk = sk + L->dkh[i];
        sv = sv + L->dvh[i];
    }
    *dk = sk;
    *dv = sv;
}

// The same sum in binary64 over the binary64 partials of an exact site (dk: dkh64, dv: dvh64;
// NULL: that tensor is not exact, its sum is not asked for): with a site exact its GQA sum keeps
// binary64 too (one q head per group: the partial itself, as the binary32 sum from +0 is).
PP_HD static inline void pp_attn_group_sum64(const pp_attn_launch *L, int64_t b, int64_t g, int r, int64_t y,
                                             int64_t e, double *dk, double *dv)
{
    double sk = 0.0, sv = 0.0;
    for (int64_t hh = g * L->grp; hh < (g + 1) * L->grp; hh++) {
        int64_t i = (((b * L->h + hh) * L->R + r) * L->BK + y) * L->d + e;
        sk += L->dkh64 ? L->dkh64[i] : 0.0;
        sv += L->dvh64 ? L->dvh64[i] : 0.0;
    }
    *dk = sk;
    *dv = sv;
}

// Plain, threads [t0, t0 + n) of one kv row: dk = RN_F(s_k ⊗ RN_F(Σ dk')), dv = RN_F(Σ dv), t
// over [b][h_kv][s_kv][d].
PP_HD static inline void pp_attn_r_plain_dkv(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    int64_t e0 = t0 % L->d, j = (t0 / L->d) % L->skv, g = (t0 / (L->d * L->skv)) % L->h_kv;
    int64_t b = t0 / (L->d * L->skv * L->h_kv);
    for (int64_t e = e0; e < e0 + n; e++) {
        float sk, sv;
        pp_attn_group_sum(L, b, g, 0, j, e, &sk, &sv);
        L->dk[t0 - e0 + e] = pp_attn_mul_store(L->f, L->sc.s_k, pp_attn_store(L->f, sk));
        L->dv[t0 - e0 + e] = pp_attn_store(L->f, sv);
        if (!L->dkh64 && !L->dvh64)
            continue;
        // dk or dv exact: the store RN_F(Σ) after the group sum is the site's store too (as the
        // CP ring's step partial is), kept in binary64; the prescale's backward as the kernel's
        double k64, v64;
        int64_t i = t0 - e0 + e;
        pp_attn_group_sum64(L, b, g, 0, j, e, &k64, &v64);
        if (L->dkh64) {
            L->dk64[i] = L->sc.s_k == 1.0f ? k64 : (double)pp_attn_store(L->f, (float)((double)L->sc.s_k * k64));
            L->dk[i] = (float)L->dk64[i];
        }
        if (L->dvh64) {
            L->dv64[i] = v64;
            L->dv[i] = (float)v64;
        }
    }
}

// CP forward, after step i's block: the running lse of each row the step touched.
PP_HD static inline void pp_attn_t_cp_lse(const pp_attn_launch *L, int64_t t)
{
    if (!pp_attn_cp_touched(L, t % L->sq))
        return;
    float li = L->Lse[t];
    double li64 = L->Lse64 ? L->Lse64[t] : (double)li;  // site lse exact: the step's binary64 lse
    if (L->cp_flavour == PP_ATTN_CP_TE_2024 || pp_site_exact(L->exact_sites, PP_SITE_ATTN_CP_LSE_MERGE)) {
        // binary64 (te-2024's, or site cp_lse_merge exact), rounded to fp32 for the output (kept
        // in binary64 for it when cp_lse_merge is exact: run_lse64 is read in its place)
        double x = L->step == 0 ? li64 : pp_attn_cp_lse_merge64_d(L->run_lse64[t], li64);
        L->run_lse64[t] = x;
        L->run_lse[t] = (float)x;
    } else if (L->Lse64) {
        L->run_lse[t] = L->step == 0 ? li : pp_attn_cp_lse_merge_r(L->cp_flavour, L->run_lse[t], li64);
    } else {
        L->run_lse[t] = L->step == 0 ? li : pp_attn_cp_lse_merge(L->cp_flavour, L->run_lse[t], li);
    }
    if (L->ranges)
        pp_range_note1(L->ranges, PP_SITE_ATTN_CP_LSE_MERGE,
                       pp_attn_range_head(L, t / (L->sq * L->h), (t / L->sq) % L->h), PP_FMT_FP32, L->run_lse[t]);
}

// The rank holding global row s (chunks r and 2W − 1 − r).
PP_HD static inline int pp_attn_cp_rank_of(const pp_attn_launch *L, int64_t s)
{
    int64_t ch = s / L->c;
    return (int)(ch < L->W ? ch : 2 * L->W - 1 - ch);
}

// Whether the out merge reads or keeps a binary64 shadow (explain: out_partial, lse, cp_out_merge
// or out exact; cp_lse_merge alone keeps the binary32 path, pp_attn_cp_out_step_x).
PP_HD static inline int pp_attn_cp_out_x64(const pp_attn_launch *L)
{
    return L->Oall64 || L->Lall64 || L->out64 || pp_site_exact(L->exact_sites, PP_SITE_ATTN_CP_OUT_MERGE);
}

// The out merge of m elements from t of row `row` (global row s) with binary64 operands and
// accumulator (pp_attn_cp_out_step_d): the partials (out_partial), the step lse (lse), the
// running lse (cp_lse_merge) in binary64 where their sites are exact; the accumulator kept in
// binary64 under cp_out_merge, else RN_C each step; out kept (site out) or RN_F(acc), one rounding.
PP_HD static inline void pp_attn_r_cp_out64(const pp_attn_launch *L, int64_t t, int64_t m, int64_t row, int64_t s,
                                            int64_t rh)
{
    int64_t rows = L->b * L->h * L->sq;
    pp_attn_launch Li = *L;
    int x64 = pp_site_exact(L->exact_sites, PP_SITE_ATTN_CP_LSE_MERGE);
    int xacc = pp_site_exact(L->exact_sites, PP_SITE_ATTN_CP_OUT_MERGE);
    double lse = x64 ? L->run_lse64[row] : (double)L->run_lse[row];
    for (int64_t l = 0; l < m; l++) {
        double acc = 0.0;
        for (int i = 0; i < L->W; i++) {
            Li.step = i;
            if (!pp_attn_cp_touched(&Li, s))
                continue;
            int64_t oi = i * rows * L->d + t + l, li = i * rows + row;
            int te2nd = L->cp_flavour == PP_ATTN_CP_TE_2024 &&
                        pp_attn_step_type(L->causal, pp_attn_cp_rank_of(L, s), i) == 2;
            acc = pp_attn_cp_out_step_d(L->cp_accum, acc, L->Oall64 ? L->Oall64[oi] : (double)L->Oall[oi],
                                        L->Lall64 ? L->Lall64[li] : (double)L->Lall[li],
                                        te2nd ? L->run_lse64[row] : lse, x64, te2nd, xacc);
            if (L->ranges)
                pp_range_note1(L->ranges, PP_SITE_ATTN_CP_OUT_MERGE, rh, L->cp_accum, acc);
        }
        double o = L->out64 ? acc : pp_round(L->f, acc, PP_RND_NE, 0);
        if (L->out64)
            L->out64[t + l] = o;
        L->out[t + l] = (float)o;
    }
}

// CP forward, after the ring, threads [t0, t0 + n) of one row: out = RN_F(acc), acc the
// step-ordered merge of the partials (each element its own chain over the steps).
PP_HD static inline void pp_attn_r_cp_out(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    int64_t row = t0 / L->d, s = row % L->sq, rows = L->b * L->h * L->sq;
    int64_t rh = pp_attn_range_head(L, row / (L->sq * L->h), (row / L->sq) % L->h);
    pp_attn_launch Li = *L;
    float lse = L->run_lse[row], acc[PP_ATTN_MAX_LANES];
    pp_format_id ca = pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_CP_OUT_MERGE, L->cp_accum);
    int x64 = pp_site_exact(L->exact_sites, PP_SITE_ATTN_CP_LSE_MERGE);  // attention.h "Exact sites"
    for (int64_t t = t0, m; t < t0 + n; t += m) {
        m = pp_attn_lanes(L, t0 + n - t);
        if (pp_attn_cp_out_x64(L)) {
            pp_attn_r_cp_out64(L, t, m, row, s, rh);
            continue;
        }
        for (int64_t l = 0; l < m; l++)
            acc[l] = 0.0f;
        for (int i = 0; i < L->W; i++) {
            Li.step = i;
            if (!pp_attn_cp_touched(&Li, s))
                continue;
            const float *oi = L->Oall + i * rows * L->d + t;
            float li = L->Lall[i * rows + row];
            // the factors exp(li − lse) once for the row (the same value in every column)
            if (L->cp_flavour == PP_ATTN_CP_TE_2024 && pp_attn_step_type(L->causal, pp_attn_cp_rank_of(L, s), i) == 2) {
                double e = li == -INFINITY ? 0.0 : pp_attn_cp_out_w64(li, L->run_lse64[row]);
                for (int64_t l = 0; l < m; l++)  // the stale binary64 view of the second half
                    acc[l] = pp_attn_cp_out_step64_w(ca, acc[l], oi[l], li, e);
                for (int64_t l = 0; L->ranges && l < m; l++)
                    pp_range_note1(L->ranges, PP_SITE_ATTN_CP_OUT_MERGE, rh, L->cp_accum, acc[l]);
                continue;
            }
            float w = x64 || li == -INFINITY ? 0.0f : pp_attn_cp_out_w(li, lse);
            for (int64_t l = 0; l < m; l++)  // cp_lse_merge exact: the correction reads the binary64 lse
                acc[l] = x64 ? pp_attn_cp_out_step_x(ca, acc[l], oi[l], li, L->run_lse64[row])
                             : pp_attn_cp_out_step_w(ca, acc[l], oi[l], li, w);
            for (int64_t l = 0; L->ranges && l < m; l++)
                pp_range_note1(L->ranges, PP_SITE_ATTN_CP_OUT_MERGE, rh, L->cp_accum, acc[l]);
        }
        for (int64_t l = 0; l < m; l++)
            L->out[t + l] = pp_attn_store(pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_OUT, L->f), acc[l]);
        for (int64_t l = 0; L->ranges && l < m; l++)
            pp_range_note(L->ranges, PP_SITE_ATTN_OUT, rh, L->f, acc[l], L->out[t + l]);
    }
}

// CP backward step i, threads [t0, t0 + n) of one row: dq_acc = RN_C(dq_acc ⊕ dq'_i) when the
// step touched the row.
PP_HD static inline void pp_attn_r_cp_dq(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    if (!pp_attn_cp_touched(L, (t0 / L->d) % L->sq))
        return;
    int64_t row = t0 / L->d, rh = pp_attn_range_head(L, row / (L->sq * L->h), (row / L->sq) % L->h);
    for (int64_t t = t0; t < t0 + n; t++) {
        if (L->dqb64 || L->acc_dq64) {  // explain's binary64 shadows (attention.h "Exact sites")
            double g = L->dqb64 ? L->dqb64[t] : (double)L->dqb[t];
            if (L->acc_dq64) {
                L->acc_dq64[t] += g;
                L->acc_dq[t] = (float)L->acc_dq64[t];
            } else {
                L->acc_dq[t] = pp_attn_store(L->cp_grad_accum, (float)((double)L->acc_dq[t] + g));
            }
            continue;
        }
        double e = (double)L->acc_dq[t] + L->dqb[t];  // what the step rounds (to binary64)
        L->acc_dq[t] = pp_attn_cp_grad_step(pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_CP_DQ_ACC, L->cp_grad_accum),
                                            L->acc_dq[t], L->dqb[t]);
        pp_range_note(L->ranges, PP_SITE_ATTN_CP_DQ_ACC, rh, L->cp_grad_accum, e, L->acc_dq[t]);
    }
}

// CP backward step i, threads [t0, t0 + n) of one block key: the group-summed dk', dv of rank
// r's block, RN_F, into the accumulators of the kv rows (block o's, travelling the ring).
PP_HD static inline void pp_attn_r_cp_dkv(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    int64_t e0 = t0 % L->d, rest = t0 / L->d, y = rest % L->BK;
    rest /= L->BK;
    int r = (int)(rest % L->R);
    int64_t g = (rest / L->R) % L->h_kv, b = rest / (L->R * L->h_kv);
    pp_attn_geom G;
    pp_attn_geom_of(L, r, &G);
    if (y >= G.nk)
        return;
    int64_t gx = ((b * L->h_kv + g) * L->skv + pp_attn_krow(L, &G, y)) * L->d;
    for (int64_t e = e0; e < e0 + n; e++) {
        float sk, sv;
        pp_attn_group_sum(L, b, g, r, y, e, &sk, &sv);
        if (L->dkh64 || L->dvh64 || L->acc_dk64) {  // explain's binary64 shadows ("Exact sites")
            double k64, v64;
            pp_attn_group_sum64(L, b, g, r, y, e, &k64, &v64);
            // the step's partial: kept (dk, dv exact) or RN_F of the binary32 sum
            double pk = L->dkh64 ? k64 : (double)pp_attn_store(L->f, sk);
            double pv = L->dvh64 ? v64 : (double)pp_attn_store(L->f, sv);
            if (L->acc_dk64) {
                L->acc_dk64[gx + e] += pk;
                L->acc_dv64[gx + e] += pv;
                L->acc_dk[gx + e] = (float)L->acc_dk64[gx + e];
                L->acc_dv[gx + e] = (float)L->acc_dv64[gx + e];
            } else {
                L->acc_dk[gx + e] = pp_attn_store(L->cp_grad_accum, (float)((double)L->acc_dk[gx + e] + pk));
                L->acc_dv[gx + e] = pp_attn_store(L->cp_grad_accum, (float)((double)L->acc_dv[gx + e] + pv));
            }
            continue;
        }
        pp_format_id ga = pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_CP_DKV_ACC, L->cp_grad_accum);
        pp_format_id fk = pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_DK, L->f);  // the step's partial
        pp_format_id fv = pp_attn_site_fmt(L->exact_sites, PP_SITE_ATTN_DV, L->f);
        L->acc_dk[gx + e] = pp_attn_cp_grad_step(ga, L->acc_dk[gx + e], pp_attn_store(fk, sk));
        L->acc_dv[gx + e] = pp_attn_cp_grad_step(ga, L->acc_dv[gx + e], pp_attn_store(fv, sv));
        pp_range_note1(L->ranges, PP_SITE_ATTN_CP_DKV_ACC, pp_attn_range_kvhead(L, b, g), L->cp_grad_accum,
                       L->acc_dk[gx + e]);
        pp_range_note1(L->ranges, PP_SITE_ATTN_CP_DKV_ACC, pp_attn_range_kvhead(L, b, g), L->cp_grad_accum,
                       L->acc_dv[gx + e]);
    }
}

// The final store RN_F(acc) belongs to the accumulator's site: with cp_dq_acc (cp_dkv_acc) exact
// the binary64 accumulator reaches the output (dq64, dk64, dv64), through the prescale's backward
// as the kernel's (pp_attn_t_plain_dq).
PP_HD static inline double pp_attn_cp_final64(pp_format_id f, float s, double acc)
{
    return s == 1.0f ? acc : (double)pp_attn_store(f, (float)((double)s * acc));
}

PP_HD static inline void pp_attn_t_cp_final_dq(const pp_attn_launch *L, int64_t t)
{
    if (L->acc_dq64) {
        L->dq64[t] = pp_attn_cp_final64(L->f, L->sc.s_q, L->acc_dq64[t]);
        L->dq[t] = (float)L->dq64[t];
        return;
    }
    L->dq[t] = pp_attn_mul_store(L->f, L->sc.s_q, pp_attn_store(L->f, L->acc_dq[t]));
}

PP_HD static inline void pp_attn_t_cp_final_dkv(const pp_attn_launch *L, int64_t t)
{
    if (L->acc_dk64) {
        L->dk64[t] = pp_attn_cp_final64(L->f, L->sc.s_k, L->acc_dk64[t]);
        L->dv64[t] = L->acc_dv64[t];
        L->dk[t] = (float)L->dk64[t];
        L->dv[t] = (float)L->dv64[t];
        return;
    }
    L->dk[t] = pp_attn_mul_store(L->f, L->sc.s_k, pp_attn_store(L->f, L->acc_dk[t]));
    L->dv[t] = pp_attn_store(L->f, L->acc_dv[t]);
}

// Engine cublas: the masked entries of P (and whole rows that see no key) become +0, since the
// device's P·V GEMM reads every entry of the block, as torch's bmm after a masked softmax does.
PP_HD static inline void pp_attn_t_unf_zero_masked(const pp_attn_launch *L, int64_t t)
{
    int64_t y = t % L->BK, b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t / L->BK, &b, &hh, &r, &x, &G) || y > pp_attn_jend(&G, x))
        L->SP[t] = 0.0f;
}

// ---------------------------------------------------------------------------------------------
// Runs and threads

// How many consecutive threads form one run of launch L: a row's keys (scores, dP) or columns
// (gathers, P·V, dq, dk/dv, the merges), whose index decoding a run shares; 1 for every other
// op. Runs start at multiples of the width.
PP_HD static inline int64_t pp_attn_run_width(const pp_attn_launch *L)
{
    switch (L->op) {
    case PP_AT_UNF_SCORES:
    case PP_AT_UNF_DP: return L->BK;
    case PP_AT_TRANSPOSE: return L->gS;
    case PP_AT_GATHER:
    case PP_AT_UNF_PV:
    case PP_AT_BWD_DQ:
    case PP_AT_BWD_DKV:
    case PP_AT_PLAIN_DKV:
    case PP_AT_CP_OUT:
    case PP_AT_CP_DQ:
    case PP_AT_CP_DKV: return L->d;
    default: return 1;
    }
}

// Thread t of launch L (the GPU's thread; a run of one lane).
PP_HD static inline void pp_attn_thread(const pp_attn_launch *L, int64_t t)
{
    switch (L->op) {
    case PP_AT_GATHER: pp_attn_r_gather(L, t, 1); break;
    case PP_AT_FILL0: L->dst[t] = 0.0f; break;
    case PP_AT_TRANSPOSE: pp_attn_r_transpose(L, t, 1); break;
    case PP_AT_UNF_SCORES: pp_attn_r_row_dots(L, t, 1, 0); break;
    case PP_AT_UNF_PB_ROW: pp_attn_t_unf_pb_row(L, t); break;
    case PP_AT_UNF_PB_BLOCK: pp_attn_t_unf_pb_block(L, t); break;
    case PP_AT_UNF_SOFTMAX: pp_attn_t_unf_softmax(L, t); break;
    case PP_AT_UNF_PV: pp_attn_r_unf_pv(L, t, 1); break;
    case PP_AT_FLASH_FWD: pp_attn_t_flash_fwd(L, t); break;
    case PP_AT_FLASH_BWD_ROW: pp_attn_t_flash_bwd_row(L, t); break;
    case PP_AT_UNF_DP: pp_attn_r_row_dots(L, t, 1, 1); break;
    case PP_AT_UNF_BWD_ROW: pp_attn_t_unf_bwd_row(L, t); break;
    case PP_AT_BWD_DQ: pp_attn_r_bwd_dq(L, t, 1); break;
    case PP_AT_BWD_DKV: pp_attn_r_bwd_dkv(L, t, 1); break;
    case PP_AT_PLAIN_DQ: pp_attn_t_plain_dq(L, t); break;
    case PP_AT_PLAIN_DKV: pp_attn_r_plain_dkv(L, t, 1); break;
    case PP_AT_CP_LSE: pp_attn_t_cp_lse(L, t); break;
    case PP_AT_CP_OUT: pp_attn_r_cp_out(L, t, 1); break;
    case PP_AT_CP_DQ: pp_attn_r_cp_dq(L, t, 1); break;
    case PP_AT_CP_DKV: pp_attn_r_cp_dkv(L, t, 1); break;
    case PP_AT_CP_FINAL_DQ: pp_attn_t_cp_final_dq(L, t); break;
    case PP_AT_CP_FINAL_DKV: pp_attn_t_cp_final_dkv(L, t); break;
    case PP_AT_UNF_ZERO_MASKED: pp_attn_t_unf_zero_masked(L, t); break;
    case PP_AT_SCALE: L->dst[t] = pp_attn_mul_store(L->f, L->gscale, L->src[t]); break;
    default: break;
    }
}

// Threads [t0, t0 + n) of launch L: within one run, or whole runs (t0, n multiples of the
// width); the same bits as pp_attn_thread on each, in lanes where the op has them.
PP_HD static inline void pp_attn_run1(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    switch (L->op) {
    case PP_AT_UNF_SCORES: pp_attn_r_row_dots(L, t0, n, 0); break;
    case PP_AT_UNF_DP: pp_attn_r_row_dots(L, t0, n, 1); break;
    case PP_AT_UNF_PV: pp_attn_r_unf_pv(L, t0, n); break;
    case PP_AT_BWD_DQ: pp_attn_r_bwd_dq(L, t0, n); break;
    case PP_AT_BWD_DKV: pp_attn_r_bwd_dkv(L, t0, n); break;
    case PP_AT_GATHER: pp_attn_r_gather(L, t0, n); break;
    case PP_AT_TRANSPOSE: pp_attn_r_transpose(L, t0, n); break;
    case PP_AT_PLAIN_DKV: pp_attn_r_plain_dkv(L, t0, n); break;
    case PP_AT_CP_OUT: pp_attn_r_cp_out(L, t0, n); break;
    case PP_AT_CP_DQ: pp_attn_r_cp_dq(L, t0, n); break;
    case PP_AT_CP_DKV: pp_attn_r_cp_dkv(L, t0, n); break;
    default:
        for (int64_t t = t0; t < t0 + n; t++)
            pp_attn_thread(L, t);
    }
}

PP_HD static inline void pp_attn_run(const pp_attn_launch *L, int64_t t0, int64_t n)
{
#ifndef __CUDA_ARCH__
    if (L->op == PP_AT_FLASH_FWD && pp_attn_fwd_rows(L)) {
        pp_attn_r_flash_fwd_rows(L, t0, n);
        return;
    }
    if (L->op == PP_AT_FLASH_BWD_ROW && pp_attn_bwd_pairs(L)) {
        pp_attn_r_flash_bwd_pairs(L, t0, n);
        return;
    }
    int dp = L->op == PP_AT_UNF_DP;
    if ((dp || L->op == PP_AT_UNF_SCORES) && t0 % L->BK == 0 && n % L->BK == 0 && pp_attn_row_dots_pairs(L, dp)) {
        pp_attn_r_row_dots_pairs(L, t0, n, dp);
        return;
    }
#endif
#ifndef __CUDA_ARCH__
    if ((L->op == PP_AT_BWD_DQ && pp_attn_dq_rows(L)) || (L->op == PP_AT_UNF_PV && pp_attn_unf_pv_rows(L))) {
        pp_attn_r_chain_rows(L, L->op == PP_AT_BWD_DQ, t0, n);
        return;
    }
#endif
    int64_t w = L->op == PP_AT_BWD_DKV ? n : pp_attn_run_width(L);  // dk/dv: whole keys grouped inside
    for (int64_t t = t0; t < t0 + n; t += w)
        pp_attn_run1(L, t, w < t0 + n - t ? w : t0 + n - t);
}

#endif
