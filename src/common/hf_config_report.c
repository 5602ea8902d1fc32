/* What --hf-config did not model: the fields kept while reading, their warning, their
 * member of the batch document, and the check of a -T given after the file. */
#include "hf_config.h"

#include "hf_config_internal.h"

#include <string.h>

/* src into dst (size bytes), cut at a character's start: the report's text stays UTF-8. */
static void utf8_copy(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size) {
        n = size - 1;
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void HfReader_unmodelled(HfReader *r, const char *field, const JsonValue *value, const char *why)
{
    HfConfigReport *h = r->report;
    if (!value)
        value = HfReader_lookup(r, field);
    if (h->count == HF_UNMODELLED_MAX) {
        h->left_out++;
        return;
    }
    HfUnmodelled *u = &h->unmodelled[h->count++];
    Text text = {0};
    if (value)
        Json_value(&text, value, sizeof u->value);
    else
        Text_printf(&text, "null");
    u->value_is_json = !text.failed && text.length < sizeof u->value;
    utf8_copy(u->field, sizeof u->field, field);
    utf8_copy(u->value, sizeof u->value, text.data ? text.data : "");
    utf8_copy(u->why, sizeof u->why, why);
    utf8_copy(u->default_of, sizeof u->default_of,
              HfReader_from_default(r, field) ? r->family->name : "");
    Text_free(&text);
}

/* HF's "off": null, false, 0, "", [] and {}. */
static bool is_off(const JsonValue *v)
{
    return v->kind == JSON_NULL || v->kind == JSON_FALSE ||
           (v->kind == JSON_NUMBER && v->number == 0) ||
           ((v->kind == JSON_STRING || v->kind == JSON_ARRAY || v->kind == JSON_OBJECT) &&
            (v->kind == JSON_STRING ? v->length == 0 : v->count == 0));
}

static bool listed(const char *const *names, const char *key)
{
    for (int i = 0; names && names[i]; i++)
        if (strcmp(names[i], key) == 0)
            return true;
    return false;
}

static bool unmodelled_when(HfWhen when, const JsonValue *v)
{
    switch (when) {
    case HF_WHEN_FALSE:
        return v->kind == JSON_FALSE;
    case HF_WHEN_SET:
        break;
    }
    return !is_off(v);
}

static void judge_rules(HfReader *r, const HfRule *rules)
{
    for (int i = 0; rules && rules[i].field; i++) {
        const JsonValue *v = HfReader_lookup(r, rules[i].field);
        if (v && unmodelled_when(rules[i].when, v))
            HfReader_unmodelled(r, rules[i].field, v, rules[i].why);
    }
}

void HfReader_judge_rest(HfReader *r)
{
    judge_rules(r, HF_RULES);
    judge_rules(r, r->family->rules);
    for (int i = 0; i < r->object->count; i++) {
        const char *key = r->object->keys[i];
        const JsonValue *v = &r->object->items[i];
        if (r->consumed[i] || is_off(v) || listed(HF_HARMLESS, key) ||
            listed(r->family->harmless, key))
            continue;
        char why[160];
        snprintf(why, sizeof why,
                 "a field attnscope's reader of %s configs does not know: it may change the model",
                 r->family->name);
        HfReader_unmodelled(r, key, v, why);
    }
}

int HfConfig_warning_count(const HfConfigReport *h)
{
    return h->count + (h->left_out > 0);
}

void HfConfig_warning(const HfConfigReport *h, int i, char *buf, size_t size)
{
    if (i == h->count) {
        snprintf(buf, size, "%s: and %d more fields not modelled", h->file, h->left_out);
        return;
    }
    const HfUnmodelled *u = &h->unmodelled[i];
    char note[80] = "";
    if (u->default_of[0])
        snprintf(note, sizeof note, " (not in the file: the %s family's default)", u->default_of);
    snprintf(buf, size, "%s: %s = %s%s%s is not modelled: %s", h->file, u->field, u->value,
             u->value_is_json ? "" : "...", note, u->why);
}

/* Whether the setting entry e was set by `field` or by one of its members ("rope_scaling"
   sets what "rope_scaling.factor" sets). */
static bool set_by(const HfSet *e, const char *field)
{
    size_t n = strlen(field);
    return strncmp(e->field, field, n) == 0 && (e->field[n] == '\0' || e->field[n] == '.');
}

bool HfConfig_warning_holds(const HfConfigReport *h, int i, const Config *start, const Config *c)
{
    const char *field = i < h->count ? h->unmodelled[i].field : NULL;
    bool own = false; /* the field set settings of its own */
    for (int k = 0; field && k < h->set_count; k++)
        own = own || set_by(&h->set[k], field);
    for (int k = 0; k < h->set_count; k++) {
        const Setting *s = Settings_at(h->set[k].setting);
        double file = Setting_get(s, &h->read);
        if (own && !set_by(&h->set[k], field))
            continue;
        /* Where an option after the file changed the setting, the warning about the whole
           model does not ask for the file's value (the run never had it); its own does. */
        bool left = Setting_get(s, start) == file;
        if ((own || left) && Setting_get(s, c) != file)
            return false;
    }
    return true;
}

const char *HfConfig_field_of(const HfConfigReport *h, const char *setting)
{
    const char *field = NULL;
    for (int k = 0; k < h->set_count; k++)
        if (strcmp(Settings_at(h->set[k].setting)->name, setting) == 0)
            field = h->set[k].field;
    return field;
}

void HfConfig_warn(const HfConfigReport *h, FILE *out)
{
    char text[HF_WARNING_SIZE];
    for (int i = 0; i < HfConfig_warning_count(h); i++) {
        HfConfig_warning(h, i, text, sizeof text);
        fprintf(out, "attnscope: warning: %s\n", text);
    }
}

void HfConfig_json(const HfConfigReport *h, Text *t)
{
    Text_printf(t, ",\n \"hf_config\": {\"file\": ");
    Json_string(t, h->file);
    Text_printf(t, ", \"model_type\": ");
    Json_string(t, h->model_type);
    Text_printf(t, ", \"unmodelled\": [");
    for (int i = 0; i < h->count; i++) {
        const HfUnmodelled *u = &h->unmodelled[i];
        Text_printf(t, "%s\n  {\"field\": ", i ? "," : "");
        Json_string(t, u->field);
        Text_printf(t, ", \"value\": ");
        if (u->value_is_json)
            Text_printf(t, "%s", u->value);
        else
            Json_string(t, u->value);
        Text_printf(t, ", \"in_file\": %s, \"why\": ", u->default_of[0] ? "false" : "true");
        Json_string(t, u->why);
        Text_printf(t, "}");
    }
    Text_printf(t, "], \"unmodelled_left_out\": %d}", h->left_out);
}

int HfConfig_check(const HfConfigReport *h, const Config *c, char *err, size_t size)
{
    int keys = h->sliding_window, before = h->judged_tokens, T = c->tokens;
    if (!h->file[0] || !keys || T == before || c->mask != h->mask || c->window != h->window ||
        c->window_layers != h->window_layers)
        return 0;
    if ((keys < before) == (keys < T))
        return 0;
    snprintf(err, size,
             "-T/--tokens %d after --hf-config %s: its sliding window of %d keys %s at T = %d and "
             "%s at T = %d, where the file was read: give -T before --hf-config",
             T, h->file, keys, keys < T ? "acts" : "covers every token", T,
             keys < before ? "acts" : "covers every token", before);
    return -1;
}
