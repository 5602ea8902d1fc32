/* Presets and the tour on the screen: the settings saved as a preset (p), a preset loaded all
 * or nothing, the picker (P), the tour's steps (> and <) and the step the start's settings are.
 * Apart from the loop because they read and write files through the app's parser and
 * writer, and hold the loop's preset state (loaded_preset, caption, tour_step). */
#include "tui_internal.h"

#include "attnscope/budget.h"
#include "attnscope/layer.h"
#include "presets.h"
#include "save.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* The settings of a preset are on: it is where the picker opens, and a tour step is where
   > and < go on from. */
void Loop_preset_applied(Loop *l, const char *path)
{
    snprintf(l->loaded_preset, sizeof l->loaded_preset, "%s", path);
    Tour_point_at(path, l->caption, sizeof l->caption);
    l->caption_config = l->controls.config;
    for (int i = 0; i < l->tour.count; i++)
        if (strcmp(l->tour.path[i], path) == 0)
            l->tour_step = i;
    Trace_event(l->trace, "preset %s", path);
}

/* Saves the settings as a preset named as typed at the prompt (the time when empty), which the
   command line, the tour and the picker read back; its header says when and what, for the picker.
   Returns 0 when saved. */
int Loop_save_settings(Loop *l)
{
    char text[1536], path[640], err[640], when[64];
    if (!l->format_preset) {
        snprintf(l->note, sizeof l->note, "saving presets is not available");
        return -1;
    }
    const Config *c = &l->controls.config;
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
    int n = Save_header(c, l->prompt.text[0] ? l->prompt.text : "unnamed", when, text, sizeof text);
    int status = -1, body = -1;
    if (n >= 0 && (size_t)n < sizeof text)
        body = l->format_preset(c, text + n, sizeof text - (size_t)n);
    if (body < 0 || (size_t)body >= sizeof text - (size_t)n)
        snprintf(l->note, sizeof l->note, "save failed: the preset text does not fit");
    else if (Save_preset(text, l->prompt.text, path, sizeof path, err, sizeof err))
        snprintf(l->note, sizeof l->note, "save failed: %.140s", err);
    else {
        snprintf(l->note, sizeof l->note, "saved %.140s%s%s", path,
                 l->name_left_out[0] ? "; left out of the name: " : "", l->name_left_out);
        status = 0;
    }
    Trace_event(l->trace, "save-preset %s", l->note);
    return status;
}

/* Loads the preset at path (the display stays as it is): all of it or, when it is
   malformed, invalid or above the memory budget, nothing, with the reason.  Returns 0 when
   loaded, 1 when its job is long and the screen asks first, -1 when refused. */
static int load_preset_file(Loop *l, const char *path)
{
    Config c = Config_default();
    char err[512];
    if (!l->load_preset) {
        snprintf(l->note, sizeof l->note, "loading presets is not available");
        return -1;
    }
    if (l->load_preset(&c, path, err, sizeof err) || Config_validate(&c, err, sizeof err)) {
        snprintf(l->note, sizeof l->note, "%.500s", err);
        return -1;
    }
    if (!Layer_weights_fit(&c, err, sizeof err)) {
        snprintf(l->note, sizeof l->note, "%.40s is not loaded: %.400s", path, err);
        return -1;
    }
    if (Budget_check_named(&c, l->memory_budget, l->memory_budget_source, err, sizeof err)) {
        snprintf(l->note, sizeof l->note, "%.40s: %.115s", path, err);
        return -1;
    }
    Controls next = Controls_from(&c);
    next.display = l->controls.display;
    /* A tour step may name the view it is about (the entropy steps: "View: entropy"). */
    char view[32];
    Panel panel;
    if (Tour_view(path, view, sizeof view) && Panel_named(view, &panel))
        next.display.panel = panel;
    return Loop_submit_or_ask(l, &next, path) ? 0 : 1;
}

/* Why > and < step nothing: where the tour was looked for. */
static void no_tour_note(Loop *l)
{
    if (l->tour_dir)
        snprintf(l->note, sizeof l->note, "no tour: no steps in %.200s", l->tour_dir);
    else
        snprintf(l->note, sizeof l->note,
                 "no tour: presets/tour not found beside the program, in its install or here "
                 "(ATTNSCOPE_TOUR names one)");
}

/* Loads the tour's step `step`, saying which step it is. */
void Loop_tour_go(Loop *l, int step)
{
    if (l->tour.count == 0) {
        no_tour_note(l);
        return;
    }
    if (step < 0 || step >= l->tour.count) {
        if (l->tour_step < 0)
            snprintf(l->note, sizeof l->note, "the tour has %d steps: press > to start it",
                     l->tour.count);
        else
            snprintf(l->note, sizeof l->note, "the tour has %d steps; this is step %d",
                     l->tour.count, l->tour_step + 1);
        return;
    }
    const char *path = l->tour.path[step];
    if (load_preset_file(l, path))
        return;
    char title[TOUR_TITLE_SIZE];
    Tour_title(path, title, sizeof title);
    snprintf(l->note, sizeof l->note, "%s (> next, < back)", title);
    Trace_event(l->trace, "tour step=%d %s", step + 1, path);
}

void Loop_picker_open(Loop *l)
{
    char buf[512];
    const char *user = Presets_user_directory(buf, sizeof buf);
    l->picker = Picker_new();
    int listed = l->picker ? Picker_list(l->picker, l->presets_dir, l->tour_dir, user) : -1;
    if (listed <= 0) {
        if (listed < 0)
            snprintf(l->note, sizeof l->note, "out of memory for the preset list");
        else
            snprintf(l->note, sizeof l->note, "no presets found (shipped: %.60s; yours: %.60s)",
                     l->presets_dir ? l->presets_dir : "none", user ? user : "none");
        Picker_free(l->picker);
        l->picker = NULL;
        return;
    }
    Picker_select_path(l->picker, l->loaded_preset);
}

static void picker_close(Loop *l)
{
    Picker_free(l->picker);
    l->picker = NULL;
}

/* A key while the picker is open: it moves the selection, loads, or closes. */
void Loop_picker_key(Loop *l, int key)
{
    switch (Picker_key(l->picker, key)) {
    case PICKER_STAY:
        break;
    case PICKER_CLOSE:
        picker_close(l);
        break;
    case PICKER_LOAD: {
        const PickerEntry *e = &l->picker->entry[l->picker->selected];
        int loaded = load_preset_file(l, e->path);
        /* A refused preset keeps the picker open, its reason in full inside it. */
        if (loaded < 0)
            break;
        if (loaded == 0)
            snprintf(l->note, sizeof l->note, "loaded %s preset %.100s",
                     Preset_source_name(e->source), e->name);
        picker_close(l);
        break;
    }
    }
}

/* Settings that start the screen as a tour step's preset does (--preset tour/02-...) are
   that step: its note is shown, and > goes on to the next step instead of the first.  A
   --preset outside the tour (or a tour that is not found) still shows its own note while
   the settings are its own; presentation mode without a tour says why > will not step. */
void Loop_tour_step_of_start(Loop *l, const TuiSettings *s)
{
    char err[256];
    Config c;
    for (int i = 0; s->load_preset && i < l->tour.count; i++) {
        c = Config_default();
        if (!s->load_preset(&c, l->tour.path[i], err, sizeof err) && Config_equal(&c, &s->config)) {
            Loop_preset_applied(l, l->tour.path[i]);
            return;
        }
    }
    c = Config_default();
    if (s->start_preset && s->load_preset &&
        !s->load_preset(&c, s->start_preset, err, sizeof err) && Config_equal(&c, &s->config))
        Loop_preset_applied(l, s->start_preset);
    if (s->present && l->tour.count == 0)
        no_tour_note(l);
}
