#include "setting_line.h"

#include <stdio.h>
#include <string.h>

/* The longest line SettingLine_apply reads: every setting with a long value fits twice over. */
enum { SETTING_LINE_MAX = 1024, SETTING_LINE_WORDS = SETTING_LINE_MAX / 2 };

const Setting *SettingLine_setting(const char *word)
{
    bool dashes = strncmp(word, "--", 2) == 0;
    const char *name = dashes ? word + 2 : word;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (strcmp(s->name, name) == 0 || (!dashes && strcmp(s->json, name) == 0) ||
            (s->letter && word[0] == '-' && word[1] == s->letter && !word[2]))
            return s;
    }
    return NULL;
}

int SettingLine_assign(const Setting *s, Config *c, const char *value, bool seen[SETTINGS_MAX],
                       char *err, size_t size)
{
    int index = (int)(s - Settings_at(0));
    if (seen[index]) {
        snprintf(err, size, "duplicate key '%s'", s->name);
        return -1;
    }
    seen[index] = true;
    return Setting_parse(s, c, value, err, size);
}

void SettingLine_accepted(const Setting *s, char *buf, size_t size)
{
    const Setting *bound = s->bound ? Settings_find(s->bound) : NULL;
    if (s->kind == SETTING_ENUM)
        EnumNames_list(s->names, buf, size);
    else if (s->kind == SETTING_PATTERN)
        snprintf(buf, size, "up to %d layers", WINDOW_LAYERS_PERIOD_MAX);
    else if (s->kind == SETTING_DOUBLE)
        snprintf(buf, size, "%g %s X <= %g%s%s", s->min, s->min_included ? "<=" : "<", s->max,
                 s->off_word ? " or " : "", s->off_word ? s->off_word : "");
    else if (bound && !s->raises_bound && s->bound_offset)
        snprintf(buf, size, "%.0f..%s%+d", s->min, bound->label, s->bound_offset);
    else if (bound && !s->raises_bound)
        snprintf(buf, size, "%.0f..%s", s->min, bound->label);
    else
        snprintf(buf, size, "%.0f..%.0f", s->min, s->max);
}

/* The words of text, split at blanks in place; their count, or -1 when there are too many. */
static int split_words(char *text, char *words[SETTING_LINE_WORDS])
{
    int n = 0;
    for (char *word = strtok(text, " \t"); word; word = strtok(NULL, " \t")) {
        if (n == SETTING_LINE_WORDS)
            return -1;
        words[n++] = word;
    }
    return n;
}

/* The next "name value" of words from *at: its setting and value, *at moved past them.
   Returns 0, or -1 with a message. */
static int next_assignment(char *words[], int count, int *at, const Setting **s, const char **value,
                           char *err, size_t size)
{
    char *name = words[(*at)++], *eq = strchr(name, '=');
    *value = NULL;
    if (eq && eq != name) {
        *eq = '\0';
        *value = eq[1] ? eq + 1 : NULL;
    }
    *s = SettingLine_setting(name);
    if (!*s) {
        snprintf(err, size,
                 "'%.40s' is not a setting: accepted a setting's long option as --help lists "
                 "it (head-dim, rope-scaling ...; Tab completes a name)",
                 name);
        return -1;
    }
    if (!*value && *at < count && strcmp(words[*at], "=") == 0 && !eq)
        (*at)++;
    if (!*value && *at < count) {
        *value = words[(*at)++];
        if (**value == '=' && !eq)
            (*value)++;
    }
    if (!*value || !**value) {
        char accepted[160];
        SettingLine_accepted(*s, accepted, sizeof accepted);
        snprintf(err, size, "--%s: needs a value (accepted %s)", (*s)->name, accepted);
        return -1;
    }
    return 0;
}

int SettingLine_set(Config *c, const char *text, bool changed[SETTINGS_MAX], char *err, size_t size)
{
    char line[SETTING_LINE_MAX], *words[SETTING_LINE_WORDS];
    if (strlen(text) >= sizeof line) {
        snprintf(err, size, "a line of settings is at most %d characters", SETTING_LINE_MAX - 1);
        return -1;
    }
    memcpy(line, text, strlen(text) + 1);
    int count = split_words(line, words);
    if (count <= 0) {
        snprintf(err, size,
                 count < 0 ? "too many words in one line of settings"
                           : "nothing to set: type a setting and its value "
                             "(head-dim 128)");
        return -1;
    }
    Config trial = *c;
    bool seen[SETTINGS_MAX] = {false};
    int applied = 0;
    for (int at = 0; at < count; applied++) {
        const Setting *s;
        const char *value;
        /* A setting given twice takes its last value, as on the command line (a preset
           file's duplicate key, SettingLine_assign, is a mistake in a file kept for reuse). */
        if (next_assignment(words, count, &at, &s, &value, err, size) ||
            Setting_parse(s, &trial, value, err, size))
            return -1;
        seen[s - Settings_at(0)] = true;
    }
    *c = trial;
    if (changed)
        memcpy(changed, seen, sizeof seen);
    return applied;
}

int SettingLine_apply(Config *c, const char *text, bool changed[SETTINGS_MAX], char *err,
                      size_t size)
{
    Config trial = *c;
    int applied = SettingLine_set(&trial, text, changed, err, size);
    if (applied < 0 || Config_validate(&trial, err, size))
        return -1;
    *c = trial;
    return applied;
}
