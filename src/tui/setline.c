#include "setline.h"

#include "attnscope/layer.h"
#include "setting_line.h"

#include <curses.h> /* KEY_ codes only: the screen module reads the keys */
#include <stdio.h>
#include <string.h>

/* The options that are not settings, which the line refuses with the reason: they are read
   once at start (a file read on the screen's thread would freeze it), belong to --batch, or
   have a key of their own. */
static const struct {
    const char *option, *reason;
} NOT_ON_THE_SCREEN[] = {
    {"preset", "P opens the preset picker, which loads a preset whole"},
    {"hf-config", "its file is read at start only: restart with --hf-config"},
    {"weights", "a checkpoint is read at start only: restart with --weights"},
    {"token-ids", "the ids' file is read at start only: restart with --token-ids"},
    {"export", "x exports the shown result"},
    {"present", "Z turns presentation mode on and off"},
    {"sweep-T", "v shows the width sweep"},
    {"conditioning", "v shows the conditioning view"},
    {"batch", "a --batch option: the screen is not batch"},
    {"jsonl", "a --batch option: the screen is not batch"},
    {"softmax-demo", "a --batch option: the screen is not batch"},
    {"verbose", "a --batch option: the screen shows its estimate on the status line"},
    {"max-time", "a --batch option: the screen asks before a long job"},
    {"export-weights", "a --batch option: restart with it"},
    {"export-dtype", "a --batch option: restart with it"},
    {"export-matrix", "fixed when the screen starts: restart with it"},
    {"max-memory", "fixed when the screen starts: restart with it"},
    {"conditioning-path", "fixed when the screen starts: restart with it"},
    {"no-confirm", "fixed when the screen starts: restart with it"},
    {"trace", "fixed when the screen starts: restart with it"},
    {"ascii", "fixed when the screen starts: restart with it"},
    {"no-color", "fixed when the screen starts: restart with it"},
    {"help", "? shows the keys"},
};

void SetLine_open(SetLine *l)
{
    l->prompt = (Prompt){
        .title = " set: a setting and its value, as on the command line ",
        .label = ":",
        .hint = "Enter sets; Esc cancels; Tab completes a name; ↑/↓ earlier lines",
        .max_chars = PROMPT_SIZE - 1,
        .allowed = Prompt_printable,
    };
    l->recalled = l->count;
    l->completing = false;
    l->detail[0] = '\0';
}

/* Whether the word at the end of stem's words would be a setting's value (of *named, NULL
   where that name is no setting): the words alternate name, value, with "name=value" one
   word and a lone "=" between the two skipped. */
static bool value_next(const char *stem, const Setting **named)
{
    char words[PROMPT_SIZE];
    snprintf(words, sizeof words, "%s", stem);
    bool value = false;
    *named = NULL;
    for (char *w = strtok(words, " \t"); w; w = strtok(NULL, " \t")) {
        if (value) {
            value = strcmp(w, "=") == 0;
            continue;
        }
        char *eq = strchr(w, '=');
        if (eq && eq != w)
            *eq = '\0';
        *named = SettingLine_setting(w);
        value = !(eq && eq != w && eq[1]);
    }
    return value;
}

/* What s accepts and holds in c, for the detail under the line after the `used` bytes already
   in it; what the screen may cut of it to fit (its description) marked in the prompt. */
static void describe(SetLine *l, size_t used, const Setting *s, const Config *c)
{
    char accepted[160], now[64];
    SettingLine_accepted(s, accepted, sizeof accepted);
    Setting_format(s, c, 0, now, sizeof now);
    char *out = l->detail + used;
    size_t size = sizeof l->detail - used;
    int description = snprintf(out, size, "--%s %s%s%s", s->name, s->argument, s->help ? ": " : "",
                               s->help ? s->help : "");
    if (description < 0 || (size_t)description >= size)
        return;
    snprintf(out + description, size - (size_t)description, "%saccepted %s; now %s",
             s->help ? "; " : ": ", accepted, now);
    l->prompt.detail_elidable = (int)used + description;
}

/* The candidates for the word being typed: the settings' names, or the names of the setting
   whose value it is.  Returns their count. */
static int candidates(const SetLine *l, const Setting *named, bool value,
                      const char *out[SETTINGS_MAX])
{
    int n = 0;
    size_t typed = strlen(l->partial);
    if (value) {
        /* An enumeration's names, or a pattern's stops (window-layers: all, 1:1, 5:1). */
        for (int i = 0; named && named->names && i < named->names->count; i++)
            if (strncmp(named->names->names[i], l->partial, typed) == 0)
                out[n++] = named->names->names[i];
        return n;
    }
    for (int i = 0; i < Settings_count(); i++)
        if (strncmp(Settings_at(i)->name, l->partial, typed) == 0)
            out[n++] = Settings_at(i)->name;
    return n;
}

/* Tab: the word at the cursor completed to its next match, as a shell completes it: matched by
   what is typed of it before the cursor, the match in its place and the text after the cursor
   kept.  The detail says what the completed setting (or the setting whose value it is)
   accepts. */
static void complete(SetLine *l, const Config *c)
{
    char *text = l->prompt.text;
    if (!l->completing) {
        /* The stem keeps the word's "--" or its "name=", the partial is what is matched. */
        int at = l->prompt.cursor;
        while (at > 0 && !strchr(" \t=", text[at - 1]))
            at--;
        memcpy(l->stem, text, (size_t)at);
        l->stem[at] = '\0';
        l->value = value_next(l->stem, &l->named);
        if (strncmp(text + at, "--", 2) == 0 && at + 2 <= l->prompt.cursor)
            at += 2;
        snprintf(l->partial, sizeof l->partial, "%.*s", l->prompt.cursor - at, text + at);
        snprintf(l->rest, sizeof l->rest, "%s", text + l->prompt.cursor);
        memcpy(l->stem, text, (size_t)at);
        l->stem[at] = '\0';
        l->match = -1;
    }
    const Setting *named = l->named;
    bool value = l->value;
    l->prompt.detail_elidable = 0;
    const char *found[SETTINGS_MAX];
    int count = candidates(l, named, value, found);
    l->completing = count > 1;
    if (count == 0) {
        /* A number's value: what it accepts; a word after one that is no setting: nothing. */
        if (value && named)
            describe(l, 0, named, c);
        else if (value)
            snprintf(l->detail, sizeof l->detail, "no setting before '%s' to complete it for",
                     l->partial);
        else
            snprintf(l->detail, sizeof l->detail, "no setting's name starts with '%s'", l->partial);
        l->prompt.detail = l->detail;
        return;
    }
    l->match = (l->match + 1) % count;
    /* One match ends its word with a blank, unless the text after it starts with one. */
    bool blank = count == 1 && l->rest[0] != ' ' && l->rest[0] != '\t';
    char line[PROMPT_SIZE];
    int cursor = snprintf(line, sizeof line, "%s%s%s", l->stem, found[l->match], blank ? " " : "");
    /* A completion too long for the line leaves the text as it was. */
    if ((size_t)cursor + strlen(l->rest) < sizeof line) {
        memcpy(text, line, (size_t)cursor);
        memcpy(text + cursor, l->rest, strlen(l->rest) + 1);
        l->prompt.cursor = cursor;
    }
    const Setting *s = value ? named : Settings_find(found[l->match]);
    int used = count > 1 ? snprintf(l->detail, sizeof l->detail,
                                    "%d of %d (Tab: next): ", l->match + 1, count)
                         : 0;
    l->detail[used] = '\0';
    if (s)
        describe(l, (size_t)used, s, c);
    l->prompt.detail = l->detail;
}

/* ↑ (step −1) and ↓ (+1) through the history, the line being typed after its last entry. */
static void recall(SetLine *l, int step)
{
    int to = l->recalled + step;
    /* A refused line stays open and is the newest entry: ↑ goes past it to the one before. */
    if (l->recalled == l->count && to > 0 && to < l->count &&
        strcmp(l->history[to], l->prompt.text) == 0)
        to--;
    if (to < 0 || to > l->count)
        return;
    if (l->recalled == l->count)
        snprintf(l->typed, sizeof l->typed, "%s", l->prompt.text);
    l->recalled = to;
    Prompt_set_text(&l->prompt, to == l->count ? l->typed : l->history[to]);
}

PromptOutcome SetLine_key(SetLine *l, int key, const Config *c)
{
    if (key == '\t') {
        complete(l, c);
        return PROMPT_EDITED;
    }
    /* Tab's detail is of the word it completed: after any other key (an edit, Enter's refusal)
       it would speak of a line no longer there. */
    l->completing = false;
    l->prompt.detail = NULL;
    l->prompt.detail_elidable = 0;
    if (key == KEY_UP || key == KEY_DOWN) {
        recall(l, key == KEY_UP ? -1 : 1);
        return PROMPT_EDITED;
    }
    return Prompt_key(&l->prompt, key);
}

void SetLine_remember(SetLine *l)
{
    const char *text = l->prompt.text;
    if (!text[0] || (l->count && strcmp(l->history[l->count - 1], text) == 0))
        return;
    if (l->count == SETLINE_HISTORY) {
        memmove(l->history[0], l->history[1], sizeof l->history - sizeof l->history[0]);
        l->count--;
    }
    snprintf(l->history[l->count++], sizeof l->history[0], "%s", text);
    l->recalled = l->count;
}

/* The first word of text that names an option the screen cannot take, and why: false with the
   note written. */
static bool screen_takes(const char *text, char *note, size_t size)
{
    char words[PROMPT_SIZE];
    snprintf(words, sizeof words, "%s", text);
    for (char *w = strtok(words, " \t"); w; w = strtok(NULL, " \t")) {
        char *eq = strchr(w, '=');
        if (eq)
            *eq = '\0';
        const char *name = strncmp(w, "--", 2) == 0 ? w + 2 : w;
        for (size_t i = 0; i < sizeof NOT_ON_THE_SCREEN / sizeof NOT_ON_THE_SCREEN[0]; i++)
            if (strcmp(name, NOT_ON_THE_SCREEN[i].option) == 0) {
                snprintf(note, size, "--%s is not set on the screen: %s", name,
                         NOT_ON_THE_SCREEN[i].reason);
                return false;
            }
    }
    return true;
}

/* "set head-dim=32, heads=4", then what the model does not use of them. */
static void say_set(const bool changed[], const Config *c, char *note, size_t size)
{
    size_t used = (size_t)snprintf(note, size, "set");
    for (int i = 0; i < Settings_count() && used < size; i++)
        if (changed[i]) {
            char value[64];
            Setting_format(Settings_at(i), c, 0, value, sizeof value);
            used += (size_t)snprintf(note + used, size - used, "%s %s=%s", used > 3 ? "," : "",
                                     Settings_at(i)->name, value);
        }
    for (int i = 0; i < Settings_count() && used < size; i++) {
        const Setting *s = Settings_at(i);
        if (changed[i] && s->in_use && !s->in_use(c))
            used += (size_t)snprintf(note + used, size - used, "; %s", s->unused_note);
    }
}

/* The relations between settings on trial, as a key keeps them: what the line did not name
   follows what it did (width 64 takes T down to 64, as d does; tokens 512 raises d, as T
   does), what it named never moves.
   Returns true with what followed in said, or false with the command line's refusal in why. */
static bool settle_unnamed(Config *trial, const bool named[], char *said, size_t said_size,
                           char *why, size_t why_size)
{
    said[0] = '\0';
    if (Config_validate(trial, why, why_size) == 0)
        return true;
    Config settled = *trial;
    /* A setting whose key raises its bound (T raises d) raises it here, where the line does not
       name the bound. */
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i), *b = Setting_bound(s, &settled);
        double value = Setting_get(s, &settled);
        if (!named[i] || !s->raises_bound || !b || named[b - Settings_at(0)] ||
            value <= Setting_limit(s, &settled))
            continue;
        Setting_put(b, &settled, value - s->bound_offset);
        size_t used = strlen(said);
        snprintf(said + used, said_size - used, "%s%s raised to %g with %s (%s)", used ? "; " : "",
                 b->key_label, value - s->bound_offset, s->label, s->bound_reason);
    }
    char ignored[KEYS_NOTE_SIZE];
    if (!Keys_settle(&settled, said + strlen(said), said_size - strlen(said)) ||
        Config_validate(&settled, ignored, sizeof ignored))
        return false;
    for (int i = 0; i < Settings_count(); i++)
        if (named[i] && Setting_get(Settings_at(i), &settled) != Setting_get(Settings_at(i), trial))
            return false;
    *trial = settled;
    return true;
}

bool SetLine_apply(const char *text, Controls *next, char *note, size_t size)
{
    if (!screen_takes(text, note, size))
        return false;
    Config trial = next->config;
    bool changed[SETTINGS_MAX];
    char why[KEYS_NOTE_SIZE], followed[KEYS_NOTE_SIZE];
    if (SettingLine_set(&trial, text, changed, why, sizeof why) < 0 ||
        !settle_unnamed(&trial, changed, followed, sizeof followed, why, sizeof why)) {
        snprintf(note, size, "%s", why);
        return false;
    }
    /* A checkpoint's weights (--weights) fix the shapes, as they stop the keys. */
    if (!Layer_weights_fit(&trial, why, sizeof why)) {
        snprintf(note, size, "nothing set: %s", why);
        return false;
    }
    say_set(changed, &trial, note, size);
    Keys_note_made_inert(NULL, &next->config, &trial, note, size);
    if (followed[0])
        snprintf(note + strlen(note), size - strlen(note), "; %s", followed);
    if (Config_equal(&trial, &next->config)) {
        snprintf(note + strlen(note), size - strlen(note), ": as before, nothing to compute");
        return true;
    }
    /* A toggle set on is where its key turns it back on. */
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (changed[i] && s->step == STEP_TOGGLE && Setting_get(s, &trial) != 0)
            Setting_put(s, &next->on_values, Setting_get(s, &trial));
    }
    next->config = trial;
    return true;
}
