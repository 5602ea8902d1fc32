#include "json.h"

#include "attnscope/format.h"
#include "json_read.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Text_free(Text *t)
{
    free(t->data);
    *t = (Text){0};
}

void Text_printf(Text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        size_t room = t->capacity - t->length;
        va_list ap;
        va_start(ap, fmt);
        int n = t->data ? vsnprintf(t->data + t->length, room, fmt, ap) : -2;
        va_end(ap);
        if (n == -1) {
            t->failed = true;
            return;
        }
        if (n >= 0 && (size_t)n < room) {
            t->length += (size_t)n;
            return;
        }
        size_t want = t->capacity ? 2 * t->capacity : 4096;
        while (n >= 0 && want - t->length <= (size_t)n)
            want *= 2;
        char *p = realloc(t->data, want);
        if (!p) {
            t->failed = true;
            return;
        }
        t->data = p;
        t->capacity = want;
    }
}

void Json_number(Text *t, double x)
{
    char buf[FORMAT_NUMBER_SIZE];
    Text_printf(t, "%s", isfinite(x) ? Format_shortest(x, buf) : "null");
}

void Json_string(Text *t, const char *s)
{
    Text_printf(t, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            Text_printf(t, "\\%c", *p);
        else if (*p == '\n')
            Text_printf(t, "\\n");
        else if (*p < 0x20)
            Text_printf(t, "\\u%04x", *p);
        else
            Text_printf(t, "%c", *p);
    }
    Text_printf(t, "\"");
}

void Json_numbers(Text *t, const double *x, int n)
{
    Text_printf(t, "[");
    for (int i = 0; i < n; i++) {
        if (i)
            Text_printf(t, ",");
        Json_number(t, x[i]);
    }
    Text_printf(t, "]");
}

/* The settings from the settings table, under their JSON keys; d_qk = d is said after d for
   readers that know the papers' notation. */
void Json_config_members(Text *t, const Config *c)
{
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        char value[64];
        Text_printf(t, "%s\"%s\":", i ? "," : "", s->json);
        if (s->kind == SETTING_DOUBLE) {
            Json_number(t, Setting_get(s, c));
        } else {
            Setting_format(s, c, 17, value, sizeof value);
            Text_printf(t, Setting_is_text(s) ? "\"%s\"" : "%s", value);
        }
        if (strcmp(s->name, "width") == 0)
            Text_printf(t, ",\"d_qk\":%d", c->width);
    }
}

void Json_value(Text *t, const JsonValue *v, size_t limit)
{
    switch (v->kind) {
    case JSON_NULL:
        Text_printf(t, "null");
        return;
    case JSON_FALSE:
        Text_printf(t, "false");
        return;
    case JSON_TRUE:
        Text_printf(t, "true");
        return;
    case JSON_NUMBER: /* as written, so that it keeps every bit */
        Text_printf(t, "%s", v->text);
        return;
    case JSON_STRING:
        Json_string(t, v->text);
        return;
    case JSON_ARRAY:
    case JSON_OBJECT:
        break;
    }
    bool keyed = v->kind == JSON_OBJECT;
    Text_printf(t, keyed ? "{" : "[");
    for (int i = 0; i < v->count && t->length <= limit; i++) {
        Text_printf(t, i ? ", " : "");
        if (keyed) {
            Json_string(t, v->keys[i]);
            Text_printf(t, ":");
        }
        Json_value(t, &v->items[i], limit);
    }
    Text_printf(t, keyed ? "}" : "]");
}
