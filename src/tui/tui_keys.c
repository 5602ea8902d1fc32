/* A key's way through the screen: the size gate (below the minimum size only q acts), then
 * whatever holds the keys while open (the picker, a prompt, the : line, the long-job question,
 * the help, the warnings list), the mouse, and a bound key's action on the main screen.
 * Apart from the loop because it only routes: what a key does is in the files it calls. */
#include "tui_internal.h"

#include "save.h"

#include <curses.h>

#include <stdio.h>
#include <string.h>

void Loop_prompt_open(Loop *l, int purpose)
{
    bool name = purpose == PROMPT_PRESET_NAME;
    l->prompting = purpose;
    l->name_left_out[0] = '\0';
    l->prompt = (Prompt){
        .title = name ? " save the settings as a preset " : " export the shown result ",
        .label = name ? "name: " : "directory: ",
        .hint = name ? "Enter saves (empty: named by the time); Esc cancels"
                     : "Enter writes CSV + SVG there (empty: attnscope-<time>); Esc cancels",
        .max_chars = name ? SAVE_NAME_MAX : PROMPT_SIZE - 1,
        .allowed = name ? Save_name_char : Prompt_printable,
    };
}

/* A key while a prompt is open.  A failed save or export (a name taken, a directory that
   cannot be written) keeps the prompt open to change what was typed. */
static void prompt_key(Loop *l, int key)
{
    bool name = l->prompting == PROMPT_PRESET_NAME;
    switch (Prompt_key(&l->prompt, key)) {
    case PROMPT_EDITED:
        break;
    case PROMPT_DONE:
        if ((name ? Loop_save_settings(l) : Loop_export_shown(l)) == 0)
            l->prompting = PROMPT_NONE;
        break;
    case PROMPT_CANCEL:
        l->prompting = PROMPT_NONE;
        snprintf(l->note, sizeof l->note, name ? "not saved" : "not exported");
        break;
    case PROMPT_REFUSED: {
        char typed[32];
        Keys_name(key, typed, sizeof typed);
        size_t used = strlen(l->name_left_out);
        if (name && key >= 0x20 && key < 0x7f && used + 5 < sizeof l->name_left_out)
            snprintf(l->name_left_out + used, sizeof l->name_left_out - used, "%s'%c'",
                     used ? " " : "", key);
        snprintf(l->note, sizeof l->note,
                 name ? "%s refused: a preset's name is its file name, which the command line "
                        "reads unquoted: letters, digits, '-', '_' and '.'"
                      : "%s refused: a directory is typed in printable ASCII",
                 typed);
        break;
    }
    case PROMPT_FULL:
        snprintf(l->note, sizeof l->note, "at most %d characters", l->prompt.max_chars);
        break;
    }
}

/* A key while the : line is open.  Enter sets what it says as a key's change is set (the
   memory budget, then the job or the long-job question); a refusal keeps the line open, its
   reason under it, and sets nothing.  Either way the line goes into the history. */
static void setline_key(Loop *l, int key)
{
    switch (SetLine_key(&l->setline, key, &l->controls.config)) {
    case PROMPT_DONE: {
        Controls next = l->controls;
        SetLine_remember(&l->setline);
        if (!SetLine_apply(l->setline.prompt.text, &next, l->note, sizeof l->note) ||
            Loop_settings_refused(l, &next.config))
            break;
        l->prompting = PROMPT_NONE;
        Trace_event(l->trace, "set %s", l->setline.prompt.text);
        Loop_change_to(l, &next);
        break;
    }
    case PROMPT_CANCEL:
        l->prompting = PROMPT_NONE;
        snprintf(l->note, sizeof l->note, "nothing set");
        break;
    case PROMPT_REFUSED:
        snprintf(l->note, sizeof l->note, "the line takes printable ASCII");
        break;
    case PROMPT_FULL:
        snprintf(l->note, sizeof l->note, "at most %d characters", l->setline.prompt.max_chars);
        break;
    case PROMPT_EDITED:
        break;
    }
}

/* A key while the warnings list is open: the arrows, j/k and the page keys scroll it by
   warnings; Esc, q and ! close it; the others do nothing. */
static void warnings_key(Loop *l, int key, const KeyBinding *b)
{
    switch (key) {
    case KEY_DOWN:
    case 'j':
        l->warnings_first++;
        break;
    case KEY_UP:
    case 'k':
        l->warnings_first--;
        break;
    case KEY_NPAGE:
    case ' ':
        l->warnings_first += 4;
        break;
    case KEY_PPAGE:
        l->warnings_first -= 4;
        break;
    case KEY_HOME:
        l->warnings_first = 0;
        break;
    default:
        if (key == 27 || key == 'q' || (b && b->kind == ACTION_WARNINGS))
            l->warnings_first = -1;
        return;
    }
    int count = View_warnings_shown(l->shown, &l->controls.display);
    if (l->warnings_first > count - 1)
        l->warnings_first = count - 1;
    if (l->warnings_first < 0)
        l->warnings_first = 0;
}

/* A click on a panel shows it alone (a click on it then shows them all again); the wheel
   over a stable-rank panel steps the shown layer as ] and [ do.  Keys do all of this too. */
static void on_mouse(Loop *l)
{
    ScreenMouse m;
    if (!Screen_mouse(l->screen, &m) || l->picker || l->prompting || l->help)
        return;
    int panel = -1;
    for (int i = 0; i < l->panels.count; i++) {
        const ViewRect *r = &l->panels.rect[i];
        if (m.row >= r->row && m.row < r->row + r->rows && m.col >= r->col &&
            m.col < r->col + r->cols)
            panel = i;
    }
    Trace_event(l->trace, "mouse %s row=%d col=%d panel=%d",
                m.kind == MOUSE_CLICK      ? "click"
                : m.kind == MOUSE_WHEEL_UP ? "wheel-up"
                                           : "wheel-down",
                m.row, m.col, panel);
    if (panel < 0)
        return;
    Display *d = &l->controls.display;
    if (m.kind == MOUSE_CLICK) {
        d->zoom = d->zoom ? 0 : l->panels.number[panel];
        snprintf(l->note, sizeof l->note, "%s",
                 d->zoom ? "one panel full screen (a click: back)" : "every panel");
        l->redraw = true;
    } else if (l->panels.stable_rank[panel]) {
        Loop_on_key(l, m.kind == MOUSE_WHEEL_UP ? ']' : '[');
    }
}

/* A key while the picker or a prompt is open: modal, they take every key until they close. */
static void modal_key(Loop *l, int key, const char *name)
{
    l->note[0] = '\0';
    if (l->picker)
        Loop_picker_key(l, key);
    else if (l->prompting == PROMPT_LONG_JOB)
        Loop_long_job_key(l, key);
    else if (l->prompting == PROMPT_SETTING_LINE)
        setline_key(l, key);
    else
        prompt_key(l, key);
    Trace_event(l->trace, "key %s %s gen=%lu", name, l->picker ? "picker" : "modal", l->generation);
}

/* A key while the help is open: Esc, q and the help keys close it, Space and the page keys
   turn its pages (where it has more than one); the others do nothing while it is read, so
   reading it changes nothing. */
static void help_key(Loop *l, int key, const KeyBinding *b, const char *name)
{
    if (key == 27 || key == 'q' || (b && b->kind == ACTION_HELP))
        l->help = false;
    else if (key == ' ' || key == KEY_NPAGE)
        l->help_page++;
    else if (key == KEY_PPAGE)
        l->help_page--;
    Trace_event(l->trace, "key %s help-%s gen=%lu", name, l->help ? "open" : "closed",
                l->generation);
}

/* A bound key's action on the main screen. */
static void bound_key(Loop *l, const KeyBinding *b)
{
    switch (b->kind) {
    case ACTION_SETTING: {
        Controls next = l->controls;
        if (!Keys_apply(b, &next, l->note, sizeof l->note) ||
            Loop_settings_refused(l, &next.config))
            break;
        Loop_submit_or_ask(l, &next, NULL);
        break;
    }
    case ACTION_DISPLAY: {
        Controls next = l->controls;
        Keys_apply(b, &next, l->note, sizeof l->note);
        Loop_change_to(l, &next);
        break;
    }
    case ACTION_EXPORT: {
        /* Open even before the result is in: what is typed next is a directory, never keys. */
        Loop_prompt_open(l, PROMPT_EXPORT_DIRECTORY);
        const char *refusal = ExportWait_said(&l->export_wait, Loop_export_gate(l));
        snprintf(l->note, sizeof l->note, "%s", refusal ? refusal : "");
        break;
    }
    case ACTION_SAVE_PRESET:
        Loop_prompt_open(l, PROMPT_PRESET_NAME);
        break;
    case ACTION_PICK_PRESET:
        Loop_picker_open(l);
        break;
    case ACTION_SETTING_LINE:
        SetLine_open(&l->setline);
        l->prompting = PROMPT_SETTING_LINE;
        break;
    case ACTION_TOUR_NEXT:
        Loop_tour_go(l, l->tour_step + 1);
        break;
    case ACTION_TOUR_PREVIOUS:
        Loop_tour_go(l, l->tour_step - 1);
        break;
    case ACTION_HELP:
        l->help = true;
        l->help_page = 0;
        break;
    case ACTION_WARNINGS:
        l->warnings_first = 0;
        break;
    case ACTION_REDRAW:
        l->repaint = true;
        break;
    case ACTION_QUIT:
        l->quit = true;
        break;
    case ACTION_CANCEL:
        Loop_cancel_job(l);
        break;
    }
}

/* The size gate: below the minimum size the size message hides what any other key would do,
   so only q acts, as it says.  An open line to type into is drawn on the last row, so its keys
   still reach it.  Returns true when the gate took the key. */
static bool size_gate(Loop *l, int key, const char *name)
{
    bool typing = l->prompting != PROMPT_NONE && l->prompting != PROMPT_LONG_JOB;
    if ((Screen_cols(l->screen) >= VIEW_MIN_COLS && Screen_rows(l->screen) >= VIEW_MIN_ROWS) ||
        typing)
        return false;
    l->quit = key == 'q';
    Trace_event(l->trace, "key %s %s below the minimum size", name, l->quit ? "quits" : "ignored");
    return true;
}

void Loop_on_key(Loop *l, int key)
{
    if (key == SCREEN_MOUSE) {
        on_mouse(l);
        return;
    }
    char name[32];
    Keys_name(key, name, sizeof name);
    l->redraw = true;
    if (key == SCREEN_RESIZED) {
        Trace_event(l->trace, "resize %dx%d", Screen_cols(l->screen), Screen_rows(l->screen));
        return;
    }
    if (size_gate(l, key, name))
        return;
    if (l->picker || l->prompting) {
        modal_key(l, key, name);
        return;
    }
    const KeyBinding *b = Keys_find(key);
    if (l->help) {
        help_key(l, key, b, name);
        return;
    }
    if (l->warnings_first >= 0) {
        warnings_key(l, key, b);
        Trace_event(l->trace, "key %s warnings first=%d gen=%lu", name, l->warnings_first,
                    l->generation);
        return;
    }
    l->note[0] = '\0';
    if (key == 27 && ExportJob_cancel(l->export_job)) {
        /* Esc cancels what the status line says it writes; the note comes when it has ended. */
        Trace_event(l->trace, "export-cancel gen=%lu", l->generation);
        return;
    }
    if (!b) {
        snprintf(l->note, sizeof l->note, "key %s does nothing; ? lists the keys", name);
        Trace_event(l->trace, "key %s unbound gen=%lu", name, l->generation);
        return;
    }
    bound_key(l, b);
    Trace_event(l->trace, "key %s gen=%lu", name, l->generation);
}
