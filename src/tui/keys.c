#include "keys.h"

#include "attnscope/layer.h"

#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends one sentence to the note, separated by "; ". */
static void note_add(char *note, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_add(char *note, size_t size, const char *fmt, ...)
{
    size_t used = strlen(note);
    if (used && used + 2 < size) {
        memcpy(note + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + used, size - used, fmt, ap);
    va_end(ap);
}

/* Where the keys stop: the accepted range, narrowed by key_min and key_max. */
static double key_min(const Setting *s)
{
    return s->key_min ? s->key_min : s->min;
}

static double key_max(const Setting *s)
{
    return s->key_max ? s->key_max : s->max;
}

/* x·2^(steps/4), landing exactly on the powers 2^(k/4) once it has been on one. */
static double quarter_step(double x, int steps)
{
    double quarters = 4.0 * log2(x);
    double k = round(quarters);
    if (fabs(quarters - k) < 1e-9)
        return exp2((k + steps) / 4.0);
    return x * exp2(steps / 4.0);
}

/* The next (step +1) or previous (step −1) of count names, wrapping around. */
static int cycle(int value, int count, int step)
{
    return (value + step + count) % count;
}

/* A pattern's next stop among its names (all, 1:1, 5:1 …); from a pattern of the user's that
   is none of them, the first. */
static double next_pattern(const Setting *s, double value)
{
    int at = -1;
    double code = 0;
    for (int i = 0; i < s->names->count && at < 0; i++)
        if (Config_window_layers_code(s->names->names[i], &code) == 0 && code == value)
            at = i;
    Config_window_layers_code(s->names->names[(at + 1) % s->names->count], &code);
    return code;
}

static int gcd(int a, int b)
{
    while (b) {
        int r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Whether s divides the setting it must divide (H divides d), or has no such setting. */
static bool divides(const Setting *s, const Config *c)
{
    if (!s->divides || (s->divides_in_use && !s->divides_in_use(c)))
        return true;
    int value = (int)Setting_get(s, c), of = (int)Setting_get(Settings_find(s->divides), c);
    return value > 0 && of % value == 0;
}

bool Keys_settle(Config *c, char *note, size_t size)
{
    Config trial = *c;
    char said[KEYS_NOTE_SIZE] = "";
    for (bool moved = true; moved;) {
        moved = false;
        for (int i = 0; i < Settings_count(); i++) {
            const Setting *t = Settings_at(i);
            double limit = Setting_limit(t, &trial);
            const Setting *b = Setting_bound(t, &trial);
            if (!b || Setting_get(t, &trial) <= limit)
                continue;
            if (limit < key_min(t)) {
                note_add(note, size, "%s cannot go below %g (%s ≥ %g and %s)", b->key_label,
                         key_min(t) - t->bound_offset, t->label, key_min(t), t->bound_reason);
                return false;
            }
            Setting_put(t, &trial, limit);
            note_add(said, sizeof said, "%s lowered to %g with %s (%s)", t->key_label, limit,
                     b->label, t->bound_reason);
            moved = true;
        }
        for (int i = 0; i < Settings_count(); i++) {
            const Setting *t = Settings_at(i);
            if (!t->divides || divides(t, &trial))
                continue;
            const Setting *of = Settings_find(t->divides);
            int value = (int)Setting_get(t, &trial),
                common = gcd(value, (int)Setting_get(of, &trial));
            Setting_put(t, &trial, common);
            note_add(said, sizeof said, "%s lowered to %d with %s (%s divides %s)", t->key_label,
                     common, of->label, t->label, of->label);
            moved = true;
        }
    }
    *c = trial;
    if (said[0])
        note_add(note, size, "%s", said);
    return true;
}

/* Whether c with s at `to` is a configuration the program accepts, once the settings it
   bounds follow (the orthonormal input takes T down to d). */
static bool accepted_with(const Setting *s, const Config *c, double to)
{
    Config trial = *c;
    char why[KEYS_NOTE_SIZE] = "";
    Setting_put(s, &trial, to);
    return Keys_settle(&trial, why, sizeof why) && Config_validate(&trial, why, sizeof why) == 0;
}

/* Why a numeric setting cannot go further: at its maximum, at its bound, or at its minimum. */
static void at_end(const Setting *s, int direction, double top, char *note, size_t size)
{
    if (direction < 0 && s->min_note) {
        note_add(note, size, "%s", s->min_note);
    } else if (direction < 0) {
        note_add(note, size, "%s is at its minimum, %g", s->key_label, key_min(s));
    } else if (top < key_max(s)) {
        const Setting *b = Settings_find(s->bound);
        char offset[16] = "";
        if (s->bound_offset)
            snprintf(offset, sizeof offset, " %s %d", s->bound_offset < 0 ? "−" : "+",
                     abs(s->bound_offset));
        note_add(note, size, "%s is at its maximum, %s%s = %g (press %c to raise %s)", s->key_label,
                 b->label, offset, top, b->raise_key, b->key_label);
    } else {
        note_add(note, size, "%s is at its maximum, %g", s->key_label, top);
    }
}

static int setting_index(const Setting *s)
{
    for (int i = 0; i < Settings_count(); i++)
        if (Settings_at(i) == s)
            return i;
    return -1;
}

/* Lowering a setting that raised its bound (t after T raised d) takes the bound back down
   towards where it was, as long as it still holds the value the raise gave it (a d or D
   since then means the user chose d). */
static void lower_bound_back(const Setting *s, double to, Controls *c, Config *next, char *note,
                             size_t size)
{
    int i = setting_index(s);
    const Setting *b = Settings_find(s->bound);
    double now = Setting_get(b, next);
    if (i < 0 || isnan(c->bound_after[i]) || now != c->bound_after[i])
        return;
    double back = fmax(c->bound_before[i], to - s->bound_offset);
    if (back < now) {
        Setting_put(b, next, back);
        note_add(note, size, "%s lowered back to %g (%s had raised it)", b->key_label, back,
                 s->label);
    }
    if (back <= c->bound_before[i])
        c->bound_before[i] = c->bound_after[i] = NAN;
    else
        c->bound_after[i] = back;
}

/* The value s steps to from `value` (its value in next) by its rule, into *to: false (a note
   written at an end) where it does not move. */
static bool stepped_value(const Setting *s, int direction, Controls *c, const Config *next,
                          double value, char *note, size_t size, double *to)
{
    /* A bound this setting does not push stops it (w < T, layer ≤ depth). */
    double top =
        s->bound && !s->raises_bound ? fmin(key_max(s), Setting_limit(s, next)) : key_max(s);
    int count = s->names ? s->names->count : 0;
    *to = value;
    switch (s->step) {
    case STEP_NONE:
        return false;
    case STEP_CYCLE:
        if (s->kind == SETTING_PATTERN) {
            *to = next_pattern(s, value);
            break;
        }
        /* Past the names the other settings refuse (--wo orthogonal under --init mimetic). */
        *to = cycle((int)value, count, direction);
        for (int tried = 1; tried < count && !accepted_with(s, next, *to); tried++)
            *to = cycle((int)*to, count, direction);
        break;
    case STEP_TOGGLE:
        /* Down turns off (the first name) and back on; up steps through the names that are on. */
        if (value != 0 && direction < 0) {
            Setting_put(s, &c->on_values, value);
            *to = 0;
        } else if (value == 0) {
            *to = Setting_get(s, &c->on_values);
            if (direction > 0)
                note_add(note, size, "%s on", s->key_label);
        } else {
            *to = 1 + cycle((int)value - 1, count - 1, 1);
        }
        if (*to != 0)
            Setting_put(s, &c->on_values, *to);
        break;
    case STEP_NEW:
        *to = value >= key_max(s) ? key_min(s) : value + 1;
        break;
    case STEP_OFF_UP:
        /* off, 0, 1, 2, 4 … key_max, off: the first on value is 0, a real setting (gpt-oss's
           sink), so off is a value of its own. */
        *to = value == -INFINITY    ? 0
              : value < 1           ? 1
              : value >= key_max(s) ? -INFINITY
                                    : fmin(2 * value, key_max(s));
        break;
    case STEP_DOUBLE:
    case STEP_ONE:
    case STEP_QUARTER:
        if ((direction > 0 && value >= top) || (direction < 0 && value <= key_min(s))) {
            at_end(s, direction, top, note, size);
            return false;
        }
        if (s->step == STEP_DOUBLE)
            *to = direction > 0 ? 2 * value : floor(value / 2);
        else if (s->step == STEP_ONE)
            *to = value + direction;
        else
            *to = quarter_step(value, direction);
        *to = fmin(fmax(*to, key_min(s)), top);
        break;
    }
    return true;
}

/* The setting s raises with it (s = to now) follows it up, and back down when s goes down. */
static void follow_bound(const Setting *s, const Setting *b, int direction, double to,
                         Controls *after, Config *next, char *note, size_t size)
{
    double need = to - s->bound_offset, had = Setting_get(b, next);
    int i = setting_index(s);
    if (had < need) {
        Setting_put(b, next, need);
        note_add(note, size, "%s raised to %g with %s (%s; press %c to lower it back)",
                 b->key_label, need, s->label, s->bound_reason, s->lower_key);
        /* A chain of raises remembers where the bound started. */
        if (i >= 0 && (isnan(after->bound_after[i]) || after->bound_after[i] != had))
            after->bound_before[i] = had;
        if (i >= 0)
            after->bound_after[i] = need;
    } else if (direction < 0) {
        lower_bound_back(s, to, after, next, note, size);
    }
}

/* Remembers each setting other than s that its bound took down between `was` and next (w
   under a lower T), keeping where a chain of such lowerings started. */
static void remember_lowered(const Setting *s, const Config *was, const Config *next,
                             Controls *after)
{
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *t = Settings_at(i);
        double had = Setting_get(t, was), now = Setting_get(t, next);
        if (t == s || !t->bound || now >= had)
            continue;
        if (isnan(after->lowered_after[i]) || after->lowered_after[i] != had)
            after->lowered_before[i] = had;
        after->lowered_after[i] = now;
    }
}

/* A setting its bound took down comes back up towards where it was as the bound rises again
   (T back up brings w back), as long as it still holds the value the lowering gave it (a w
   or W since then means the user chose w).  A step of the setting itself forgets it. */
static void raise_lowered_back(const Setting *s, const Config *was, Controls *after, Config *next,
                               char *note, size_t size)
{
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *t = Settings_at(i);
        double now = Setting_get(t, next);
        if (isnan(after->lowered_after[i]))
            continue;
        if (t == s || Setting_get(t, was) != after->lowered_after[i]) {
            after->lowered_before[i] = after->lowered_after[i] = NAN;
            continue;
        }
        double back = fmin(after->lowered_before[i], Setting_limit(t, next));
        if (back <= now)
            continue;
        Setting_put(t, next, back);
        if (!divides(t, next)) {
            Setting_put(t, next, now);
            continue;
        }
        const Setting *b = Settings_find(t->bound);
        note_add(note, size, "%s raised back to %g (%s had lowered it)", t->key_label, back,
                 b->label);
        if (back >= after->lowered_before[i])
            after->lowered_before[i] = after->lowered_after[i] = NAN;
        else
            after->lowered_after[i] = back;
    }
}

void Keys_note_made_inert(const Setting *s, const Config *before, const Config *after, char *note,
                          size_t size)
{
    Config defaults = Config_default();
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *o = Settings_at(i);
        if (o != s && Setting_get(o, after) != Setting_get(o, &defaults) &&
            Setting_has_effect(o, before) && !Setting_has_effect(o, after))
            note_add(note, size, "%s now has no effect: %s", o->key_label ? o->key_label : o->name,
                     o->unused_note);
    }
}

/* Steps s up or down by its rule; the setting it raises with it, and those bounded by it,
   follow. */
static bool step(const Setting *s, int direction, Controls *c, char *note, size_t size)
{
    Config next = c->config;
    double value = Setting_get(s, &next), to;
    if (!stepped_value(s, direction, c, &next, value, note, size, &to))
        return false;
    Setting_put(s, &next, to);
    if (!divides(s, &next)) {
        const Setting *of = Settings_find(s->divides);
        note_add(note, size, "%s stays at %g: %g does not divide %s = %g", s->key_label, value, to,
                 of->label, Setting_get(of, &next));
        return false;
    }
    Controls after = *c;
    const Setting *b = Setting_bound(s, &next);
    if (b && s->raises_bound)
        follow_bound(s, b, direction, to, &after, &next, note, size);
    if (!Keys_settle(&next, note, size))
        return false;
    raise_lowered_back(s, &c->config, &after, &next, note, size);
    remember_lowered(s, &c->config, &next, &after);
    /* A relation no key settles (--init-mlp identity needs --mlp-ratio 1), or a setting a
       checkpoint's weights fix (--weights): the key stops. */
    char why[256];
    if (Config_validate(&next, why, sizeof why) || !Layer_weights_fit(&next, why, sizeof why)) {
        char kept[64];
        Setting_format(s, &c->config, 3, kept, sizeof kept);
        note_add(note, size, "%s stays at %s: %s", s->key_label, kept, why);
        return false;
    }
    *c = after;
    if (s->in_use && !s->in_use(&next))
        note_add(note, size, "%s", s->unused_note);
    /* The map's setting shows in the attention-map view alone: elsewhere the key says where,
       since nothing on the screen changes. */
    if (s == Settings_find("attention-map") && c->display.panel != PANEL_ATTENTION_MAP) {
        char shown[64];
        Setting_format(s, &next, 3, shown, sizeof shown);
        note_add(note, size, "%s %s: drawn in the attention-map view alone (v or V to it)",
                 s->key_label, shown);
    }
    Keys_note_made_inert(s, &c->config, &next, note, size);
    c->config = next;
    return true;
}

static bool overlays_toggle(Controls *c, char *note, size_t size)
{
    c->display.overlays = !c->display.overlays;
    note_add(note, size, "theory overlays %s (circles stay)", c->display.overlays ? "on" : "off");
    return true;
}

static const char *const PANEL_NAMES[PANEL_COUNT] = {
    "stable rank", "width sweep",   "gradient norms", "token similarity",
    "entropy",     "attention map", "conditioning"};

const char *Panel_name(Panel p)
{
    return p >= 0 && p < PANEL_COUNT ? PANEL_NAMES[p] : "?";
}

bool Panel_named(const char *name, Panel *out)
{
    for (int p = 0; p < PANEL_COUNT; p++)
        if (strcmp(name, PANEL_NAMES[p]) == 0) {
            *out = (Panel)p;
            return true;
        }
    return false;
}

static bool panel_next(Controls *c, char *note, size_t size)
{
    c->display.panel = (Panel)cycle((int)c->display.panel, PANEL_COUNT, 1);
    note_add(note, size, "view: %s", Panel_name(c->display.panel));
    return true;
}

static bool panel_previous(Controls *c, char *note, size_t size)
{
    c->display.panel = (Panel)cycle((int)c->display.panel, PANEL_COUNT, -1);
    note_add(note, size, "view: %s", Panel_name(c->display.panel));
    return true;
}

static bool compare_toggle(Controls *c, char *note, size_t size)
{
    c->display.compare = !c->display.compare;
    c->display.zoom = 0; /* the panels are others now */
    note_add(note, size, "compare view %s%s", c->display.compare ? "on" : "off",
             c->display.compare && c->display.panel == PANEL_CONDITIONING
                 ? ": initialisation normal | cutting-skip"
                 : "");
    return true;
}

int Display_panel_count(const Display *d)
{
    if (d->compare)
        return 4;
    return d->panel == PANEL_ATTENTION_MAP ? 1 : 3;
}

static bool present_toggle(Controls *c, char *note, size_t size)
{
    c->display.present = !c->display.present;
    note_add(note, size, "presentation mode %s%s", c->display.present ? "on" : "off",
             c->display.present ? " (z: one panel full screen)" : "");
    return true;
}

static bool zoom_next(Controls *c, char *note, size_t size)
{
    c->display.zoom = cycle(c->display.zoom, Display_panel_count(&c->display) + 1, 1);
    if (c->display.zoom)
        note_add(note, size, "panel %d of %d full screen (z: next, a click: back)", c->display.zoom,
                 Display_panel_count(&c->display));
    else
        note_add(note, size, "every panel");
    return true;
}

/* The keys that are not settings' (those come from the settings table). */
static const KeyBinding OTHER_KEYS[] = {
    {'o', "o", "theory overlays on / off", ACTION_DISPLAY, NULL, 0, overlays_toggle},
    {'v', "v", "view: rank/…/map/cond", ACTION_DISPLAY, NULL, 0, panel_next},
    {'V', "V", "view previous", ACTION_DISPLAY, NULL, 0, panel_previous},
    {'c', "c", "compare: gap | init (cond)", ACTION_DISPLAY, NULL, 0, compare_toggle},
    {'Z', "Z", "presentation mode on / off", ACTION_DISPLAY, NULL, 0, present_toggle},
    {'z', "z", "zoom: one panel, cycled", ACTION_DISPLAY, NULL, 0, zoom_next},
    {'x', "x", "export CSV + SVG", ACTION_EXPORT, NULL, 0, NULL},
    {'p', "p", "save settings as a preset", ACTION_SAVE_PRESET, NULL, 0, NULL},
    {'P', "P", "presets: pick one to load", ACTION_PICK_PRESET, NULL, 0, NULL},
    {':', ":", "set a setting by name", ACTION_SETTING_LINE, NULL, 0, NULL},
    {'>', ">", "tour: next step", ACTION_TOUR_NEXT, NULL, 0, NULL},
    {'<', "<", "tour: previous step", ACTION_TOUR_PREVIOUS, NULL, 0, NULL},
    {'!', "!", "all warnings, in full", ACTION_WARNINGS, NULL, 0, NULL},
    {'?', "?", "help (Esc ? q close it)", ACTION_HELP, NULL, 0, NULL},
    {'h', "h", "help, as ? does", ACTION_HELP, NULL, 0, NULL},
    {KEY_F(1), "F1", "help, as ? does", ACTION_HELP, NULL, 0, NULL},
    {'L' & 0x1f, "Ctrl-L", "redraw the screen", ACTION_REDRAW, NULL, 0, NULL},
    {27, "Esc", "cancel the export or job", ACTION_CANCEL, NULL, 0, NULL},
    {'q', "q", "quit", ACTION_QUIT, NULL, 0, NULL},
};
enum { OTHER_COUNT = sizeof OTHER_KEYS / sizeof OTHER_KEYS[0] };

/* Keys that do what another key does: the arrows step the shown layer as ] and [ do. */
static const struct {
    int key;
    const char *name;
    int same_as;
} ALIASES[] = {{KEY_RIGHT, "Right", ']'}, {KEY_LEFT, "Left", '['}};
enum { ALIAS_COUNT = sizeof ALIASES / sizeof ALIASES[0] };

/* How the help words a step: prefix, setting, suffix, for down and up. */
static const char *const STEP_WORDS[][2][2] = {
    [STEP_DOUBLE] = {{"", " ÷2"}, {"", " ×2"}},
    [STEP_ONE] = {{"", " −1"}, {"", " +1"}},
    [STEP_QUARTER] = {{"", " ÷2^¼"}, {"", " ×2^¼"}},
    [STEP_CYCLE] = {{"", " previous"}, {"", " next"}},
    /* Up from off turns the setting on at the mode it last had, as down does. */
    [STEP_TOGGLE] = {{"", " on / off"}, {"", " on / next mode"}},
    [STEP_NEW] = {{"", ""}, {"new ", ""}},
    [STEP_OFF_UP] = {{"", ""}, {"", " none|0|1|2|4|8"}},
};

enum { KEYS_MAX = 2 * SETTINGS_MAX + ALIAS_COUNT + OTHER_COUNT };

/* The table, built on first use: each setting's up and down keys, the aliases, the others. */
static struct {
    KeyBinding key[KEYS_MAX];
    char name[KEYS_MAX][8], help[KEYS_MAX][KEYS_HELP_SIZE];
    int count;
} table;

static void setting_key(const Setting *s, int key, int direction)
{
    int n = table.count++;
    const char *const *words = STEP_WORDS[s->step][direction > 0];
    snprintf(table.name[n], sizeof table.name[n], "%c", key);
    snprintf(table.help[n], sizeof table.help[n], "%s%s%s", words[0], s->key_label, words[1]);
    table.key[n] =
        (KeyBinding){key, table.name[n], table.help[n], ACTION_SETTING, s, direction, NULL};
}

static void build(void)
{
    if (table.count)
        return;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (s->raise_key)
            setting_key(s, s->raise_key, 1);
        if (s->lower_key)
            setting_key(s, s->lower_key, -1);
    }
    int settings = table.count;
    for (int a = 0; a < ALIAS_COUNT; a++)
        for (int i = 0; i < settings; i++)
            if (table.key[i].key == ALIASES[a].same_as) {
                table.key[table.count] = table.key[i];
                table.key[table.count].key = ALIASES[a].key;
                table.key[table.count++].name = ALIASES[a].name;
            }
    for (int i = 0; i < OTHER_COUNT; i++)
        table.key[table.count++] = OTHER_KEYS[i];
}

Controls Controls_from(const Config *c)
{
    Controls k = {
        .config = *c,
        .on_values = *c,
        .display = {.overlays = true, .panel = PANEL_STABLE_RANK, .compare = false},
    };
    for (int i = 0; i < SETTINGS_MAX; i++)
        k.bound_before[i] = k.bound_after[i] = k.lowered_before[i] = k.lowered_after[i] = NAN;
    /* A toggle that starts off turns on at its first name that is on. */
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (s->step == STEP_TOGGLE && Setting_get(s, c) == 0)
            Setting_put(s, &k.on_values, 1);
    }
    return k;
}

bool Keys_apply(const KeyBinding *b, Controls *c, char *note, size_t size)
{
    if (b->kind == ACTION_SETTING)
        return step(b->setting, b->direction, c, note, size);
    return b->apply && b->apply(c, note, size);
}

const KeyBinding *Keys_find(int key)
{
    build();
    for (int i = 0; i < table.count; i++)
        if (table.key[i].key == key)
            return &table.key[i];
    return NULL;
}

int Keys_count(void)
{
    build();
    return table.count;
}

const KeyBinding *Keys_at(int index)
{
    build();
    return index >= 0 && index < table.count ? &table.key[index] : NULL;
}

void Keys_name(int key, char *out, size_t size)
{
    static const struct {
        int key;
        const char *name;
    } NAMES[] = {
        {27, "Esc"},
        {' ', "Space"},
        {'\n', "Enter"},
        {'\r', "Enter"},
        {KEY_ENTER, "Enter"},
        {'\t', "Tab"},
        {KEY_BTAB, "Shift-Tab"},
        {127, "Backspace"},
        {KEY_BACKSPACE, "Backspace"},
        {KEY_DC, "Delete"},
        {KEY_IC, "Insert"},
        {KEY_HOME, "Home"},
        {KEY_END, "End"},
        {KEY_PPAGE, "PgUp"},
        {KEY_NPAGE, "PgDn"},
        {KEY_UP, "↑"},
        {KEY_DOWN, "↓"},
        {KEY_LEFT, "←"},
        {KEY_RIGHT, "→"},
        {KEY_MOUSE, "Mouse"},
    };
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (NAMES[i].key == key) {
            snprintf(out, size, "%s", NAMES[i].name);
            return;
        }
    const KeyBinding *b = Keys_find(key);
    if (b)
        snprintf(out, size, "%s", b->name);
    else if (key >= KEY_F(1) && key <= KEY_F(63))
        snprintf(out, size, "F%d", key - KEY_F0);
    else if (key > 32 && key < 127)
        snprintf(out, size, "%c", key);
    else if (key > 0 && key < 32)
        snprintf(out, size, "Ctrl-%c", key + '@');
    else
        snprintf(out, size, "key code %d", key);
}

void Keys_help_line(const KeyBinding *b, char *out, size_t size)
{
    snprintf(out, size, "%-7s %s", b->name, b->help);
}

/* The keys that are not a setting's but come in pairs all the same, as the compact help
   words them. */
static const struct {
    int first, second;
    const char *help;
} OTHER_PAIRS[] = {{'v', 'V', "view: next|previous"},
                   {'>', '<', "tour step: next|previous"},
                   {'h', KEY_F(1), "help, as ? does"}};

int Keys_help_compact(const KeyBinding *a, const KeyBinding *b, char *out, size_t size)
{
    char names[24];
    snprintf(names, sizeof names, "%s %s", a->name, b ? b->name : "");
    /* A toggle's two keys keep a line each: both turn it on from off, which one line's
       "up|down" words cannot say within the column. */
    if (b && a->kind == ACTION_SETTING && b->kind == ACTION_SETTING && a->setting == b->setting &&
        a->direction > 0 && b->direction < 0 && a->setting->step != STEP_TOGGLE) {
        const Setting *s = a->setting;
        const char *const(*words)[2] = STEP_WORDS[s->step];
        snprintf(out, size, "%-5s %s%s%s|%s", names, words[1][0], s->key_label, words[1][1],
                 words[0][1] + (words[0][1][0] == ' '));
        return 2;
    }
    for (size_t i = 0; b && i < sizeof OTHER_PAIRS / sizeof OTHER_PAIRS[0]; i++)
        if (a->key == OTHER_PAIRS[i].first && b->key == OTHER_PAIRS[i].second) {
            snprintf(out, size, "%-5s %s", names, OTHER_PAIRS[i].help);
            return 2;
        }
    snprintf(out, size, "%-5s %s", a->name, a->help);
    return 1;
}
