/* x's gate and the export prompt's wait (src/tui/export_gate.c): the gate of each state a
 * shown snapshot can be in, and the wait as a state, set where the refusal to wait is said
 * and ended once by the result's arrival, whatever the note says by then.
 */
#include "export_gate.h"
#include "export_job.h"
#include "snapshot.h"
#include "testing.h"

#include <string.h>

static Snapshot *snapshot_of(const Config *c, bool done)
{
    Result *r = Result_new();
    assert_non_null(r);
    r->config = *c;
    Snapshot *s = Snapshot_of(r, 1);
    Result_free(r);
    assert_non_null(s);
    s->done = done;
    return s;
}

/* Each way the shown result falls short, and the one way it is exportable. */
static void test_gate_of_each_state(void **state)
{
    (void)state;
    Config on = Config_default(), other = on;
    other.tokens = on.tokens / 2;
    assert_int_equal(ExportGate_of(NULL, &on, false, false, false), EXPORT_GATE_WAIT_RESULT);
    Snapshot *partial = snapshot_of(&on, false), *done = snapshot_of(&on, true),
             *older = snapshot_of(&other, true), *failed = Snapshot_failure(&on, 1, "no memory");
    assert_int_equal(ExportGate_of(partial, &on, false, false, false), EXPORT_GATE_WAIT_RESULT);
    assert_int_equal(ExportGate_of(older, &on, false, false, false), EXPORT_GATE_WAIT_RESULT);
    assert_int_equal(ExportGate_of(failed, &on, false, false, false), EXPORT_GATE_WAIT_RESULT);
    assert_int_equal(ExportGate_of(done, &on, false, false, false), EXPORT_GATE_OPEN);
    assert_int_equal(ExportGate_of(done, &on, false, false, true), EXPORT_GATE_WRITING);
    /* The conditioning view waits for its numbers, or for the note saying there are none. */
    assert_int_equal(ExportGate_of(done, &on, true, false, false), EXPORT_GATE_WAIT_CONDITIONING);
    snprintf(done->conditioning_note[0], sizeof done->conditioning_note[0], "out of memory");
    assert_int_equal(ExportGate_of(done, &on, true, false, false), EXPORT_GATE_OPEN);
    /* Its compare view waits for the other initialisation's too. */
    assert_int_equal(ExportGate_of(done, &on, true, true, false), EXPORT_GATE_WAIT_CONDITIONING);
    done->has_conditioning[1] = true;
    assert_int_equal(ExportGate_of(done, &on, true, true, false), EXPORT_GATE_OPEN);
    /* The compare view waits for the network with the gap toggled. */
    assert_int_equal(ExportGate_of(done, &on, false, true, false), EXPORT_GATE_WAIT_COMPARE);
    done->has_compare = true;
    assert_int_equal(ExportGate_of(done, &on, false, true, false), EXPORT_GATE_OPEN);
    assert_string_equal(ExportGate_refusal(EXPORT_GATE_WAIT_COMPARE),
                        "nothing to export yet: wait for the network with the gap toggled");
    assert_null(ExportGate_refusal(EXPORT_GATE_OPEN));
    assert_string_equal(ExportGate_refusal(EXPORT_GATE_WRITING), EXPORT_JOB_STILL_WRITING);
    assert_string_equal(ExportGate_refusal(EXPORT_GATE_WAIT_RESULT),
                        "nothing to export yet: wait for the result");
    Snapshot_free(partial);
    Snapshot_free(done);
    Snapshot_free(older);
    Snapshot_free(failed);
}

/* The wait begins where a wait is said, not at a refusal of another kind or none; snapshots
   that leave the gate shut keep it; the first open gate ends it, once. */
static void test_wait_is_a_state(void **state)
{
    (void)state;
    ExportWait w = {0};
    assert_false(ExportWait_ended(&w, EXPORT_GATE_OPEN)); /* nothing was said */
    assert_non_null(ExportWait_said(&w, EXPORT_GATE_WRITING));
    assert_false(ExportWait_ended(&w, EXPORT_GATE_OPEN)); /* a second export: no wait */
    const char *said = ExportWait_said(&w, EXPORT_GATE_WAIT_RESULT);
    assert_string_equal(said, ExportGate_refusal(EXPORT_GATE_WAIT_RESULT));
    assert_false(ExportWait_ended(&w, EXPORT_GATE_WAIT_RESULT));
    assert_false(ExportWait_ended(&w, EXPORT_GATE_WAIT_CONDITIONING));
    assert_false(ExportWait_ended(&w, EXPORT_GATE_WAIT_COMPARE));
    assert_true(ExportWait_ended(&w, EXPORT_GATE_OPEN));
    assert_false(ExportWait_ended(&w, EXPORT_GATE_OPEN)); /* said once */
    /* Said again at an open gate (x once the result is in): no note, no wait. */
    ExportWait_said(&w, EXPORT_GATE_WAIT_CONDITIONING);
    assert_null(ExportWait_said(&w, EXPORT_GATE_OPEN));
    assert_false(ExportWait_ended(&w, EXPORT_GATE_OPEN));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gate_of_each_state),
        cmocka_unit_test(test_wait_is_a_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
