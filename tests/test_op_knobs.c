// test_op_knobs.c — op knowledge lives in the op row: every choice knob's values map to enums by
// name (a reordered values list keeps its meaning), the row's hooks answer what generic code used
// to work out from knob names, knob-combination errors carry FILE:LINE, and no generic source file
// (src/pipeline, src/core, src/report, src/cli) names an operation's knob or knob value.
// Run from the repository root (tools/run-tests.sh does).
#include "test_util.h"

#include <ctype.h>
#include <dirent.h>

#include "ops/op.h"
#include "pipeline/case.h"

// Every value of every choice knob has a meaning, and every meaning names an allowed value.
static void test_every_value_has_a_meaning(void **state)
{
    (void)state;
    for (int i = 0; i < pp_op_count(); i++) {
        const pp_op *op = pp_op_at(i);
        for (int k = 0; k < op->n_knobs; k++) {
            const pp_knob_def *knob = &op->knobs[k];
            if (!knob->values)
                continue;
            if (!knob->meanings) {
                fprintf(stderr, "  %s: knob %s has no meanings\n", op->name, knob->name);
                fail();
            }
            for (int v = 0; knob->values[v]; v++)
                if (pp_knob_id(knob, v) < 0) {
                    fprintf(stderr, "  %s: knob %s: value '%s' has no meaning\n", op->name, knob->name,
                            knob->values[v]);
                    fail();
                }
            for (int m = 0; knob->meanings[m].value; m++)
                if (pp_choice_index(knob->values, knob->meanings[m].value) < 0) {
                    fprintf(stderr, "  %s: knob %s: meaning of '%s', not a value\n", op->name, knob->name,
                            knob->meanings[m].value);
                    fail();
                }
        }
    }
}

// The same meanings under two orders of the values list: each name keeps its enum.
static void test_reordered_values_keep_their_meaning(void **state)
{
    (void)state;
    static const pp_knob_meaning ids[] = {{"fp32", 10}, {"storage", 20}, {NULL, 0}};
    static const char *const ab[] = {"fp32", "storage", NULL}, *const ba[] = {"storage", "fp32", NULL};
    const pp_knob_def k_ab = {"accumulate", ab, "fp32", "", .meanings = ids};
    const pp_knob_def k_ba = {"accumulate", ba, "fp32", "", .meanings = ids};
    const char *names[] = {"fp32", "storage"};
    for (int i = 0; i < 2; i++) {
        int in_ab = pp_knob_value_index(&k_ab, names[i]), in_ba = pp_knob_value_index(&k_ba, names[i]);
        assert_int_not_equal(in_ab, in_ba);  // a different stored index ...
        assert_int_equal(pp_knob_id(&k_ab, in_ab), pp_knob_id(&k_ba, in_ba));  // ... the same meaning
    }
    assert_int_equal(pp_knob_id(&k_ab, pp_knob_value_index(&k_ab, "storage")), 20);
    // and the shipped rows: attention's format "fp32" is PP_FMT_FP32 wherever it stands in the list
    const pp_op *attn = pp_op_find("attention");
    const pp_knob_def *f = &attn->knobs[pp_op_knob_index(attn, "format")];
    assert_int_equal(pp_knob_id(f, pp_knob_value_index(f, "fp32")), PP_FMT_FP32);
    assert_int_equal(pp_knob_id(f, pp_knob_value_index(f, "bf16")), PP_FMT_BF16);
}

// A storage-format knob takes torch's spellings and stores the format's own value, so variants
// named from a [matrix] and reports are the same whichever spelling the case uses; other knobs
// and non-torch spellings are not widened.
static void test_format_knobs_take_torch_names(void **state)
{
    (void)state;
    const pp_op *attn = pp_op_find("attention");
    const pp_knob_def *f = &attn->knobs[pp_op_knob_index(attn, "format")];
    int bf16 = pp_knob_value_index(f, "bf16"), fp16 = pp_knob_value_index(f, "fp16");
    int fp32 = pp_knob_value_index(f, "fp32");
    assert_true(bf16 >= 0 && fp16 >= 0 && fp32 >= 0);
    assert_int_equal(pp_knob_value_index(f, "bfloat16"), bf16);
    assert_int_equal(pp_knob_value_index(f, "torch.bfloat16"), bf16);
    assert_int_equal(pp_knob_value_index(f, "float16"), fp16);
    assert_int_equal(pp_knob_value_index(f, "torch.half"), fp16);
    assert_int_equal(pp_knob_value_index(f, "torch.float32"), fp32);
    assert_int_equal(pp_knob_value_index(f, "torch.bf16"), -1);     // no torch dtype
    assert_int_equal(pp_knob_value_index(f, "torch.float64"), -1);  // a format, not a value here
    assert_int_equal(pp_knob_value_index(f, "Torch.bfloat16"), -1);
    const pp_knob_def *acc = &attn->knobs[pp_op_knob_index(attn, "accumulate")];
    assert_int_equal(pp_knob_value_index(acc, "float32"), -1);  // not a format knob
    const pp_op *adamw = pp_op_find("adamw");
    const pp_knob_def *pf = &adamw->knobs[pp_op_knob_index(adamw, "param_format")];
    assert_int_equal(pp_knob_value_index(pf, "torch.bfloat16"), pp_knob_value_index(pf, "bf16"));
    // and the plain lookup the CLI's flags use
    pp_format_id id = PP_FMT_FP64;
    assert_int_equal(pp_format_from_name("torch.float8_e4m3fn", &id), 0);
    assert_int_equal(id, PP_FMT_E4M3);
    assert_int_equal(pp_format_from_name("torch.bfloat16", &id), 0);
    assert_int_equal(id, PP_FMT_BF16);
    assert_int_equal(pp_format_from_name("torch.", &id), -1);
    assert_int_equal(pp_format_from_name("torch.fp16", &id), -1);
}

// The knobs of op as the defaults with the named knob set to value (its text).
static pp_op_knobs knobs_with(const pp_op *op, const char *name, const char *value)
{
    pp_op_knobs k;
    memset(&k, 0, sizeof k);
    for (int i = 0; i < op->n_knobs; i++)
        k.v[i] = pp_knob_value_index(&op->knobs[i], op->knobs[i].def);
    int i = pp_op_knob_index(op, name);
    assert_true(i >= 0);
    k.v[i] = pp_knob_value_index(&op->knobs[i], value);
    assert_true(k.v[i] >= 0);
    return k;
}

static void test_row_hooks(void **state)
{
    (void)state;
    const pp_op *attn = pp_op_find("attention"), *gemm = pp_op_find("gemm"), *adamw = pp_op_find("adamw");
    pp_op_params p;
    memset(&p, 0, sizeof p);
    // view geometry: the larger world of the pair; 0 for ops whose variants are not split
    pp_op_knobs w2 = knobs_with(attn, "cp_world", "2"), w4 = knobs_with(attn, "cp_world", "4");
    assert_int_equal(pp_op_view_world(attn, &p, &w2, &w4), 4);
    assert_int_equal(pp_op_view_world(attn, &p, &w4, &w2), 4);
    pp_op_knobs g = knobs_with(gemm, "format", "bf16");
    assert_int_equal(pp_op_view_world(gemm, &p, &g, &g), 0);
    // the chunk map, from knob texts as a stored report holds them
    const pp_seq_chunking *ch = pp_op_chunking("attention");
    assert_non_null(ch);
    pp_knob_setting s[2] = {{"format", "bf16"}, {"cp_world", "4"}};
    assert_int_equal(ch->n_chunks(s, 2), 8);
    assert_int_equal(ch->owner_of(0, 8), 0);
    assert_int_equal(ch->owner_of(5, 8), 2);  // rank r holds chunks r and 2W-1-r
    assert_int_equal(ch->owner_of(7, 8), 0);
    snprintf(s[1].value, sizeof s[1].value, "1");
    assert_true(ch->n_chunks(s, 2) < 2);
    assert_null(pp_op_chunking("gemm"));
    assert_null(pp_op_chunking("no-such-op"));
    // the vendor note, from knob texts
    pp_variant_result vr;
    memset(&vr, 0, sizeof vr);
    vr.n_knobs = 1;
    snprintf(vr.knobs[0].name, sizeof vr.knobs[0].name, "engine");
    snprintf(vr.knobs[0].value, sizeof vr.knobs[0].value, "cublas");
    assert_non_null(pp_op_vendor_note(gemm, &vr));
    assert_non_null(pp_op_vendor_note(attn, &vr));
    assert_null(pp_op_vendor_note(adamw, &vr));
    assert_null(pp_op_vendor_note(NULL, &vr));
    snprintf(vr.knobs[0].value, sizeof vr.knobs[0].value, "ours");
    assert_null(pp_op_vendor_note(gemm, &vr));
    // whether the CPU emulation can run a variant (--cross-check asks the row, not the message)
    pp_op_knobs gc = knobs_with(gemm, "engine", "cublas"), go = knobs_with(gemm, "engine", "ours");
    pp_op_knobs ac = knobs_with(attn, "engine", "cublas"), ao = knobs_with(attn, "engine", "ours");
    assert_false(pp_op_emulated(gemm, &gc));
    assert_true(pp_op_emulated(gemm, &go));
    assert_false(pp_op_emulated(attn, &ac));
    assert_true(pp_op_emulated(attn, &ao));
    pp_op_knobs a0 = knobs_with(adamw, "kahan", "on");
    assert_true(pp_op_emulated(adamw, &a0));
}

// A knob combination the op cannot run is an error when the case is read, at the line of the
// variant that makes it ([variants.NAME], or [matrix] with skip_unsupported = false), naming it;
// by default a [matrix] combination is skipped with a note naming it and why.
static void test_knob_check_names_file_line(void **state)
{
    (void)state;
    const char *named = "[case]\nname = \"x\"\nop = \"attention\"\n[op]\ns = 8\nh = 2\nd = 4\n"
                        "[variants.ok]\nkernel = \"unfused\"\n[variants.vendor]\nkernel = \"flash\"\n"
                        "engine = \"cublas\"\n";
    const char *matrix = "[case]\nname = \"x\"\nop = \"attention\"\n[op]\ns = 8\nh = 2\nd = 4\n"
                         "[matrix]\nkernel = [\"unfused\", \"flash\"]\nengine = [\"cublas\"]\n"
                         "skip_unsupported = false\n";
    const char *skipping = "[case]\nname = \"x\"\nop = \"attention\"\n[op]\ns = 8\nh = 2\nd = 4\n"
                           "[matrix]\nkernel = [\"unfused\", \"flash\"]\nengine = [\"cublas\"]\n";
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(named, strlen(named), "named.toml", &c, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "named.toml:10: variant 'vendor': "));
    assert_non_null(strstr(err.msg, "cublas"));
    pp_case_free(&c);
    memset(&err, 0, sizeof err);
    assert_int_equal(pp_case_parse(matrix, strlen(matrix), "matrix.toml", &c, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "matrix.toml:8: variant 'flash-cublas' (from [matrix]): "));
    pp_case_free(&c);
    assert_int_equal(pp_case_parse(skipping, strlen(skipping), "skip.toml", &c, &err), PP_OK);
    assert_int_equal(c.n_variants, 1);
    assert_string_equal(c.variants[0].name, "unfused-cublas");
    assert_non_null(c.notes);
    assert_non_null(strstr(c.notes, "skip.toml:8: note: [matrix] combination 'flash-cublas' skipped: "));
    pp_case_free(&c);
}

// A te-cp-rank view without a world takes the larger world of the pair from the row; when neither
// variant splits the sequence, the error names the knob the row reads it from.
static void test_view_world_from_the_row(void **state)
{
    (void)state;
    const char *head = "[case]\nname = \"x\"\nop = \"attention\"\n[op]\ns = 16\nh = 2\nd = 4\n"
                       "[variants.cp]\ncp_world = \"%s\"\n[variants.ref]\n"
                       "[compare]\npairs = [{ actual = \"cp\", expected = \"ref\", view = \"te-cp-rank:1\" }]\n";
    char text[512];
    pp_case c;
    pp_error err = {0};
    snprintf(text, sizeof text, head, "2");
    assert_int_equal(pp_case_parse(text, strlen(text), "v.toml", &c, &err), PP_OK);
    assert_int_equal(c.pairs[0].view_world, 2);
    pp_case_free(&c);
    snprintf(text, sizeof text, head, "1");
    assert_int_equal(pp_case_parse(text, strlen(text), "v.toml", &c, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "v.toml:12: view 'te-cp-rank:1' needs rank < world, and neither variant has "
                                    "cp_world > 1"));
    pp_case_free(&c);
}

// ---- no generic file names a knob -----------------------------------------------------------

// The words that are an op's knob names or values and also the generic program's own words:
// each one's generic sense, so the scan below can skip it.
static const char *const generic_words[] = {
    "format",   // a tensor's storage format
    "scale",    // an input distribution's scale, chart scales
    "kernel",   // "a low-precision kernel" in the help text
    "storage",  // "their storage format"
    "pre", "post", "row", "none", "on", "off", "nearest", "rounding", "update", "torch",  // English, HTML, torch
    "fp32", "bf16", "fp16",  // format names
    "e4m3", "e5m2", "e2m1",  // format names (`precprobe cast --to`)
    "scaling", "mx",         // `precprobe cast --scaling mx`: the same OCP MX scaling, on a file
    "tensor-current", "nvfp4",  // `precprobe cast --scaling tensor-current | nvfp4`: the same scalings, on a file
    "cpu", "cuda",           // the devices a run chooses (--device), also adamw's torch_kernels values
    "auto",                  // --device auto; also attention's scaling default (fp8's own scaling)
    "max", "margin",         // gate bounds and statistics ({ max = … }, max_ulp), CSS: gemm's amax_compute_algo, margin
    "te",                    // te-cp-rank (TE's CP views), a tensor `te`: mx_scale's "te" is the op row's alone
    "ocp",                   // `precprobe cast --mx-scale ocp | te`: the same exponent rules, on a file
};

static int generic(const char *w)
{
    for (size_t i = 0; i < sizeof generic_words / sizeof generic_words[0]; i++)
        if (!strcmp(generic_words[i], w))
            return 1;
    return 0;
}

// text with its comments blanked (string literals kept: messages are where knob names hide).
static void strip_comments(char *t)
{
    for (char *p = t; *p; p++) {
        if (*p == '"' || *p == '\'') {
            char q = *p;
            for (p++; *p && *p != q; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                return;
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                *p++ = ' ';
            p--;
        } else if (p[0] == '/' && p[1] == '*') {
            while (*p && !(p[0] == '*' && p[1] == '/'))
                *p++ = ' ';
            if (!*p)
                return;
            p[0] = p[1] = ' ';
            p++;
        }
    }
}

static int word_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

// The line of the first whole-word occurrence of w in t, or 0.
static int find_word(const char *t, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = strstr(t, w); p; p = strstr(p + 1, w))
        if ((p == t || !word_char(p[-1])) && !word_char(p[n])) {
            int line = 1;
            for (const char *q = t; q < p; q++)
                line += *q == '\n';
            return line;
        }
    return 0;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *t = malloc((size_t)n + 1);
    if (t && fread(t, 1, (size_t)n, f) != (size_t)n) {
        free(t);
        t = NULL;
    }
    if (t)
        t[n] = '\0';
    fclose(f);
    return t;
}

// Checks one file against every op's knob names and values; returns the number of hits.
static int scan_file(const char *path, int report)
{
    char *t = read_text(path);
    assert_non_null(t);
    strip_comments(t);
    int hits = 0;
    for (int i = 0; i < pp_op_count(); i++) {
        const pp_op *op = pp_op_at(i);
        for (int k = 0; k < op->n_knobs; k++) {
            const pp_knob_def *knob = &op->knobs[k];
            const char *words[64];
            int n = 0;
            words[n++] = knob->name;
            for (int v = 0; knob->values && knob->values[v] && n < 64; v++)
                words[n++] = knob->values[v];
            for (int w = 0; w < n; w++) {
                int line;
                if (generic(words[w]) || !(line = find_word(t, words[w])))
                    continue;
                if (report)
                    fprintf(stderr, "  %s:%d names %s's knob %s ('%s'): ask the op row (src/ops/op.h)\n", path, line,
                            op->name, knob->name, words[w]);
                hits++;
            }
        }
    }
    free(t);
    return hits;
}

static void test_no_generic_file_names_a_knob(void **state)
{
    (void)state;
    // the scan finds what it looks for: the attention row names its knobs
    assert_true(scan_file("src/ops/op_attention.c", 0) > 0);
    static const char *const dirs[] = {"src/pipeline", "src/core", "src/report", "src/cli"};
    int files = 0, hits = 0;
    for (int d = 0; d < 4; d++) {
        DIR *dir = opendir(dirs[d]);
        if (!dir)
            fprintf(stderr, "  %s: cannot open (run from the repository root)\n", dirs[d]);
        assert_non_null(dir);
        struct dirent *e;
        while ((e = readdir(dir))) {
            size_t n = strlen(e->d_name);
            if (n < 3 || e->d_name[n - 2] != '.' || (e->d_name[n - 1] != 'c' && e->d_name[n - 1] != 'h'))
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            hits += scan_file(path, 1);
            files++;
        }
        closedir(dir);
    }
    assert_true(files >= 40);  // the four folders were read, not found empty
    assert_int_equal(hits, 0);
}

// gemm and attention share TE's delayed-scaling knobs (ops/delayed_knobs.h): the same values,
// defaults, ranges and help texts, the history's text differing only in the tensor it names.
static void test_delayed_knobs_say_the_same(void **state)
{
    (void)state;
    const pp_op *ops[2] = {pp_op_find("gemm"), pp_op_find("attention")};
    const char *const shared[] = {"amax_compute_algo", "margin"};
    for (int s = 0; s < 2; s++) {
        const pp_knob_def *a = &ops[0]->knobs[pp_op_knob_index(ops[0], shared[s])];
        const pp_knob_def *b = &ops[1]->knobs[pp_op_knob_index(ops[1], shared[s])];
        assert_string_equal(a->doc, b->doc);
        assert_string_equal(a->def, b->def);
        assert_true(a->values == b->values && a->meanings == b->meanings);
        assert_true(a->int_min == b->int_min && a->int_max == b->int_max && a->list_max == b->list_max);
    }
    const char *const hist[5][2] = {{"gemm", "a"}, {"gemm", "b"}, {"attention", "q"}, {"attention", "k"},
                                    {"attention", "v"}};
    char first[512] = "";
    for (int h = 0; h < 5; h++) {
        const pp_op *op = pp_op_find(hist[h][0]);
        char name[32], own[16], doc[512];
        snprintf(name, sizeof name, "amax_history_%s", hist[h][1]);
        int k = pp_op_knob_index(op, name);
        assert_true(k >= 0);
        const pp_knob_def *d = &op->knobs[k];
        assert_string_equal(d->def, "[]");
        assert_int_equal(d->list_max, PP_KNOB_LIST_MAX);
        // the text with its own tensor's name taken out: the same for all five
        snprintf(own, sizeof own, " %s's ", hist[h][1]);
        const char *at = strstr(d->doc, own);
        assert_non_null(at);
        snprintf(doc, sizeof doc, "%.*s %s", (int)(at - d->doc), d->doc, at + strlen(own));
        if (h == 0)
            snprintf(first, sizeof first, "%s", doc);
        else
            assert_string_equal(doc, first);
    }
}

// Every row states its knob combinations in words (`precprobe list` prints them; op.h: required,
// so list has no fallback text that no row reaches).
static void test_every_op_states_its_knob_rules(void **state)
{
    (void)state;
    assert_true(pp_op_count() > 0);
    for (int i = 0; i < pp_op_count(); i++) {
        const pp_op *op = pp_op_at(i);
        if (!op->knob_rules || !op->knob_rules[0]) {
            fprintf(stderr, "  %s: knob_rules %s\n", op->name, op->knob_rules ? "empty" : "NULL");
            fail();
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_value_has_a_meaning),
        cmocka_unit_test(test_reordered_values_keep_their_meaning),
        cmocka_unit_test(test_format_knobs_take_torch_names),
        cmocka_unit_test(test_row_hooks),
        cmocka_unit_test(test_knob_check_names_file_line),
        cmocka_unit_test(test_view_world_from_the_row),
        cmocka_unit_test(test_no_generic_file_names_a_knob),
        cmocka_unit_test(test_delayed_knobs_say_the_same),
        cmocka_unit_test(test_every_op_states_its_knob_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
