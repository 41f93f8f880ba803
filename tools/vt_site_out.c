/* vt_site_out.h. */
#include <stdio.h>

#include "vt_json.h"
#include "vt_site_out.h"
#include "vt_units.h"

void vt_site_folded(FILE *f, const struct vt_site *s)
{
    for (uint32_t i = s->nframes; i-- > 0;) {
        for (const char *c = s->frames[i]; *c; c++)
            fputc(*c == ';' ? ',' : *c, f);
        fputc(';', f);
    }
    fprintf(f, "[%s %s]", s->kind, s->api);
}

void vt_site_print_frames(const struct vt_site *s, const char *indent, uint32_t max, int full)
{
    uint32_t f = 0, shown = 0;
    if (!full && s->python_at > 1 && s->python_at < s->nframes) {
        printf("%s%s\n%s… %u native frames (--full-stacks)\n", indent, s->frames[0], indent, s->python_at - 1);
        f = s->python_at;
        shown = 1;
    }
    for (; f < s->nframes && (full || shown < max); f++, shown++)
        printf("%s%s\n", indent, s->frames[f]);
    if (f < s->nframes)
        printf("%s… %u more (--full-stacks)\n", indent, s->nframes - f);
}

void vt_site_json_head(FILE *f, const struct vt_site *s)
{
    fputs("\"stack\":", f);
    vt_json_strs(f, s->frames, s->nframes);
    if (s->mangled) {
        fputs(",\"mangled\":[", f);
        for (uint32_t i = 0; i < s->nframes; i++) {
            fputs(i ? "," : "", f);
            vt_json_str_or_null(f, s->mangled[i]);
        }
        fputc(']', f);
    }
    if (s->python_at < s->nframes)
        fprintf(f, ",\"python_from\":%u", s->python_at);
    else
        fputs(",\"python_from\":null", f);
    fputs(",\"name\":", f);
    vt_json_str_or_null(f, vt_site_name(s));
    fputs(",\"kind\":", f);
    vt_json_str(f, s->kind);
    fputs(",\"api\":", f);
    vt_json_str(f, s->api);
}

void vt_site_json_place(FILE *f, const struct vt_site *s)
{
    fprintf(f, ",\"device\":%d,\"library\":", s->device);
    vt_json_str_or_null(f, s->library[0] ? s->library : NULL);
    fprintf(f, ",\"class\":\"%s\"", vt_site_class(s));
}

void vt_libs_text(const struct vt_libs *l)
{
    char a[32];
    for (int j = 0; j < l->n; j++) {
        vt_human(l->v[j].bytes, a, sizeof a);
        printf("%s%s %s", j ? ", " : "", l->v[j].name, a);
    }
}

void vt_libs_json(FILE *f, const struct vt_libs *l)
{
    fputc('[', f);
    for (int j = 0; j < l->n; j++) {
        fprintf(f, "%s{\"name\":", j ? "," : "");
        vt_json_str(f, l->v[j].name);
        fprintf(f, ",\"bytes\":%llu}", (unsigned long long)l->v[j].bytes);
    }
    fputc(']', f);
}
