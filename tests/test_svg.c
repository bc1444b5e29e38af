// test_svg.c — the chart primitives: data-to-pixel mapping (linear, log, clamping of zeros,
// infinities and NaN), ticks at powers of ten, polylines broken at NaN, escaping of text and
// tooltips, the palette and the colour ramp.
#include "test_util.h"

#include <math.h>

#include "report/svg.h"

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void svg_mapping_clamps(void **state)
{
    (void)state;
    pp_chart c = {.px = 10, .py = 20, .pw = 100, .ph = 50, .xmin = 0, .xmax = 10, .ymin = 1e-3, .ymax = 1e1,
                  .ylog = 1};
    assert_true(pp_chart_x(&c, 0) == 10 && pp_chart_x(&c, 10) == 110 && pp_chart_x(&c, 5) == 60);
    assert_true(pp_chart_x(&c, -3) == 10 && pp_chart_x(&c, 99) == 110);
    assert_true(pp_chart_y(&c, 1e-3) == 70 && pp_chart_y(&c, 1e1) == 20);
    assert_true(fabs(pp_chart_y(&c, 1e-1) - 45) < 1e-9);  // halfway in log10
    assert_true(pp_chart_y(&c, 0.0) == 70);                 // zero: the bottom edge
    assert_true(pp_chart_y(&c, INFINITY) == 20);            // +Inf: the top edge
    assert_true(pp_chart_y(&c, NAN) == 70);
}

static void svg_axes_log_ticks(void **state)
{
    (void)state;
    pp_textbuf b = {0};
    pp_chart c = {.px = 60, .py = 10, .pw = 300, .ph = 100, .xmin = 0, .xmax = 100, .ymin = 1e-3, .ymax = 1e2,
                  .ylog = 1};
    pp_svg_axes(&b, &c, 1, "x <label>", "y & label");
    assert_false(b.oom);
    for (int k = -3; k <= 2; k++) {
        char lab[16];
        snprintf(lab, sizeof lab, ">1e%d<", k);
        assert_non_null(strstr(b.s, lab));
    }
    assert_non_null(strstr(b.s, ">0<"));
    assert_non_null(strstr(b.s, ">100<"));
    assert_non_null(strstr(b.s, "x &lt;label&gt;"));
    assert_non_null(strstr(b.s, "y &amp; label"));
    pp_tb_free(&b);
}

static void svg_polyline_breaks_at_nan(void **state)
{
    (void)state;
    pp_textbuf b = {0};
    pp_chart c = {.px = 0, .py = 0, .pw = 100, .ph = 100, .xmin = 0, .xmax = 4, .ymin = 0, .ymax = 1};
    double x[5] = {0, 1, 2, 3, 4}, y[5] = {0.5, 0.5, NAN, 0.25, 1};
    pp_svg_polyline(&b, &c, x, y, 5, "#123456", 1);
    assert_int_equal(count(b.s, "<polyline"), 2);
    assert_non_null(strstr(b.s, "points=\"0.0,50.0 25.0,50.0\""));
    assert_non_null(strstr(b.s, "points=\"75.0,75.0 100.0,0.0\""));
    assert_int_equal(count(b.s, "stroke-dasharray"), 2);
    pp_tb_free(&b);
    double yn[2] = {NAN, NAN};
    pp_svg_polyline(&b, &c, x, yn, 2, "#123456", 0);
    assert_null(b.s);  // nothing drawn
}

static void svg_text_and_tooltips_escaped(void **state)
{
    (void)state;
    pp_textbuf b = {0};
    pp_svg_begin(&b, 10, 10, "<t>");
    pp_svg_text(&b, 1, 2, "start", "a<b>&\"c\"\x01\xff");
    pp_svg_rect(&b, 0, 0, 1, 1, "#000000", "tip <&>");
    pp_svg_rect(&b, 0, 0, -1, 1, "#000000", NULL);
    pp_svg_end(&b);
    assert_null(strstr(b.s, "<t>"));
    assert_non_null(strstr(b.s, "a&lt;b&gt;&amp;&quot;c&quot;\xEF\xBF\xBD\xEF\xBF\xBD"));
    assert_non_null(strstr(b.s, "<title>tip &lt;&amp;&gt;</title>"));
    assert_non_null(strstr(b.s, "width=\"0.00\""));  // a negative width drawn as none
    assert_null(strstr(b.s, "http"));                 // no xmlns: no URL
    pp_tb_free(&b);
}

static void svg_palette_and_ramp(void **state)
{
    (void)state;
    assert_string_equal(pp_svg_color(0), pp_svg_color(10));
    assert_string_not_equal(pp_svg_color(0), pp_svg_color(1));
    assert_string_equal(pp_svg_color(-1), pp_svg_color(9));
    char c[8];
    pp_svg_ramp(0, c);
    assert_string_equal(c, "#f7fbff");
    pp_svg_ramp(1, c);
    assert_string_equal(c, "#08306b");
    pp_svg_ramp(7, c);
    assert_string_equal(c, "#08306b");
    pp_svg_ramp(NAN, c);
    assert_string_equal(c, "#000000");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(svg_mapping_clamps),
        cmocka_unit_test(svg_axes_log_ticks),
        cmocka_unit_test(svg_polyline_breaks_at_nan),
        cmocka_unit_test(svg_text_and_tooltips_escaped),
        cmocka_unit_test(svg_palette_and_ramp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
