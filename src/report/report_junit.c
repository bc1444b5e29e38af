// report_junit.c — the JUnit XML view of a run: built in memory, escaped for XML 1.0, written
// with pp_atomic_write_text.
#include "report/report_junit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "core/close.h"
#include "core/repr.h"
#include "core/textbuf.h"
#include "core/utf8.h"

// ---------------------------------------------------------------------------------------------
// XML escaping

// Length of the well-formed UTF-8 sequence at the n bytes at s that is an XML 1.0 character
// (pp_utf8_len, less U+FFFE and U+FFFF, which XML excludes), or 0.
static size_t xml_char_len(const unsigned char *s, size_t n)
{
    size_t k = pp_utf8_len(s, n);
    if (k == 3 && s[0] == 0xEF && s[1] == 0xBF && (s[2] == 0xBE || s[2] == 0xBF))
        return 0;
    return k;
}

// Appends s escaped for element text (attr 0) or a double-quoted attribute value (attr 1).
// In attributes, tab, newline and carriage return become character references, which a
// parser's attribute-value normalisation would otherwise turn into spaces; in text a carriage
// return does, which line-end normalisation would otherwise drop.
static void sb_xml(pp_textbuf *b, const char *str, int attr)
{
    const unsigned char *s = (const unsigned char *)str, *end = s + strlen(str);
    while (*s) {
        unsigned c = *s;
        const char *rep = NULL;
        char hex[8];
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = attr ? "&quot;" : NULL; break;
        case '\'': rep = attr ? "&apos;" : NULL; break;
        case '\t': rep = attr ? "&#9;" : NULL; break;
        case '\n': rep = attr ? "&#10;" : NULL; break;
        case '\r': rep = "&#13;"; break;
        default:
            if (c < 0x20) {
                snprintf(hex, sizeof hex, "\\x%02X", c);
                rep = hex;
            }
            break;
        }
        if (rep) {
            pp_tb_str(b, rep);
            s++;
            continue;
        }
        size_t n = xml_char_len(s, (size_t)(end - s));
        if (n == 0) {
            pp_tb_str(b, "\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
            s++;
        } else {
            pp_tb_put(b, (const char *)s, n);
            s += n;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The report

static void property(pp_textbuf *b, const char *name, const char *value)
{
    pp_tb_printf(b, "      <property name=\"%s\" value=\"", name);
    sb_xml(b, value, 1);
    pp_tb_str(b, "\"/>\n");
}

// The <system-out> of comparison i: torch's message or a line saying all is close, then the
// extra statistics.
static void comparison_out(pp_textbuf *b, const pp_comparison *c, const char *message)
{
    char msg[4096], stats[8192];
    if (!message) {
        if (pp_close_message(&c->stats, &c->opts, c->ndim, c->shape, msg, sizeof msg) < 0)
            b->oom = 1;
        message = msg;
    }
    pp_tb_str(b, "      <system-out>");
    if (*message) {
        sb_xml(b, message, 0);
    } else {
        char rt[PP_REPR_MAX], at[PP_REPR_MAX];
        pp_repr_double(c->opts.rtol, rt, sizeof rt);
        pp_repr_double(c->opts.atol, at, sizeof at);
        pp_tb_printf(b, "All close: 0 / %lld elements mismatched (rtol %s, atol %s).",
                  (long long)c->stats.numel, rt, at);
    }
    pp_tb_str(b, "\n\n");
    if (pp_close_stats_text(&c->stats, &c->opts, c->ndim, c->shape, stats, sizeof stats) < 0)
        b->oom = 1;
    sb_xml(b, stats, 0);
    pp_tb_str(b, "</system-out>\n");
}

static void build(pp_textbuf *b, const pp_run_result *r, const char *const *messages)
{
    int failures = 0;
    for (int i = 0; i < r->n_verdicts; i++)
        failures += !r->verdicts[i].passed;
    int tests = r->n_comparisons + r->n_verdicts;
    pp_tb_str(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    pp_tb_printf(b, "<testsuites name=\"precprobe\" tests=\"%d\" failures=\"%d\" errors=\"0\" "
              "skipped=\"0\" time=\"0\">\n", tests, failures);
    pp_tb_str(b, "  <testsuite name=\"");
    sb_xml(b, r->case_name, 1);
    pp_tb_printf(b, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\" time=\"0\">\n", tests,
              failures);
    pp_tb_str(b, "    <properties>\n");
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
    property(b, "op", r->op);
    property(b, "device", r->device);
    property(b, "seed", seed);
    property(b, "precprobe_version", r->precprobe_version);
    property(b, "created_utc", r->created_utc);
    pp_tb_str(b, "    </properties>\n");
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *c = &r->comparisons[i];
        pp_tb_str(b, "    <testcase classname=\"precprobe.");
        sb_xml(b, r->case_name, 1);
        pp_tb_str(b, "\" name=\"");
        sb_xml(b, c->variant, 1);
        pp_tb_str(b, ".");
        sb_xml(b, c->tensor, 1);
        pp_tb_str(b, " vs ");
        sb_xml(b, c->against, 1);
        pp_tb_str(b, "\" time=\"0\">\n");
        comparison_out(b, c, messages ? messages[i] : NULL);
        pp_tb_str(b, "    </testcase>\n");
    }
    for (int i = 0; i < r->n_verdicts; i++) {
        const pp_gate_verdict *v = &r->verdicts[i];
        pp_tb_str(b, "    <testcase classname=\"precprobe.");
        sb_xml(b, r->case_name, 1);
        pp_tb_str(b, "\" name=\"gate: ");
        sb_xml(b, v->rule, 1);
        pp_tb_str(b, "\" time=\"0\">\n");
        if (v->passed) {
            pp_tb_str(b, "      <system-out>");
            sb_xml(b, v->detail, 0);
            pp_tb_str(b, "</system-out>\n");
        } else {
            pp_tb_str(b, "      <failure message=\"gate rule failed\" type=\"gate\">");
            sb_xml(b, v->detail, 0);
            pp_tb_str(b, "</failure>\n");
        }
        pp_tb_str(b, "    </testcase>\n");
    }
    pp_tb_str(b, "  </testsuite>\n</testsuites>\n");
}

int pp_report_junit_write(const char *path, const pp_run_result *r, const char *const *messages,
                          pp_error *err)
{
    pp_textbuf b = {0};
    build(&b, r, messages);
    int rc = b.oom ? pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory building the report", path)
                   : pp_atomic_write_text(path, b.s, err);
    free(b.s);
    return rc;
}
