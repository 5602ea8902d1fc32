/* The key table: one table binds the keys and writes the `?` help (htop's
 * Action.c).  A parameter's key is its short option letter; the capital raises, the small
 * letter lowers (or cycles backwards).  The setting keys are generated from the settings
 * table (config.h), which says which keys step a setting and how; the other keys are listed
 * here.  Setting keys change Controls only; the loop then submits the new Config.
 */
#ifndef ATTNSCOPE_TUI_KEYS_H
#define ATTNSCOPE_TUI_KEYS_H

#include "attnscope/config.h"

#include <stdbool.h>
#include <stddef.h>

/* What the main (depth) panel shows: `v` cycles through them. */
typedef enum {
    PANEL_STABLE_RANK,
    PANEL_WIDTH_SWEEP,
    PANEL_GRADIENT,
    PANEL_SIMILARITY,
    PANEL_ENTROPY,       /* row entropies against depth, their bounds (docs/model.md §2, §3) */
    PANEL_ATTENTION_MAP, /* the shown layer's A (or A_ℓ⋯A_1) alone on the panels' area */
    PANEL_CONDITIONING,  /* κ of the sub-block's Jacobian against depth (docs/model.md §8) */
    PANEL_COUNT
} Panel;

/* How the result is shown; changing it computes nothing that the snapshot already has. */
typedef struct {
    bool overlays; /* theory: predicted curves, densities, the predicted outlier */
    Panel panel;
    /* The network without and with gap removal side by side; in the conditioning view, the
       normal and the cutting-skip initialisation. */
    bool compare;
    /* Presentation mode (--present, b): whole-cell points, bold strokes and text, the tour's
       caption on screen. */
    bool present;
    int zoom; /* 0: every panel; k: panel k (1, 2, ...) alone on the whole screen */
} Display;

/* The panels of a frame, in the order zoom counts them: 3, 4 in the compare view, 1 in the
   attention map's view (the map needs the rows). */
int Display_panel_count(const Display *d);

/* The settings the keys turn, the values the toggle keys turn back on, and the display. */
typedef struct {
    Config config;
    Config on_values; /* of each STEP_TOGGLE setting (the gap mode `g` restores): never off */
    Display display;
    /* For each setting (table order) that raised its bound (T raised d): the bound's value
       before and after, so lowering the setting lowers the bound back while nobody else
       has changed it.  NaN: nothing raised. */
    double bound_before[SETTINGS_MAX], bound_after[SETTINGS_MAX];
    /* For each setting (table order) that its bound took down (t lowered w under T): its
       value before and after, so raising the bound again brings it back while nobody else
       has changed it.  NaN: nothing lowered. */
    double lowered_before[SETTINGS_MAX], lowered_after[SETTINGS_MAX];
} Controls;

/* ACTION_SETTING changes config (a new job); ACTION_DISPLAY changes only display;
   ACTION_EXPORT writes the shown result as CSV and SVG files, ACTION_SAVE_PRESET asks for
   a name and saves the settings as a preset, ACTION_PICK_PRESET opens the preset picker,
   ACTION_SETTING_LINE the line that sets any setting by name (setline.h);
   the tour keys load the next or previous preset of the classroom tour; ACTION_CANCEL stops
   the running export, else the running job. */
typedef enum {
    ACTION_SETTING,
    ACTION_DISPLAY,
    ACTION_EXPORT,
    ACTION_SAVE_PRESET,
    ACTION_PICK_PRESET,
    ACTION_SETTING_LINE,
    ACTION_TOUR_NEXT,
    ACTION_TOUR_PREVIOUS,
    ACTION_HELP,
    ACTION_WARNINGS,
    ACTION_QUIT,
    ACTION_REDRAW,
    ACTION_CANCEL
} KeyAction;

/* A help line is at most KEYS_HELP_COLUMNS columns wide, so that two columns of them fit
   an 80-column terminal. */
enum { KEYS_NOTE_SIZE = 600, KEYS_HELP_SIZE = 80, KEYS_HELP_COLUMNS = 34 };

typedef struct {
    int key;          /* as wgetch returns it */
    const char *name; /* as the help spells the key */
    const char *help;
    KeyAction kind;
    const Setting *setting; /* ACTION_SETTING: the setting the key steps, */
    int direction;          /* up (+1: raise, next) or down (-1: lower, previous) */
    bool (*apply)(Controls *c, char *note, size_t size); /* ACTION_DISPLAY */
} KeyBinding;

/* The key as people write it: "T", "F1", "Esc", "Space", "Enter", "←", "Ctrl-L". */
void Keys_name(int key, char *out, size_t size);

/* The main panel's name ("stable rank", "width sweep", ...). */
const char *Panel_name(Panel p);
/* The panel of that name into *out; false when no panel has it. */
bool Panel_named(const char *name, Panel *out);

/* Controls starting from a valid config (theory overlays on, the stable-rank panel). */
Controls Controls_from(const Config *c);

/* ACTION_SETTING, ACTION_DISPLAY: changes c as b says and, when the change was adjusted or
   refused, says why in note (empty otherwise).  Returns false when nothing changed. */
bool Keys_apply(const KeyBinding *b, Controls *c, char *note, size_t size);
/* Appends to note ("; "-separated) each setting away from its default that a change from
   `before` to `after` leaves without effect (a sink of 5 when the attention turns markov), as
   --batch warns; s (the setting changed, NULL for none) is not named, since the change itself
   says so. */
void Keys_note_made_inert(const Setting *s, const Config *before, const Config *after, char *note,
                          size_t size);

/* Takes every setting that another bounds back under its bound (T ≤ d, w < T, layer ≤ depth)
   and each that must divide another to their greatest common divisor (H and d), as the keys
   do, saying so in note.  Returns false, changing nothing, where one would go below its
   minimum. */
bool Keys_settle(Config *c, char *note, size_t size);

/* The binding of key, or NULL. */
const KeyBinding *Keys_find(int key);
int Keys_count(void);
const KeyBinding *Keys_at(int index);

/* "T       tokens T ×2" for the help overlay. */
void Keys_help_line(const KeyBinding *b, char *out, size_t size);

/* The compact help line of a small screen, which needs half the lines and so has room for
   the words: "T t   tokens T ×2|÷2" for a setting's raise key a and its lower key b (and for
   the other keys that come in pairs: v V, > <, h F1), else a's line alone.  Returns the keys
   it took: 2 (a and b) or 1 (a). */
int Keys_help_compact(const KeyBinding *a, const KeyBinding *b, char *out, size_t size);

#endif
