// inputs.c — host-side random input tensors: one pure function per element (pp_inputs_element),
// rounded to the tensor's format; normals drawn side by side with the same bits; large tensors
// split across threads by contiguous ranges.
#include "pipeline/inputs.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <unistd.h>

#include "cpu/reject_lanes.h"
#include "format.h"
#include "random_dist.h"

// ---------------------------------------------------------------------------------------------
// One element

int pp_dist_check(const pp_dist *d, pp_error *err)
{
    if (!d)
        return pp_fail(err, PP_ERR_INPUT, "inputs: no distribution given");
    if (d->n_axis_scale < 0 || d->n_axis_scale > PP_DIST_MAX_AXIS_SCALE)
        return pp_fail(err, PP_ERR_INPUT, "inputs: axis_scale needs 1 to %d values", PP_DIST_MAX_AXIS_SCALE);
    for (int j = 0; j < d->n_axis_scale; j++)
        if (!isfinite(d->axis_scale[j]))
            return pp_fail(err, PP_ERR_INPUT, "inputs: axis_scale values must be finite");
    switch (d->kind) {
    case PP_DIST_NORMAL:
        if (!isfinite(d->mean) || !isfinite(d->std))
            return pp_fail(err, PP_ERR_INPUT, "inputs: normal distribution needs finite mean and std "
                           "(got mean %.17g, std %.17g)", d->mean, d->std);
        if (d->std < 0.0)
            return pp_fail(err, PP_ERR_INPUT, "inputs: normal distribution needs std >= 0 (got %.17g)",
                           d->std);
        return PP_OK;
    case PP_DIST_UNIFORM:
        if (!isfinite(d->low) || !isfinite(d->high))
            return pp_fail(err, PP_ERR_INPUT, "inputs: uniform distribution needs finite low and high "
                           "(got low %.17g, high %.17g)", d->low, d->high);
        if (d->low > d->high)
            return pp_fail(err, PP_ERR_INPUT, "inputs: uniform distribution needs low <= high "
                           "(got low %.17g, high %.17g)", d->low, d->high);
        return PP_OK;
    }
    return pp_fail(err, PP_ERR_INPUT, "inputs: unknown distribution kind %d", (int)d->kind);
}

// A normal distribution's value at the standard normal z (pp_inputs_element's, and the fill's).
static double normal_of(const pp_dist *d, double z)
{
    return d->mean + d->std * z;
}

double pp_inputs_element(const pp_dist *d, uint64_t seed, uint32_t tensor_id, int64_t i)
{
    uint64_t idx = (uint64_t)i;
    if (d->kind == PP_DIST_NORMAL)
        return normal_of(d, pp_rand_normal(seed, tensor_id, idx));

    double u = pp_rand_uniform01(seed, tensor_id, idx);
    double width = d->high - d->low;
    double x;
    if (isfinite(width)) {
        x = d->low + width * u;
    } else {
        // high − low overflows only when high > 0 > low and both have magnitude >= 2^970 (half
        // an ulp of DBL_MAX): halving them is exact, and the halved width cannot overflow.
        x = 2.0 * (0.5 * d->low + (0.5 * d->high - 0.5 * d->low) * u);
    }
    // low + width·U with U < 1 is in [low, high] before rounding; rounding is monotone, so the
    // clamp only undoes the case where RN(high − low) rounded up.
    if (x < d->low)
        x = d->low;
    if (x > d->high)
        x = d->high;
    return x;
}

// ---------------------------------------------------------------------------------------------
// A whole tensor

typedef struct fill_job {
    double *data;
    int64_t begin, end;
    pp_format_id format;
    const pp_dist *dist;
    uint64_t seed;
    uint32_t tensor_id;
    int64_t axis_stride, axis_extent;  // for the axis scale: j = (i / stride) % extent
} fill_job;

// x (pp_inputs_element's value of element i) scaled by its axis scale, rounded to the format.
static void fill_store(const fill_job *j, int64_t i, double x)
{
    if (j->dist->n_axis_scale)
        x *= j->dist->axis_scale[(i / j->axis_stride) % j->axis_extent];
    j->data[i] = pp_round(j->format, x, PP_RND_NE, 0);
}

// A normal distribution's elements PP_RAND_BATCH_MAX at a time through pp_rand_normal_range
// (kernels/random_lanes.h: the polar attempts side by side, this CPU's widest lanes), whose z[k] is
// pp_rand_normal(seed, tensor_id, i) bit for bit, so each element is pp_inputs_element's (the
// same normal_of); other distributions element by element.
static void fill_range(const fill_job *j)
{
    if (j->dist->kind != PP_DIST_NORMAL) {
        for (int64_t i = j->begin; i < j->end; i++)
            fill_store(j, i, pp_inputs_element(j->dist, j->seed, j->tensor_id, i));
        return;
    }
    const pp_rand_lanes_fns fns = pp_rand_lanes_fns_for(PP_ISA_AUTO);
    double z[PP_RAND_BATCH_MAX];
    for (int64_t i0 = j->begin; i0 < j->end; i0 += PP_RAND_BATCH_MAX) {
        int n = j->end - i0 < PP_RAND_BATCH_MAX ? (int)(j->end - i0) : PP_RAND_BATCH_MAX;
        pp_rand_normal_range(j->seed, j->tensor_id, i0, n, fns, z);
        for (int k = 0; k < n; k++)
            fill_store(j, i0 + k, normal_of(j->dist, z[k]));
    }
}

static void *fill_thread(void *arg)
{
    fill_range((const fill_job *)arg);
    return NULL;
}

// Below this many elements one thread is faster than starting others (~30 ns per element).
#define PP_INPUTS_PARALLEL_MIN ((int64_t)1 << 17)
#define PP_INPUTS_MAX_THREADS 64

int pp_inputs_fill(pp_tensor *t, const pp_dist *d, uint64_t seed, uint32_t tensor_id, pp_error *err)
{
    if (!t)
        return pp_fail(err, PP_ERR_INPUT, "inputs: no tensor given");
    if ((unsigned)t->format >= (unsigned)PP_FMT_COUNT)
        return pp_fail(err, PP_ERR_INPUT, "inputs: tensor has unknown format %d", (int)t->format);
    if (t->numel < 0 || (t->numel > 0 && !t->data))
        return pp_fail(err, PP_ERR_INPUT, "inputs: tensor is not allocated");
    int rc = pp_dist_check(d, err);
    if (rc != PP_OK)
        return rc;
    int64_t stride = 1, extent = 1;
    if (d->n_axis_scale) {
        if (d->axis < 0 || d->axis >= t->ndim || t->shape[d->axis] != d->n_axis_scale)
            return pp_fail(err, PP_ERR_INPUT, "inputs: axis_scale has %d values, but axis %d of the %d-D input has %lld",
                           d->n_axis_scale, d->axis, t->ndim,
                           (long long)(d->axis >= 0 && d->axis < t->ndim ? t->shape[d->axis] : 0));
        for (int k = d->axis + 1; k < t->ndim; k++)
            stride *= t->shape[k];
        extent = t->shape[d->axis];
    }

    int64_t n = t->numel;
    long ncpu = n >= PP_INPUTS_PARALLEL_MIN ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
    int nthreads = ncpu < 1 ? 1 : ncpu > PP_INPUTS_MAX_THREADS ? PP_INPUTS_MAX_THREADS : (int)ncpu;

    fill_job jobs[PP_INPUTS_MAX_THREADS];
    pthread_t tid[PP_INPUTS_MAX_THREADS];
    int started[PP_INPUTS_MAX_THREADS];
    for (int k = 0; k < nthreads; k++) {
        jobs[k] = (fill_job){t->data, n / nthreads * k + (k < n % nthreads ? k : n % nthreads), 0,
                             t->format, d, seed, tensor_id, stride, extent};
        jobs[k].end = jobs[k].begin + n / nthreads + (k < n % nthreads ? 1 : 0);
    }
    // Job 0 runs on this thread; a job whose thread fails to start runs here too.
    for (int k = 1; k < nthreads; k++)
        started[k] = pthread_create(&tid[k], NULL, fill_thread, &jobs[k]) == 0;
    fill_range(&jobs[0]);
    for (int k = 1; k < nthreads; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            fill_range(&jobs[k]);
    }
    return PP_OK;
}
