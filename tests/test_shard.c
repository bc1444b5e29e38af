// test_shard.c — shards and merge (src/pipeline/shard.h, merge.h): the shard rule gives every
// task of a plan to exactly one shard, the same on every call, in contiguous slices of the
// (group, variant) order whose weights stay within W/N plus one unit; a shard's selection holds
// its tasks' dependencies; "I/N" is parsed strictly; the merge of N in-memory partials of a case
// is pp_run_case's result bit for bit (every comparison's statistics, exact sums, references,
// series) for N = 1..5; and merge refuses another precprobe version, another run, a missing
// shard (named), and a shard twice with different results.
#include "test_util.h"

#include "pipeline/merge.h"
#include "pipeline/merge_same.h"
#include "pipeline/run.h"
#include "pipeline/shard.h"
#include "pipeline/shard_run.h"

// Three formats (three groups), five variants, a pair across groups.
static const char case_text[] = "[case]\nname = \"shards\"\nop = \"gemm\"\nseed = 11\n"
                                "[op]\nbatch = 2\nm = 6\nn = 5\nk = 24\n"
                                "[variants.fp16-fp32acc]\nformat = \"fp16\"\naccumulate = \"fp32\"\n"
                                "[variants.bf16-fp32acc]\nformat = \"bf16\"\naccumulate = \"fp32\"\n"
                                "[variants.fp16-storage]\nformat = \"fp16\"\naccumulate = \"storage\"\n"
                                "[variants.bf16-storage]\nformat = \"bf16\"\naccumulate = \"storage\"\n"
                                "[variants.fp32-fp32acc]\nformat = \"fp32\"\naccumulate = \"fp32\"\n"
                                "[compare]\npairs = [[\"fp16-storage\", \"bf16-storage\"]]\n";

// The same with every GEMM dimension 8 times larger.
static const char big_case_text[] = "[case]\nname = \"shards\"\nop = \"gemm\"\nseed = 11\n"
                                    "[op]\nbatch = 2\nm = 48\nn = 40\nk = 192\n"
                                    "[variants.fp16-fp32acc]\nformat = \"fp16\"\naccumulate = \"fp32\"\n"
                                    "[variants.bf16-fp32acc]\nformat = \"bf16\"\naccumulate = \"fp32\"\n"
                                    "[variants.fp16-storage]\nformat = \"fp16\"\naccumulate = \"storage\"\n"
                                    "[variants.bf16-storage]\nformat = \"bf16\"\naccumulate = \"storage\"\n"
                                    "[variants.fp32-fp32acc]\nformat = \"fp32\"\naccumulate = \"fp32\"\n"
                                    "[compare]\npairs = [[\"fp16-storage\", \"bf16-storage\"]]\n";

static const pp_run_opts cpu_opts = {.device = "cpu", .threads = 1};

static void load(pp_case *c)
{
    pp_error err = {0};
    int rc = pp_case_parse(case_text, strlen(case_text), "shards.toml", c, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
}

static void shard_parse_is_strict(void **state)
{
    (void)state;
    int i = 0, n = 0;
    char why[200];
    assert_int_equal(pp_shard_parse("2/4", &i, &n, why, sizeof why), 0);
    assert_int_equal(i, 2);
    assert_int_equal(n, 4);
    assert_int_equal(pp_shard_parse("1/1", &i, &n, why, sizeof why), 0);
    const char *bad[] = {"0/4", "5/4", "4", "/4", "2/", "2/4x", " 2/4", "-1/4", "2/0", "a/b", "2//4", "1/1000001", ""};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        why[0] = '\0';
        assert_int_equal(pp_shard_parse(bad[k], &i, &n, why, sizeof why), -1);
        assert_true(why[0] != '\0');
    }
}

// The heaviest unit of the shard rule: a variant's tasks, the pairs it is the actual of, and, for
// the first variant of a group, the group's inputs and reference.
static long max_unit_weight(const pp_case *c, const pp_run_plan *plan)
{
    long max_unit = 0;
    for (int v = 0; v < c->n_variants; v++) {
        int first = 1;
        for (int u = 0; u < v; u++)
            first &= plan->group_of[u] != plan->group_of[v];
        long w = 0;
        for (int t = 0; t < plan->n_tasks; t++) {
            const pp_task *k = &plan->tasks[t];
            int mine = k->kind == PP_TASK_COMPARE_PAIR ? c->pairs[k->pair].actual == v
                     : k->kind == PP_TASK_INPUTS || k->kind == PP_TASK_REFERENCE ? first && k->group == plan->group_of[v]
                                                                                 : k->variant == v;
            w += mine ? pp_shard_task_weight(k) : 0;
        }
        max_unit = w > max_unit ? w : max_unit;
    }
    return max_unit;
}

static void every_task_has_one_shard_in_contiguous_balanced_slices(void **state)
{
    (void)state;
    pp_case c;
    load(&c);
    pp_run_plan plan;
    pp_error err = {0};
    assert_int_equal(pp_run_plan_make(&c, &cpu_opts, &plan, &err), PP_OK);
    assert_int_equal(plan.n_groups, 3);
    int *owner = calloc((size_t)plan.n_tasks, sizeof *owner), *again = calloc((size_t)plan.n_tasks, sizeof *again);
    unsigned char *owned = calloc((size_t)plan.n_tasks, 1), *selected = calloc((size_t)plan.n_tasks, 1);
    long total = 0, max_unit = 0;
    for (int t = 0; t < plan.n_tasks; t++)
        total += pp_shard_task_weight(&plan.tasks[t]);
    max_unit = max_unit_weight(&c, &plan);
    assert_true(max_unit < total / 2);
    for (int n = 1; n <= 8; n++) {
        assert_int_equal(pp_shard_owners(&plan, n, owner), 0);
        assert_int_equal(pp_shard_owners(&plan, n, again), 0);
        assert_memory_equal(owner, again, sizeof *owner * (size_t)plan.n_tasks);  // deterministic
        long covered = 0;
        for (int i = 1; i <= n; i++) {
            long w = pp_shard_select(&plan, i, n, owned, selected);
            assert_true(w >= 0);
            assert_true(w <= total / n + max_unit);  // balanced: a slice of W/N, give or take a unit
            for (int t = 0; t < plan.n_tasks; t++) {
                assert_int_equal(owned[t], owner[t] == i);
                covered += owned[t];
                if (selected[t])  // what a shard runs holds what each of its tasks reads
                    for (int d = 0; d < plan.tasks[t].n_deps; d++)
                        assert_true(selected[plan.tasks[t].deps[d]]);
                if (owned[t])
                    assert_true(selected[t]);
            }
        }
        assert_int_equal(covered, plan.n_tasks);  // every task exactly once (owner[] is a function)
        // contiguous: along (group, variant) the variants' shards never go down
        int last = 1;
        for (int g = 0; g < plan.n_groups; g++)
            for (int v = 0; v < c.n_variants; v++)
                for (int t = 0; t < plan.n_tasks; t++)
                    if (plan.group_of[v] == g && plan.tasks[t].kind == PP_TASK_VARIANT && plan.tasks[t].variant == v) {
                        assert_true(owner[t] >= last);
                        last = owner[t];
                    }
        if (n >= 2)
            assert_true(last > 1);  // the work is really cut
    }
    free(owner), free(again), free(owned), free(selected);
    pp_run_plan_free(&plan);
    pp_case_free(&c);
}

// Several plans (a sweep's points): every task of every plan once, contiguous in (point, group,
// variant) order, each shard within W/N plus a unit; one plan alone is pp_shard_owners.
static void the_rule_over_several_plans(void **state)
{
    (void)state;
    enum { POINTS = 3 };
    pp_case c[POINTS];
    pp_run_plan plans[POINTS];
    const pp_run_plan *ptrs[POINTS];
    int *owner[POINTS];
    pp_error err = {0};
    long total = 0;
    for (int k = 0; k < POINTS; k++) {
        load(&c[k]);
        assert_int_equal(pp_run_plan_make(&c[k], &cpu_opts, &plans[k], &err), PP_OK);
        ptrs[k] = &plans[k];
        owner[k] = calloc((size_t)plans[k].n_tasks, sizeof *owner[k]);
        for (int t = 0; t < plans[k].n_tasks; t++)
            total += pp_shard_task_weight(&plans[k].tasks[t]);
    }
    int *single = calloc((size_t)plans[0].n_tasks, sizeof *single);
    for (int n = 1; n <= 7; n++) {
        assert_int_equal(pp_shard_owners_multi(ptrs, 1, n, owner), 0);
        assert_int_equal(pp_shard_owners(&plans[0], n, single), 0);
        assert_memory_equal(owner[0], single, sizeof *single * (size_t)plans[0].n_tasks);
        assert_int_equal(pp_shard_owners_multi(ptrs, POINTS, n, owner), 0);
        long weight[8] = {0};
        int last = 1;
        for (int k = 0; k < POINTS; k++) {
            for (int t = 0; t < plans[k].n_tasks; t++) {
                assert_true(owner[k][t] >= 1 && owner[k][t] <= n);
                weight[owner[k][t]] += pp_shard_task_weight(&plans[k].tasks[t]);
            }
            for (int g = 0; g < plans[k].n_groups; g++)
                for (int v = 0; v < c[k].n_variants; v++)
                    for (int t = 0; t < plans[k].n_tasks; t++)
                        if (plans[k].group_of[v] == g && plans[k].tasks[t].kind == PP_TASK_VARIANT &&
                            plans[k].tasks[t].variant == v) {
                            assert_true(owner[k][t] >= last);
                            last = owner[k][t];
                        }
        }
        assert_int_equal(last, n);  // the last unit in the last shard: every shard reached
        for (int i = 1; i <= n; i++)
            assert_true(weight[i] <= total / n + max_unit_weight(&c[0], &plans[0]));  // W/N, give or take a unit
    }
    free(single);
    for (int k = 0; k < POINTS; k++) {
        free(owner[k]);
        pp_run_plan_free(&plans[k]);
        pp_case_free(&c[k]);
    }
}

// Points of different sizes weigh their size: three small points and one with 8 times every
// dimension (about 500 times the size proxy) in 2 shards: the small ones together in shard 1, the big one's
// units spread so that it reaches shard 2.
static void bigger_points_weigh_more(void **state)
{
    (void)state;
    pp_case c[4];
    pp_run_plan plans[4];
    const pp_run_plan *ptrs[4];
    int *owner[4];
    pp_error err = {0};
    for (int k = 0; k < 4; k++) {
        const char *t = k == 3 ? big_case_text : case_text;
        assert_int_equal(pp_case_parse(t, strlen(t), "sizes.toml", &c[k], &err), PP_OK);
        assert_int_equal(pp_run_plan_make(&c[k], &cpu_opts, &plans[k], &err), PP_OK);
        ptrs[k] = &plans[k];
        owner[k] = calloc((size_t)plans[k].n_tasks, sizeof *owner[k]);
    }
    assert_int_equal(pp_shard_owners_multi(ptrs, 4, 2, owner), 0);
    int big_in_2 = 0;
    for (int k = 0; k < 4; k++)
        for (int t = 0; t < plans[k].n_tasks; t++) {
            if (k < 3)
                assert_int_equal(owner[k][t], 1);
            else
                big_in_2 += owner[k][t] == 2;
        }
    assert_true(big_in_2 > 0);
    // with equal weights (no size) the 4 points would split 2 and 2: the small ones would not share
    for (int k = 0; k < 4; k++) {
        free(owner[k]);
        pp_run_plan_free(&plans[k]);
        pp_case_free(&c[k]);
    }
}

static void same_f64(double a, double b)
{
    assert_memory_equal(&a, &b, sizeof a);
}

// Two run results are the same run: comparisons (statistics, exact sums, axes), references,
// variants and series, bit for bit; created_utc may differ.
static void expect_same_result(const pp_run_result *a, const pp_run_result *b)
{
    assert_string_equal(a->case_name, b->case_name);
    assert_string_equal(a->device, b->device);
    assert_string_equal(a->case_text, b->case_text);
    assert_int_equal(a->n_comparisons, b->n_comparisons);
    for (int i = 0; i < a->n_comparisons; i++) {
        const pp_comparison *x = &a->comparisons[i], *y = &b->comparisons[i];
        assert_string_equal(x->variant, y->variant);
        assert_string_equal(x->tensor, y->tensor);
        assert_string_equal(x->against, y->against);
        assert_int_equal(x->stats.numel, y->stats.numel);
        assert_int_equal(x->stats.mismatched, y->stats.mismatched);
        same_f64(x->stats.abs_diff.value, y->stats.abs_diff.value);
        same_f64(x->stats.abs_err.value, y->stats.abs_err.value);
        same_f64(x->stats.ulp_err.value, y->stats.ulp_err.value);
        assert_memory_equal(x->stats.sum_abs.limb, y->stats.sum_abs.limb, sizeof x->stats.sum_abs.limb);
        assert_memory_equal(x->stats.sum_sq.limb, y->stats.sum_sq.limb, sizeof x->stats.sum_sq.limb);
        assert_memory_equal(x->stats.ulp_hist, y->stats.ulp_hist, sizeof x->stats.ulp_hist);
    }
    assert_int_equal(a->n_references, b->n_references);
    for (int i = 0; i < a->n_references; i++) {
        assert_string_equal(a->references[i].tensor, b->references[i].tensor);
        assert_string_equal(a->references[i].method, b->references[i].method);
        same_f64(a->references[i].error_bound, b->references[i].error_bound);
    }
    assert_int_equal(a->n_variants, b->n_variants);
    for (int v = 0; v < a->n_variants; v++) {
        assert_string_equal(a->variants[v].name, b->variants[v].name);
        assert_int_equal(a->variants[v].n_knobs, b->variants[v].n_knobs);
        assert_int_equal(a->variants[v].n_series, b->variants[v].n_series);
    }
}

static void run_shards(const pp_case *c, int n, pp_partial *parts)
{
    for (int i = 1; i <= n; i++) {
        pp_error err = {0};
        int rc = pp_run_shard(c, &cpu_opts, i, n, &parts[i - 1], &err);
        if (rc)
            fprintf(stderr, "  %s\n", err.msg);
        assert_int_equal(rc, PP_OK);
    }
}

static void merge_of_n_shards_is_the_run(void **state)
{
    (void)state;
    pp_case c;
    load(&c);
    pp_run_result whole;
    pp_error err = {0};
    assert_int_equal(pp_run_case(&c, &cpu_opts, &whole, &err), PP_OK);
    const char *names[5] = {"s1", "s2", "s3", "s4", "s5"};
    for (int n = 1; n <= 5; n++) {
        pp_partial parts[5];
        run_shards(&c, n, parts);
        pp_case mc;
        pp_run_result merged;
        int rc = pp_merge_partials(parts, names, n, &mc, &merged, &err);
        if (rc)
            fprintf(stderr, "  %s\n", err.msg);
        assert_int_equal(rc, PP_OK);
        expect_same_result(&whole, &merged);
        pp_run_result_free(&merged);
        pp_case_free(&mc);
        for (int i = 0; i < n; i++)
            pp_partial_free(&parts[i]);
    }
    pp_run_result_free(&whole);
    pp_case_free(&c);
}

static void expect_refused(pp_partial *parts, int n, const char *needle)
{
    const char *names[6] = {"p1", "p2", "p3", "p4", "p5", "p6"};
    pp_case mc;
    pp_run_result merged;
    pp_error err = {0};
    assert_int_equal(pp_merge_partials(parts, names, n, &mc, &merged, &err), PP_ERR_INPUT);
    if (!strstr(err.msg, needle))
        fprintf(stderr, "  message '%s' lacks '%s'\n", err.msg, needle);
    assert_non_null(strstr(err.msg, needle));
    pp_case_free(&mc);
    pp_run_result_free(&merged);
}

static void merge_refuses_what_is_not_one_run(void **state)
{
    (void)state;
    pp_case c;
    load(&c);
    pp_partial parts[4];
    run_shards(&c, 3, parts);
    // another precprobe version
    char keep[32];
    snprintf(keep, sizeof keep, "%s", parts[1].version);
    snprintf(parts[1].version, sizeof parts[1].version, "0.0-other");
    expect_refused(parts, 3, "p2 was written by precprobe 0.0-other");
    snprintf(parts[1].version, sizeof parts[1].version, "%s", keep);
    // another run (case text or options)
    parts[2].identity[0] = parts[2].identity[0] == 'a' ? 'b' : 'a';
    expect_refused(parts, 3, "are shards of different runs");
    parts[2].identity[0] = parts[0].identity[0];
    // a missing shard, named
    expect_refused(parts, 2, "1 of 3 shards missing: 3/3");
    // a shard twice: the same results are accepted, different ones refused
    pp_error err = {0};
    assert_int_equal(pp_run_shard(&c, &cpu_opts, 2, 3, &parts[3], &err), PP_OK);
    char why[256];
    assert_int_equal(pp_partial_same_results(&parts[1], &parts[3], why, sizeof why), 1);
    {
        const char *names[4] = {"p1", "p2", "p3", "p4"};
        pp_case mc;
        pp_run_result merged;
        assert_int_equal(pp_merge_partials(parts, names, 4, &mc, &merged, &err), PP_OK);
        pp_case_free(&mc);
        pp_run_result_free(&merged);
    }
    assert_true(parts[3].r.n_comparisons > 0);
    parts[3].r.comparisons[0].stats.sum_abs.limb[3] += 1;  // one bit of one exact sum
    assert_int_equal(pp_partial_same_results(&parts[1], &parts[3], why, sizeof why), 0);
    expect_refused(parts, 4, "shard 2/3 is given twice with different results: p2 and p4");
    for (int i = 0; i < 4; i++)
        pp_partial_free(&parts[i]);
    pp_case_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shard_parse_is_strict),
        cmocka_unit_test(every_task_has_one_shard_in_contiguous_balanced_slices),
        cmocka_unit_test(the_rule_over_several_plans),
        cmocka_unit_test(bigger_points_weigh_more),
        cmocka_unit_test(merge_of_n_shards_is_the_run),
        cmocka_unit_test(merge_refuses_what_is_not_one_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
