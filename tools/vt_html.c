/* The HTML report: tools/html/report.html (built in as two strings, around its data marker) with the
 * data in between, as JSON: per process, each dump's report (docs/JSON.md; the call sites of its last
 * dump only) and the diff of its two dumps or the trend of its three or more. The page draws it with its own script: no network, no CDN.
 * The JSON is written into a <script> element, so every "</" in it becomes "<\/" (the same string to
 * JSON, never an end tag to HTML). */
#include <stdlib.h>
#include <string.h>

#include "vt_html.h"
#include "vt_html_page.h"
#include "vt_json.h"
#include "vt_report.h"

/* The JSON of one process into f. */
static void vt_proc_json(FILE *f, const struct vt_html_proc *p)
{
    fputs("{\"paths\":[", f);
    for (int k = 0; k < p->n; k++) {
        fputs(k ? "," : "", f);
        vt_json_str(f, p->dm[k].path);
    }
    fputs("],\"reports\":[", f);
    for (int k = 0; k < p->n; k++) {
        struct vt_report_opts o = {.path = p->dm[k].path, .top = k == p->n - 1 ? 0x7fffffff : 0, .device = -2};
        fputs(k ? "," : "", f);
        vt_report_json(f, &o, &p->dm[k].m);
    }
    fputs("],\"diff\":", f);
    if (p->diff)
        vt_diff_json(f, p->diff);
    else
        fputs("null", f);
    fputs(",\"trend\":", f);
    if (p->trend)
        vt_trend_json(f, p->trend);
    else
        fputs("null", f);
    fputc('}', f);
}

int vt_html_write(FILE *out, const struct vt_html_proc *procs, int nprocs)
{
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    if (!f)
        return -1;
    fputs("{\"processes\":[", f);
    for (int i = 0; i < nprocs; i++) {
        fputs(i ? "," : "", f);
        vt_proc_json(f, &procs[i]);
    }
    fputs("]}", f);
    if (fclose(f) != 0 || !json) {
        free(json);
        return -1;
    }
    fputs(vt_html_head, out);
    /* The data sits in a <script> element: no '<' or '>' may stand as itself in it (a name holding
     * "</script>" or "<!--" would end or hide the element), and in JSON they occur only inside strings,
     * where \u003c and \u003e mean the same. */
    for (size_t i = 0; i < len; i++) {
        if (json[i] == '<' || json[i] == '>' || json[i] == '&')
            fprintf(out, "\\u%04x", (unsigned)json[i]);
        else
            fputc(json[i], out);
    }
    fputs(vt_html_tail, out);
    free(json);
    return 0;
}
