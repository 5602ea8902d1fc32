/* The question before a long job: a job whose cost (docs/model.md §7) is above confirm_above
 * asks first, and names the size that would fit where the view is the conditioning's; then its
 * answer (Enter, Esc, or a setting key that changes what is asked about).  Apart from
 * tui_job.c because it is a dialogue of its own, with its own state (Loop.pending, question,
 * fitting). */
#include "tui_internal.h"

#include "attnscope/cost.h"
#include "conditioning_fit.h"
#include "duration.h"

#include <stdio.h>

/* The conditioning view's question names the size that fits within this many seconds: the
   wait issue 25 asks an engineer's size to be answered within, and what --batch --max-time 300
   names, so that both front ends point at the same size.  Not CONFIRM_ABOVE_SECONDS: that is
   when to ask, not what is worth waiting for. */
#define CONDITIONING_FIT_SECONDS 300.0

/* The question takes no text: only Enter and Esc answer it. */
static bool no_text(int c)
{
    (void)c;
    return false;
}

/* A candidate of the fitting-size search priced as the worker prices the job of its view. */
typedef struct {
    Worker *worker;
    WorkerExtras extras;
} ViewPricing;

static double view_job_seconds(const Config *c, void *context)
{
    const ViewPricing *p = context;
    return Worker_estimate(p->worker, c, p->extras);
}

/* For the conditioning view's question, the size whose job would take at most
   CONDITIONING_FIT_SECONDS, or that none does, into l->fitting; nothing outside that view, nor
   where the asked size is that size. */
static void describe_fitting_size(Loop *l, const Controls *next)
{
    ViewPricing pricing = {.worker = l->worker, .extras = Loop_extras_for(&next->display)};
    l->fitting[0] = '\0';
    if (!pricing.extras.conditioning)
        return;
    char most[32];
    Duration_text(CONDITIONING_FIT_SECONDS, DURATION_ABOUT, most, sizeof most);
    const char *within = most + (most[0] == '~');
    Config fit;
    bool fits = ConditioningFit_search(&next->config, CONDITIONING_FIT_SECONDS, view_job_seconds,
                                       &pricing, &fit);
    /* The asked size itself fits (asked above confirm_above, below the bound): no other size
       to name, and naming it as the one that fits would read as a smaller one. */
    if (fits && fit.tokens == next->config.tokens && fit.width == next->config.width)
        return;
    ConditioningFit_phrase(fits ? &fit : NULL, within, l->fitting, sizeof l->fitting);
}

/* Starts the job for next (from a key, or from the preset at `preset`), or, when the cost
   model puts it above confirm_above, asks first and changes nothing yet.  Returns
   true when the settings are on. */
bool Loop_submit_or_ask(Loop *l, const Controls *next, const char *preset)
{
    double seconds = Worker_estimate(l->worker, &next->config, Loop_extras_for(&next->display));
    if (!(seconds > l->confirm_above)) {
        l->controls = *next;
        if (preset)
            Loop_preset_applied(l, preset);
        Loop_submit(l);
        return true;
    }
    l->pending = *next;
    snprintf(l->pending_preset, sizeof l->pending_preset, "%s", preset ? preset : "");
    char left[32];
    Duration_text(seconds, DURATION_ABOUT, left, sizeof left);
    const Config *c = &next->config;
    /* "about", not "about ~": the duration's own tilde says it twice.  Where the conditioning is
       priced to seek s_min at every layer the price is a ceiling (some layers stop at the
       bound: Cost_conditioning_seeks_s_min), and the question says so. */
    bool ceiling = Loop_extras_for(&next->display).conditioning && Cost_conditioning_seeks_s_min(c);
    snprintf(l->question, sizeof l->question,
             "%s %s to compute T=%d d=%d L=%d seeds=%d. Compute it? ",
             ceiling ? "at most" : "about", left + (left[0] == '~'), c->tokens, c->width, c->depth,
             c->seeds);
    describe_fitting_size(l, next);
    l->prompting = PROMPT_LONG_JOB;
    l->prompt = (Prompt){.title = " a long computation ",
                         .label = l->question,
                         .detail = l->fitting[0] ? l->fitting : NULL,
                         .hint = Loop_nothing_computed(l)
                                     ? "Enter computes it; Esc computes nothing yet"
                                     : "Enter computes it; Esc keeps the previous settings",
                         .max_chars = 0,
                         .allowed = no_text};
    Trace_event(l->trace, "confirm-ask seconds=%.1f", seconds);
    return false;
}

/* A setting or view key while the question is open steps the settings and view asked about,
   which are priced again: back at what the last job computed (a view it covers), nothing is
   asked or computed; still long, the question asks about the new ones; short enough, they are
   put on and computed. */
static void long_job_setting(Loop *l, const KeyBinding *b)
{
    Controls next = l->pending;
    if (!Keys_apply(b, &next, l->note, sizeof l->note) || Loop_settings_refused(l, &next.config))
        return; /* the question stays, about the settings it named */
    char preset[TOUR_PATH_SIZE];
    snprintf(preset, sizeof preset, "%s", l->pending_preset);
    l->prompting = PROMPT_NONE;
    if (!Loop_needs_job(l, &next)) {
        Loop_put_on(l, &next);
        snprintf(l->note, sizeof l->note, "back to the settings on: nothing to compute");
        Trace_event(l->trace, "confirm-back");
        return;
    }
    Loop_submit_or_ask(l, &next, preset[0] ? preset : NULL);
}

/* The answer to the long-job question: Enter puts the settings on and starts the job, Esc
   keeps the previous ones, with no job started; a setting or view key changes what is asked
   about (long_job_setting: leaving the conditioning view for one the last job covers asks
   nothing more); q quits, as the status line under the question offers; other keys leave the
   question open. */
void Loop_long_job_key(Loop *l, int key)
{
    switch (Prompt_key(&l->prompt, key)) {
    case PROMPT_DONE:
        l->prompting = PROMPT_NONE;
        l->controls = l->pending;
        if (l->pending_preset[0]) {
            Loop_preset_applied(l, l->pending_preset);
            char title[TOUR_TITLE_SIZE];
            Tour_title(l->pending_preset, title, sizeof title);
            snprintf(l->note, sizeof l->note, "%s", title);
        }
        Trace_event(l->trace, "confirm-go");
        Loop_submit(l);
        break;
    case PROMPT_CANCEL:
        l->prompting = PROMPT_NONE;
        snprintf(l->note, sizeof l->note, "%s",
                 Loop_nothing_computed(l)
                     ? "nothing computed: change the settings with keys (T, d, "
                       "L, ...), or q quits"
                     : "kept the previous settings and their result: no new job");
        Trace_event(l->trace, "confirm-stay");
        break;
    default: {
        const KeyBinding *b = Keys_find(key);
        if (b && (b->kind == ACTION_SETTING || b->kind == ACTION_DISPLAY))
            long_job_setting(l, b);
        else if (b && b->kind == ACTION_QUIT)
            l->quit = true;
        else
            snprintf(l->note, sizeof l->note,
                     "answer with Enter (compute) or Esc (keep), or change the settings or the "
                     "view asked about with their keys");
        break;
    }
    }
}
