#include "export_gate.h"

#include "export_job.h"

/* Whether the conditioning of slot is in, or a note says why there is none. */
static bool conditioning_settled(const Snapshot *s, int slot)
{
    return s->has_conditioning[slot] || s->conditioning_note[slot][0];
}

ExportGate ExportGate_of(const Snapshot *shown, const Config *settings, bool conditioning_view,
                         bool compare, bool writing)
{
    if (writing)
        return EXPORT_GATE_WRITING;
    if (!shown || shown->failed || !shown->done || !Config_equal(&shown->result->config, settings))
        return EXPORT_GATE_WAIT_RESULT;
    if (conditioning_view &&
        (!conditioning_settled(shown, 0) || (compare && !conditioning_settled(shown, 1))))
        return EXPORT_GATE_WAIT_CONDITIONING;
    if (compare && !conditioning_view && !shown->has_compare)
        return EXPORT_GATE_WAIT_COMPARE;
    return EXPORT_GATE_OPEN;
}

const char *ExportGate_refusal(ExportGate g)
{
    switch (g) {
    case EXPORT_GATE_WRITING:
        return EXPORT_JOB_STILL_WRITING;
    case EXPORT_GATE_WAIT_RESULT:
        return "nothing to export yet: wait for the result";
    case EXPORT_GATE_WAIT_CONDITIONING:
        return "nothing to export yet: wait for the conditioning";
    case EXPORT_GATE_WAIT_COMPARE:
        return "nothing to export yet: wait for the network with the gap toggled";
    case EXPORT_GATE_OPEN:
        break;
    }
    return NULL;
}

static bool waits(ExportGate g)
{
    return g == EXPORT_GATE_WAIT_RESULT || g == EXPORT_GATE_WAIT_CONDITIONING ||
           g == EXPORT_GATE_WAIT_COMPARE;
}

const char *ExportWait_said(ExportWait *w, ExportGate g)
{
    w->waiting = waits(g);
    return ExportGate_refusal(g);
}

bool ExportWait_ended(ExportWait *w, ExportGate g)
{
    if (!w->waiting || g != EXPORT_GATE_OPEN)
        return false;
    w->waiting = false;
    return true;
}
