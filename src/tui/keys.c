#include "keys.h"

#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Seeds travel through JSON as doubles: stay below 2^53. */
#define SEED_LIMIT 9007199254740991ull
/* σ_qk steps by 2^¼ between these; the lower end is uniform attention for every purpose. */
#define SIGMA_QK_MIN (1.0 / 64.0)

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

/* Keeps the window below T and the shown layer within the depth, saying so. */
static void settle(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->window > k->tokens - 1) {
        k->window = k->tokens - 1;
        note_add(note, size, "w lowered to %d (w < T)", k->window);
    }
    if (k->layer > k->depth) {
        k->layer = k->depth;
        note_add(note, size, "shown layer lowered to %d (the depth)", k->layer);
    }
}

static bool tokens_up(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->tokens >= CONFIG_TOKENS_MAX) {
        note_add(note, size, "T is at its maximum, %d", CONFIG_TOKENS_MAX);
        return false;
    }
    k->tokens = k->tokens * 2 > CONFIG_TOKENS_MAX ? CONFIG_TOKENS_MAX : k->tokens * 2;
    if (k->tokens > k->width) {
        k->width = k->tokens;
        note_add(note, size, "d raised to %d with T (the input needs T ≤ d)", k->width);
    }
    return true;
}

static bool tokens_down(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->tokens <= CONFIG_TOKENS_MIN) {
        note_add(note, size, "T is at its minimum, %d", CONFIG_TOKENS_MIN);
        return false;
    }
    k->tokens = k->tokens / 2 < CONFIG_TOKENS_MIN ? CONFIG_TOKENS_MIN : k->tokens / 2;
    settle(c, note, size);
    return true;
}

static bool width_up(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->width >= CONFIG_WIDTH_MAX) {
        note_add(note, size, "d is at its maximum, %d", CONFIG_WIDTH_MAX);
        return false;
    }
    k->width = k->width * 2 > CONFIG_WIDTH_MAX ? CONFIG_WIDTH_MAX : k->width * 2;
    return true;
}

static bool width_down(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    int width = k->width / 2;
    if (width < CONFIG_TOKENS_MIN) {
        note_add(note, size, "d cannot go below %d (T ≥ %d and T ≤ d)", CONFIG_TOKENS_MIN,
                 CONFIG_TOKENS_MIN);
        return false;
    }
    k->width = width;
    if (k->tokens > width) {
        k->tokens = width;
        note_add(note, size, "T lowered to %d with d (the input needs T ≤ d)", width);
    }
    settle(c, note, size);
    return true;
}

static bool depth_up(Controls *c, char *note, size_t size)
{
    if (c->config.depth >= CONFIG_DEPTH_MAX) {
        note_add(note, size, "the depth is at its maximum, %d", CONFIG_DEPTH_MAX);
        return false;
    }
    c->config.depth++;
    return true;
}

static bool depth_down(Controls *c, char *note, size_t size)
{
    if (c->config.depth <= CONFIG_DEPTH_MIN) {
        note_add(note, size, "the depth is at its minimum, %d", CONFIG_DEPTH_MIN);
        return false;
    }
    c->config.depth--;
    settle(c, note, size);
    return true;
}

/* σ_qk·2^(steps/4), landing exactly on the powers 2^(k/4) once it has been on one. */
static double sigma_step(double sigma, int steps)
{
    double quarters = 4.0 * log2(sigma);
    double k = round(quarters);
    if (fabs(quarters - k) < 1e-9)
        return exp2((k + steps) / 4.0);
    return sigma * exp2(steps / 4.0);
}

static bool sigma_up(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->sigma_qk >= CONFIG_SIGMA_QK_MAX) {
        note_add(note, size, "σ_qk is at its maximum, %g", CONFIG_SIGMA_QK_MAX);
        return false;
    }
    double s = sigma_step(k->sigma_qk, 1);
    k->sigma_qk = s > CONFIG_SIGMA_QK_MAX ? CONFIG_SIGMA_QK_MAX : s;
    return true;
}

static bool sigma_down(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->sigma_qk <= SIGMA_QK_MIN) {
        note_add(note, size, "σ_qk is at its smallest step, %g", SIGMA_QK_MIN);
        return false;
    }
    double s = sigma_step(k->sigma_qk, -1);
    k->sigma_qk = s < SIGMA_QK_MIN ? SIGMA_QK_MIN : s;
    return true;
}

/* The next (step +1) or previous (step −1) of count names, wrapping around. */
static int cycle(int value, int count, int step)
{
    return (value + step + count) % count;
}

static bool attention_next(Controls *c, char *note, size_t size)
{
    (void)note, (void)size;
    c->config.attention = (Attention)cycle((int)c->config.attention, ATTENTION_NAMES.count, 1);
    return true;
}

static bool attention_previous(Controls *c, char *note, size_t size)
{
    (void)note, (void)size;
    c->config.attention = (Attention)cycle((int)c->config.attention, ATTENTION_NAMES.count, -1);
    return true;
}

static bool mask_next(Controls *c, char *note, size_t size)
{
    c->config.mask = (Mask)cycle((int)c->config.mask, MASK_NAMES.count, 1);
    settle(c, note, size);
    return true;
}

static bool mask_previous(Controls *c, char *note, size_t size)
{
    c->config.mask = (Mask)cycle((int)c->config.mask, MASK_NAMES.count, -1);
    settle(c, note, size);
    return true;
}

static void window_note(const Controls *c, char *note, size_t size)
{
    if (c->config.mask != MASK_WINDOW && c->config.mask != MASK_WINDOW_CAUSAL)
        note_add(note, size, "w is used by the window masks (m)");
}

static bool window_up(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->window >= k->tokens - 1) {
        note_add(note, size, "w is at its maximum, T − 1 = %d", k->tokens - 1);
        return false;
    }
    k->window++;
    window_note(c, note, size);
    return true;
}

static bool window_down(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->window <= 1) {
        note_add(note, size, "w is at its minimum, 1");
        return false;
    }
    k->window--;
    window_note(c, note, size);
    return true;
}

static bool layernorm_next(Controls *c, char *note, size_t size)
{
    (void)note, (void)size;
    c->config.layernorm = (LayerNorm)cycle((int)c->config.layernorm, LAYERNORM_NAMES.count, 1);
    return true;
}

static bool layernorm_previous(Controls *c, char *note, size_t size)
{
    (void)note, (void)size;
    c->config.layernorm = (LayerNorm)cycle((int)c->config.layernorm, LAYERNORM_NAMES.count, -1);
    return true;
}

static bool skip_next(Controls *c, char *note, size_t size)
{
    (void)note, (void)size;
    c->config.skip = (Skip)cycle((int)c->config.skip, SKIP_NAMES.count, 1);
    return true;
}

static bool skip_previous(Controls *c, char *note, size_t size)
{
    (void)note, (void)size;
    c->config.skip = (Skip)cycle((int)c->config.skip, SKIP_NAMES.count, -1);
    return true;
}

static bool gap_toggle(Controls *c, char *note, size_t size)
{
    (void)note, (void)size;
    Config *k = &c->config;
    if (k->gap == GAP_OFF) {
        k->gap = c->gap_mode;
    } else {
        c->gap_mode = k->gap;
        k->gap = GAP_OFF;
    }
    return true;
}

static bool gap_next(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->gap == GAP_OFF) {
        k->gap = c->gap_mode;
        note_add(note, size, "gap removal on");
        return true;
    }
    /* Cycles through the modes that remove the gap; `g` turns removal off. */
    int on_modes = GAP_NAMES.count - 1;
    k->gap = (Gap)(1 + cycle((int)k->gap - 1, on_modes, 1));
    c->gap_mode = k->gap;
    return true;
}

static bool layer_up(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->layer >= k->depth) {
        note_add(note, size, "layer %d is the last (L raises the depth)", k->layer);
        return false;
    }
    k->layer++;
    return true;
}

static bool layer_down(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->layer <= 1) {
        note_add(note, size, "layer 1 is the first");
        return false;
    }
    k->layer--;
    return true;
}

static bool new_seed(Controls *c, char *note, size_t size)
{
    (void)note, (void)size;
    Config *k = &c->config;
    k->seed = k->seed >= SEED_LIMIT ? 0 : k->seed + 1;
    return true;
}

static bool seeds_up(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->seeds >= KEYS_SEEDS_MAX) {
        note_add(note, size, "the ensemble is at its maximum, %d seeds", KEYS_SEEDS_MAX);
        return false;
    }
    k->seeds = k->seeds * 2 > KEYS_SEEDS_MAX ? KEYS_SEEDS_MAX : k->seeds * 2;
    return true;
}

static bool seeds_down(Controls *c, char *note, size_t size)
{
    Config *k = &c->config;
    if (k->seeds <= 1) {
        note_add(note, size, "the ensemble is one seed already");
        return false;
    }
    k->seeds = k->seeds / 2 < 1 ? 1 : k->seeds / 2;
    return true;
}

static bool overlays_toggle(Controls *c, char *note, size_t size)
{
    c->display.overlays = !c->display.overlays;
    note_add(note, size, "theory overlays %s (circles stay)", c->display.overlays ? "on" : "off");
    return true;
}

static const char *const PANEL_NAMES[PANEL_COUNT] = {"stable rank", "width sweep", "gradient norms",
                                                     "token similarity"};

const char *Panel_name(Panel p)
{
    return p >= 0 && p < PANEL_COUNT ? PANEL_NAMES[p] : "?";
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
    note_add(note, size, "compare view %s", c->display.compare ? "on" : "off");
    return true;
}

static const KeyBinding KEYS[] = {
    {'T', "T", "tokens T ×2", ACTION_SETTING, tokens_up},
    {'t', "t", "tokens T ÷2", ACTION_SETTING, tokens_down},
    {'D', "D", "width d ×2", ACTION_SETTING, width_up},
    {'d', "d", "width d ÷2", ACTION_SETTING, width_down},
    {'L', "L", "depth +1", ACTION_SETTING, depth_up},
    {'l', "l", "depth −1", ACTION_SETTING, depth_down},
    {'S', "S", "σ_qk ×2^¼", ACTION_SETTING, sigma_up},
    {'s', "s", "σ_qk ÷2^¼", ACTION_SETTING, sigma_down},
    {'a', "a", "attention kind next", ACTION_SETTING, attention_next},
    {'A', "A", "attention kind previous", ACTION_SETTING, attention_previous},
    {'m', "m", "mask next", ACTION_SETTING, mask_next},
    {'M', "M", "mask previous", ACTION_SETTING, mask_previous},
    {'W', "W", "window w +1", ACTION_SETTING, window_up},
    {'w', "w", "window w −1", ACTION_SETTING, window_down},
    {'n', "n", "LayerNorm next", ACTION_SETTING, layernorm_next},
    {'N', "N", "LayerNorm previous", ACTION_SETTING, layernorm_previous},
    {'k', "k", "skip next", ACTION_SETTING, skip_next},
    {'K', "K", "skip previous", ACTION_SETTING, skip_previous},
    {'g', "g", "gap removal on / off", ACTION_SETTING, gap_toggle},
    {'G', "G", "gap mode next", ACTION_SETTING, gap_next},
    {']', "]", "shown layer +1", ACTION_SETTING, layer_up},
    {'[', "[", "shown layer −1", ACTION_SETTING, layer_down},
    {KEY_RIGHT, "Right", "shown layer +1", ACTION_SETTING, layer_up},
    {KEY_LEFT, "Left", "shown layer −1", ACTION_SETTING, layer_down},
    {'r', "r", "new seed", ACTION_SETTING, new_seed},
    {'E', "E", "ensemble seeds ×2", ACTION_SETTING, seeds_up},
    {'e', "e", "ensemble seeds ÷2", ACTION_SETTING, seeds_down},
    {'o', "o", "theory overlays on / off", ACTION_DISPLAY, overlays_toggle},
    {'v', "v", "view: rank/width/grad/sim", ACTION_DISPLAY, panel_next},
    {'V', "V", "view previous", ACTION_DISPLAY, panel_previous},
    {'c', "c", "compare: gap off | removed", ACTION_DISPLAY, compare_toggle},
    {'x', "x", "export CSV + SVG", ACTION_EXPORT, NULL},
    {'p', "p", "save settings as a preset", ACTION_SAVE_PRESET, NULL},
    {'P', "P", "presets: pick one to load", ACTION_PICK_PRESET, NULL},
    {'>', ">", "tour: next step", ACTION_TOUR_NEXT, NULL},
    {'<', "<", "tour: previous step", ACTION_TOUR_PREVIOUS, NULL},
    {'?', "?", "help (any key closes it)", ACTION_HELP, NULL},
    {'L' & 0x1f, "Ctrl-L", "redraw the screen", ACTION_REDRAW, NULL},
    {'q', "q", "quit", ACTION_QUIT, NULL},
};
enum { KEYS_COUNT = sizeof KEYS / sizeof KEYS[0] };

Controls Controls_from(const Config *c)
{
    return (Controls){
        .config = *c,
        .gap_mode = c->gap == GAP_OFF ? GAP_CENTER : c->gap,
        .display = {.overlays = true, .panel = PANEL_STABLE_RANK, .compare = false},
    };
}

const KeyBinding *Keys_find(int key)
{
    for (int i = 0; i < KEYS_COUNT; i++)
        if (KEYS[i].key == key)
            return &KEYS[i];
    return NULL;
}

int Keys_count(void)
{
    return KEYS_COUNT;
}

const KeyBinding *Keys_at(int index)
{
    return index >= 0 && index < KEYS_COUNT ? &KEYS[index] : NULL;
}

void Keys_help_line(const KeyBinding *b, char *out, size_t size)
{
    snprintf(out, size, "%-7s %s", b->name, b->help);
}
