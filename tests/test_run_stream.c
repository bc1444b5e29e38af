// test_run_stream.c — the interleaved run (src/pipeline/stream.h): each product (a group's inputs,
// its reference, a variant's outputs) is freed right after the last task that reads it, each
// comparison runs as soon as its tensors exist and while they still do, nothing is freed when a
// later stage needs it (--save-tensors, --orders), and the comparisons are bit for bit those of
// the stages run one after the other. Memory is judged by what is freed when, never by RSS.
#include "test_util.h"

#include "core/statistic.h"
#include "pipeline/compare.h"
#include "pipeline/stream.h"

// Two fp16 variants and a bf16 one (two format groups), and a pair: the plan of
// test_run_stages.c (0 inputs fp16, 1 its reference, 2 inputs bf16, 3 its reference, 4-6 the
// variants, 7-9 their comparisons with the reference, 10 the pair 5 against 4).
static const char case_text[] = "[case]\nname = \"stream\"\nop = \"gemm\"\nseed = 7\n"
                                "[op]\nbatch = 2\nm = 5\nn = 3\nk = 16\n"
                                "[variants.fp16-fp32acc]\nformat = \"fp16\"\naccumulate = \"fp32\"\n"
                                "[variants.fp16-storage]\nformat = \"fp16\"\naccumulate = \"storage\"\n"
                                "[variants.bf16-fp32acc]\nformat = \"bf16\"\naccumulate = \"fp32\"\n"
                                "[compare]\npairs = [[\"fp16-storage\", \"fp16-fp32acc\"]]\n";

static const pp_run_opts cpu_opts = {.device = "cpu", .threads = 1};

#define MAX_EVENTS 64

// What the watch saw, and the products it inspects at each event.
typedef struct watched {
    const pp_run_plan *plan;
    const pp_run_products *p;
    int n;
    int kind[MAX_EVENTS], task[MAX_EVENTS];
} watched;

// Whether the tensors task t produced are held (any of them).
static int held(const watched *w, int t)
{
    const pp_task *k = &w->plan->tasks[t];
    const pp_op *op = w->plan->c->op;
    int any = 0;
    for (int i = 0; i < op->n_inputs && k->kind == PP_TASK_INPUTS; i++)
        any |= w->p->groups[k->group].inputs[i].data != NULL;
    for (int i = 0; i < op->n_outputs && k->kind == PP_TASK_REFERENCE; i++)
        any |= w->p->groups[k->group].refs[i].data != NULL;
    for (int i = 0; i < op->n_outputs && k->kind == PP_TASK_VARIANT; i++)
        any |= w->p->variants[k->variant].outs[i].data != NULL;
    return any;
}

static void on_event(void *ctx, pp_stream_event_kind kind, int task)
{
    watched *w = ctx;
    assert_true(w->n < MAX_EVENTS);
    w->kind[w->n] = kind;
    w->task[w->n++] = task;
    const pp_task *t = &w->plan->tasks[task];
    if (kind == PP_STREAM_RELEASED)
        assert_false(held(w, task));  // really freed, not just announced
    else
        for (int d = 0; d < t->n_deps; d++)
            assert_true(held(w, t->deps[d]));  // a task ran on tensors that were still there
}

static void load(pp_case *c)
{
    pp_error err = {0};
    int rc = pp_case_parse(case_text, strlen(case_text), "stream.toml", c, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
}

static void expect_same_comparison(const pp_comparison *a, const pp_comparison *b)
{
    assert_string_equal(a->variant, b->variant);
    assert_string_equal(a->tensor, b->tensor);
    assert_string_equal(a->against, b->against);
    assert_int_equal(a->stats.numel, b->stats.numel);
    for (int s = 0; s < pp_statistic_count(); s++) {
        double x = pp_statistic_at(s)->value(&a->stats), y = pp_statistic_at(s)->value(&b->stats);
        assert_memory_equal(&x, &y, sizeof x);
    }
    assert_memory_equal(a->stats.ulp_hist, b->stats.ulp_hist, sizeof a->stats.ulp_hist);
    assert_int_equal(a->axes.n_pos, b->axes.n_pos);
}

// Runs the stream under o, recording into *w; returns the comparisons (*n).
static pp_comparison *stream(const pp_case *c, const pp_run_opts *o, pp_run_plan *plan, pp_run_products *p,
                             watched *w, int *n)
{
    pp_error err = {0};
    assert_int_equal(pp_run_plan_make(c, o, plan, &err), PP_OK);
    assert_int_equal(plan->n_tasks, 16);
    assert_int_equal(pp_run_products_make(plan, p, &err), PP_OK);
    memset(w, 0, sizeof *w);
    w->plan = plan;
    w->p = p;
    pp_stream_watch watch = {on_event, w};
    pp_comparison *cmps;
    assert_int_equal(pp_run_stream(plan, o, p, &watch, &cmps, n, &err), PP_OK);
    return cmps;
}

static void stream_frees_each_product_after_its_last_reader(void **state)
{
    (void)state;
    pp_case c;
    load(&c);
    pp_run_plan plan;
    pp_run_products p;
    watched w;
    int n;
    pp_comparison *cmps = stream(&c, &cpu_opts, &plan, &p, &w, &n);
    // Comparisons as soon as their tensors exist: the fp16 pair (15) before the bf16 variant (8)
    // runs, so the fp16 inputs (0), reference (1) and both fp16 variants' outputs (6, 7) are gone
    // by then; each product the moment its last reader ran. The binary32 group's inputs (4) go
    // once its reference (5) ran; that reference, every variant's second comparison's (10, 12,
    // 14), once the last of them ran.
    enum { R = PP_STREAM_RAN, F = PP_STREAM_RELEASED };
    const int kind[] = {R, R, R, R, R, R, F, R, R, R, R, F, R, F, R, R, F, F, R, F, R, F, R, F, F};
    const int task[] = {0, 1, 2, 3, 4, 5, 4, 6, 9, 10, 7, 0, 11, 1, 12, 15, 7, 6, 8, 2, 13, 3, 14, 8, 5};
    int expected = (int)(sizeof task / sizeof task[0]);
    for (int i = 0; i < w.n && i < expected; i++)
        if (w.kind[i] != kind[i] || w.task[i] != task[i])
            fail_msg("event %d: %s of task %d, expected %s of task %d", i, w.kind[i] == R ? "ran" : "released",
                     w.task[i], kind[i] == R ? "ran" : "released", task[i]);
    assert_int_equal(w.n, expected);
    // what the later stages read is kept: the series and each reference's method and bound
    assert_true(p.groups[0].info[0].method[0] != '\0');
    assert_true(p.groups[1].info[0].method[0] != '\0');

    // the same comparisons, in the same order and bits, as the stages one after the other
    pp_run_products q;
    pp_comparison *staged;
    int n_staged;
    pp_error err = {0};
    assert_int_equal(pp_run_products_make(&plan, &q, &err), PP_OK);
    assert_int_equal(pp_run_execute(&plan, &cpu_opts, NULL, &q, &err), PP_OK);
    assert_int_equal(pp_run_compare(&plan, &q, NULL, &staged, &n_staged, &err), PP_OK);
    assert_int_equal(n, 7);
    assert_int_equal(n_staged, n);
    for (int i = 0; i < n; i++)
        expect_same_comparison(&cmps[i], &staged[i]);
    assert_non_null(q.variants[0].outs[0].data);  // the stages alone free nothing (shards read them)
    pp_comparisons_free(staged, n_staged);
    pp_run_products_free(&plan, &q);

    pp_comparisons_free(cmps, n);
    pp_run_products_free(&plan, &p);
    pp_run_plan_free(&plan);
    pp_case_free(&c);
}

// --save-tensors (assemble moves the tensors into the report) and --orders (the band re-runs
// the variants on the inputs): every task still runs, nothing is freed before the end.
static void stream_keeps_what_a_later_stage_reads(void **state)
{
    (void)state;
    pp_case c;
    load(&c);
    pp_run_opts keep[2] = {cpu_opts, cpu_opts};
    keep[0].save_tensors = 1;
    keep[1].orders = 2;
    for (int k = 0; k < 2; k++) {
        pp_run_plan plan;
        pp_run_products p;
        watched w;
        int n;
        pp_comparison *cmps = stream(&c, &keep[k], &plan, &p, &w, &n);
        assert_int_equal(n, 7);
        assert_int_equal(w.n, plan.n_tasks);
        for (int i = 0; i < w.n; i++)
            assert_int_equal(w.kind[i], PP_STREAM_RAN);
        for (int t = 0; t < 9; t++)  // inputs, references, variants
            assert_true(held(&w, t));
        pp_comparisons_free(cmps, n);
        pp_run_products_free(&plan, &p);
        pp_run_plan_free(&plan);
    }
    pp_case_free(&c);
}

// The comparisons that become ready together run on the worker threads (stream.c,
// compare_ready): the same comparisons, bits and events, in the same order, at any thread count.
static void stream_same_at_any_thread_count(void **state)
{
    (void)state;
    pp_case c;
    load(&c);
    pp_run_plan plan1;
    pp_run_products p1;
    watched w1;
    int n1;
    pp_comparison *one = stream(&c, &cpu_opts, &plan1, &p1, &w1, &n1);
    const int threads[] = {2, 3, 8};
    for (int k = 0; k < 3; k++) {
        pp_run_opts o = cpu_opts;
        o.threads = threads[k];
        pp_run_plan plan;
        pp_run_products p;
        watched w;
        int n;
        pp_comparison *cmps = stream(&c, &o, &plan, &p, &w, &n);
        assert_int_equal(plan.threads, threads[k]);
        assert_int_equal(n, n1);
        for (int i = 0; i < n; i++)
            expect_same_comparison(&cmps[i], &one[i]);
        assert_int_equal(w.n, w1.n);
        for (int i = 0; i < w.n; i++) {
            assert_int_equal(w.kind[i], w1.kind[i]);
            assert_int_equal(w.task[i], w1.task[i]);
        }
        pp_comparisons_free(cmps, n);
        pp_run_products_free(&plan, &p);
        pp_run_plan_free(&plan);
    }
    pp_comparisons_free(one, n1);
    pp_run_products_free(&plan1, &p1);
    pp_run_plan_free(&plan1);
    pp_case_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stream_frees_each_product_after_its_last_reader),
        cmocka_unit_test(stream_keeps_what_a_later_stage_reads),
        cmocka_unit_test(stream_same_at_any_thread_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
