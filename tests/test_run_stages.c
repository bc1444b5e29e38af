// test_run_stages.c — the staged run (src/pipeline/plan.h): the plan lists the tasks a small
// case needs with stable ids and dependencies, the stages run by hand give what pp_run_case
// gives, and a slice of the plan (one comparison and what it depends on) computes that
// comparison bit for bit as the whole run does.
#include "test_util.h"

#include "core/statistic.h"
#include "pipeline/assemble.h"
#include "pipeline/compare.h"
#include "pipeline/run.h"

// Two fp16 variants and a bf16 one (two format groups), and a pair.
static const char case_text[] = "[case]\nname = \"stages\"\nop = \"gemm\"\nseed = 7\n"
                                "[op]\nbatch = 2\nm = 5\nn = 3\nk = 16\n"
                                "[variants.fp16-fp32acc]\nformat = \"fp16\"\naccumulate = \"fp32\"\n"
                                "[variants.fp16-storage]\nformat = \"fp16\"\naccumulate = \"storage\"\n"
                                "[variants.bf16-fp32acc]\nformat = \"bf16\"\naccumulate = \"fp32\"\n"
                                "[compare]\npairs = [[\"fp16-storage\", \"fp16-fp32acc\"]]\n";

static const pp_run_opts cpu_opts = {.device = "cpu", .threads = 1};

static void load(pp_case *c)
{
    pp_error err = {0};
    int rc = pp_case_parse(case_text, strlen(case_text), "stages.toml", c, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
}

static void expect_task(const pp_task *t, int id, pp_task_kind kind, int group, int variant, int pair, int slot,
                        int n_deps, int dep0, int dep1)
{
    assert_int_equal(t->id, id);
    assert_int_equal(t->kind, kind);
    assert_int_equal(t->group, group);
    assert_int_equal(t->variant, variant);
    assert_int_equal(t->pair, pair);
    assert_int_equal(t->slot, slot);
    assert_int_equal(t->n_deps, n_deps);
    if (n_deps > 0)
        assert_int_equal(t->deps[0], dep0);
    if (n_deps > 1)
        assert_int_equal(t->deps[1], dep1);
}

static void the_plan_lists_the_tasks(void **state)
{
    (void)state;
    pp_case c;
    load(&c);
    pp_run_plan plan;
    pp_error err = {0};
    assert_int_equal(pp_run_plan_make(&c, &cpu_opts, &plan, &err), PP_OK);
    assert_string_equal(plan.device, "cpu");
    // fp16 and bf16 round the inputs: a third group, binary32 and without variants, holds them
    // unrounded, and its reference is every variant's second (exact-original) comparison
    assert_int_equal(plan.n_groups, 3);
    assert_int_equal(plan.group_format[0], PP_FMT_FP16);
    assert_int_equal(plan.group_format[1], PP_FMT_BF16);
    assert_int_equal(plan.group_format[2], PP_FMT_FP32);
    assert_int_equal(plan.group_original[0], 2);
    assert_int_equal(plan.group_original[1], 2);
    assert_int_equal(plan.group_original[2], -1);
    assert_int_equal(plan.n_tasks, 16);
    const pp_task *t = plan.tasks;
    expect_task(&t[0], 0, PP_TASK_INPUTS, 0, -1, -1, -1, 0, 0, 0);
    expect_task(&t[1], 1, PP_TASK_REFERENCE, 0, -1, -1, -1, 1, 0, 0);
    expect_task(&t[2], 2, PP_TASK_INPUTS, 1, -1, -1, -1, 0, 0, 0);
    expect_task(&t[3], 3, PP_TASK_REFERENCE, 1, -1, -1, -1, 1, 2, 0);
    expect_task(&t[4], 4, PP_TASK_INPUTS, 2, -1, -1, -1, 0, 0, 0);
    expect_task(&t[5], 5, PP_TASK_REFERENCE, 2, -1, -1, -1, 1, 4, 0);
    expect_task(&t[6], 6, PP_TASK_VARIANT, 0, 0, -1, -1, 1, 0, 0);
    expect_task(&t[7], 7, PP_TASK_VARIANT, 0, 1, -1, -1, 1, 0, 0);
    expect_task(&t[8], 8, PP_TASK_VARIANT, 1, 2, -1, -1, 1, 2, 0);
    expect_task(&t[9], 9, PP_TASK_COMPARE, 0, 0, -1, 0, 2, 6, 1);
    expect_task(&t[10], 10, PP_TASK_COMPARE, 0, 0, -1, 0, 2, 6, 5);
    expect_task(&t[11], 11, PP_TASK_COMPARE, 0, 1, -1, 0, 2, 7, 1);
    expect_task(&t[12], 12, PP_TASK_COMPARE, 0, 1, -1, 0, 2, 7, 5);
    expect_task(&t[13], 13, PP_TASK_COMPARE, 1, 2, -1, 0, 2, 8, 3);
    expect_task(&t[14], 14, PP_TASK_COMPARE, 1, 2, -1, 0, 2, 8, 5);
    expect_task(&t[15], 15, PP_TASK_COMPARE_PAIR, -1, -1, 0, 0, 2, 7, 6);
    for (int i = 9; i < 15; i++)
        assert_int_equal(t[i].second, (i - 9) % 2);
    assert_string_equal(pp_task_kind_name(t[15].kind), "compare-pair");
    // a slice: the pair's comparison needs both fp16 variants, their inputs, no reference
    unsigned char sel[16] = {0};
    sel[15] = 1;
    pp_run_plan_close(&plan, sel);
    const unsigned char want[16] = {1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1};
    assert_memory_equal(sel, want, sizeof want);
    // the plan is a function of the case and the options: made again, the same tasks
    pp_run_plan again;
    assert_int_equal(pp_run_plan_make(&c, &cpu_opts, &again, &err), PP_OK);
    assert_int_equal(again.n_tasks, plan.n_tasks);
    assert_memory_equal(again.tasks, plan.tasks, sizeof *plan.tasks * (size_t)plan.n_tasks);
    pp_run_plan_free(&again);
    pp_run_plan_free(&plan);
    // an unknown device fails when planning
    pp_run_opts bad = cpu_opts;
    bad.device = "tpu";
    assert_int_equal(pp_run_plan_make(&c, &bad, &plan, &err), PP_ERR_INPUT);
    pp_run_plan_free(&plan);
    pp_case_free(&c);
}

// The same comparison, bit for bit: names, counts and every statistic of the table.
static void expect_same_comparison(const pp_comparison *a, const pp_comparison *b)
{
    assert_string_equal(a->variant, b->variant);
    assert_string_equal(a->tensor, b->tensor);
    assert_string_equal(a->against, b->against);
    assert_int_equal(a->stats.numel, b->stats.numel);
    assert_int_equal(a->stats.mismatched, b->stats.mismatched);
    for (int s = 0; s < pp_statistic_count(); s++) {
        double x = pp_statistic_at(s)->value(&a->stats), y = pp_statistic_at(s)->value(&b->stats);
        assert_memory_equal(&x, &y, sizeof x);
    }
    assert_memory_equal(a->stats.ulp_hist, b->stats.ulp_hist, sizeof a->stats.ulp_hist);
    assert_int_equal(a->axes.n_pos, b->axes.n_pos);
}

static void stages_by_hand_equal_run_case(void **state)
{
    (void)state;
    pp_case c;
    load(&c);
    pp_error err = {0};
    pp_run_result whole;
    assert_int_equal(pp_run_case(&c, &cpu_opts, &whole, &err), PP_OK);
    assert_int_equal(whole.n_comparisons, 7);  // each variant against both references, and the pair
    assert_string_equal(whole.comparisons[1].against, PP_AGAINST_ORIGINAL);
    assert_int_equal(whole.n_verdicts, 0);  // the gate is the caller's

    pp_run_plan plan;
    pp_run_products products;
    pp_comparison *cmps;
    int n;
    pp_run_result staged;
    assert_int_equal(pp_run_plan_make(&c, &cpu_opts, &plan, &err), PP_OK);
    assert_int_equal(pp_run_products_make(&plan, &products, &err), PP_OK);
    assert_int_equal(pp_run_execute(&plan, &cpu_opts, NULL, &products, &err), PP_OK);
    assert_int_equal(pp_run_compare(&plan, &products, NULL, &cmps, &n, &err), PP_OK);
    assert_int_equal(n, 7);
    assert_int_equal(pp_run_assemble(&plan, &cpu_opts, &products, cmps, n, &staged, &err), PP_OK);
    pp_run_products_free(&plan, &products);
    assert_int_equal(staged.n_comparisons, whole.n_comparisons);
    for (int i = 0; i < whole.n_comparisons; i++)
        expect_same_comparison(&staged.comparisons[i], &whole.comparisons[i]);
    assert_int_equal(staged.n_variants, 3);
    assert_string_equal(staged.variants[2].name, "bf16-fp32acc");
    assert_string_equal(staged.variants[2].knobs[0].value, "bf16");
    assert_int_equal(staged.n_references, 1);
    assert_memory_equal(&staged.references[0], &whole.references[0], sizeof staged.references[0]);
    assert_string_equal(staged.device, whole.device);

    // a shard: only the comparison of fp16-storage with its reference (task 11) and what it needs
    unsigned char sel[16] = {0};
    sel[11] = 1;
    pp_run_plan_close(&plan, sel);
    assert_int_equal(pp_run_products_make(&plan, &products, &err), PP_OK);
    assert_int_equal(pp_run_execute(&plan, &cpu_opts, sel, &products, &err), PP_OK);
    assert_null(products.variants[0].outs[0].data);  // not in the slice: not run
    assert_int_equal(pp_run_compare(&plan, &products, sel, &cmps, &n, &err), PP_OK);
    assert_int_equal(n, 1);
    expect_same_comparison(&cmps[0], &whole.comparisons[2]);
    pp_comparisons_free(cmps, n);
    pp_run_products_free(&plan, &products);

    pp_run_plan_free(&plan);
    pp_run_result_free(&staged);
    pp_run_result_free(&whole);
    pp_case_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_plan_lists_the_tasks),
        cmocka_unit_test(stages_by_hand_equal_run_case),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
