#include "export_gate.h"

#include "export_job.h"

ExportGate ExportGate_of(const Snapshot *shown, const Config *settings, bool conditioning_view,
                         bool writing)
{
    if (writing)
        return EXPORT_GATE_WRITING;
    if (!shown || shown->failed || !shown->done || !Config_equal(&shown->result->config, settings))
        return EXPORT_GATE_WAIT_RESULT;
    if (conditioning_view && !shown->has_conditioning[0] && !shown->conditioning_note[0][0])
        return EXPORT_GATE_WAIT_CONDITIONING;
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
    case EXPORT_GATE_OPEN:
        break;
    }
    return NULL;
}

static bool waits(ExportGate g)
{
    return g == EXPORT_GATE_WAIT_RESULT || g == EXPORT_GATE_WAIT_CONDITIONING;
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
