/* A setting's declared dependencies (its row's in_use and needs, config.c) against runs: under
 * its needs, changing the setting changes the run's numbers; where in_use says it has no
 * effect, changing it leaves every number bit for bit, and Setting_inert_text says so.  A new
 * setting whose dependency is declared wrong fails here, at T = d = 8. */
#include "testing.h"
#include "result_compare.h"

#include "attnscope/config.h"
#include "attnscope/layer.h"
#include "attnscope/model.h"

#include <math.h>
#include <string.h>

static Config tiny(void)
{
    Config c = Config_default();
    c.tokens = c.width = 8;
    c.depth = 2;
    return c;
}

/* A valid value of s other than its default, near it (the ranges of the tiny network). */
static void put_other_value(const Setting *s, Config *c)
{
    double v = s->fallback;
    switch (s->kind) {
    case SETTING_ENUM:
        v = s->names->count - 1;
        break;
    case SETTING_PATTERN: { /* LG: windowed and global layers alternate */
        char err[256];
        assert_int_equal(Setting_parse(s, c, "LG", err, sizeof err), 0);
        return;
    }
    case SETTING_DOUBLE:
        v = isinf(v) ? 0 : v == 0 ? fmin(0.5, s->max) : 2 * v <= s->max ? 2 * v : v / 2;
        if (v == 0.5) { /* a value that is 0 or at least 1 (a local θ) takes 2 */
            char err[256];
            Config half = *c;
            Setting_put(s, &half, v);
            if (Config_validate(&half, err, sizeof err))
                v = fmin(2, s->max);
        }
        break;
    case SETTING_INT:
    case SETTING_SEED:
        v = v + 1 <= s->max ? v + 1 : v - 1;
        break;
    }
    Setting_put(s, c, v);
}

/* Applies the preset-style settings of s->needs ("rope=half rope-scaling=linear") to c.
   False where they name an option that is no setting (--weights FILE), which a Config cannot
   hold; "weights=none" (drawn weights) holds here, where no checkpoint is in use. */
static bool apply_needs(const Setting *s, Config *c)
{
    bool all = true;
    char text[256], err[256];
    snprintf(text, sizeof text, "%s", s->needs);
    for (char *save = NULL, *item = strtok_r(text, " ", &save); item;
         item = strtok_r(NULL, " ", &save)) {
        char *equals = strchr(item, '=');
        assert_non_null(equals);
        *equals = '\0';
        const Setting *other = Settings_find(item);
        if (!other && strcmp(item, "weights") == 0 && strcmp(equals + 1, "none") == 0)
            assert_null(Layer_weights_in_use());
        else if (!other)
            all = false;
        else if (Setting_parse(other, c, equals + 1, err, sizeof err))
            fail_msg("--%s needs: %s", s->name, err);
    }
    return all;
}

/* Whether s's value changes the numbers of c (at s's default against c's value of s). */
static bool value_changes_numbers(const Setting *s, const Config *c)
{
    Config at_default = *c;
    Setting_put(s, &at_default, s->fallback);
    char err[512];
    if (Config_validate(c, err, sizeof err) || Config_validate(&at_default, err, sizeof err))
        fail_msg("--%s: %s", s->name, err);
    Result *a = Result_new(), *b = Result_new();
    Workspace *w = Workspace_new();
    assert_int_equal(Model_run(c, w, a, NULL, err, sizeof err), 0);
    Workspace_free(w);
    w = Workspace_new();
    assert_int_equal(Model_run(&at_default, w, b, NULL, err, sizeof err), 0);
    Workspace_free(w);
    bool changes = !same_numbers(a, b);
    Result_free(a);
    Result_free(b);
    return changes;
}

/* Whether c, with one more enumeration set (index `from` on, so that each pair is tried
   once), is a valid configuration where s has no effect with its other value. */
static bool inert_within(const Setting *s, Config *c, int from, int changes)
{
    char err[512];
    Config with_other = *c, at_default = *c;
    put_other_value(s, &with_other);
    Setting_put(s, &at_default, s->fallback);
    if (!Setting_has_effect(s, &with_other) && !Config_validate(&with_other, err, sizeof err) &&
        !Config_validate(&at_default, err, sizeof err)) {
        *c = with_other;
        return true;
    }
    for (int i = from; changes > 0 && i < Settings_count(); i++) {
        const Setting *e = Settings_at(i);
        for (int v = 0; e != s && e->kind == SETTING_ENUM && v < e->names->count; v++) {
            Config next = *c;
            Setting_put(e, &next, v);
            if (inert_within(s, &next, i + 1, changes - 1)) {
                *c = next;
                return true;
            }
        }
    }
    return false;
}

/* A configuration near the tiny one (up to two enumerations changed: markov attention for the
   query/key settings, another scheme for σ_qk, ...) where s has no effect with its other
   value.  False where none is that near. */
static bool find_inert(const Setting *s, Config *out)
{
    *out = tiny();
    return inert_within(s, out, 0, 2);
}

/* Where c is valid and s has no effect in it, that its value changes no number: 1, else 0. */
static int check_if_inert(const Setting *s, Config c)
{
    char err[512];
    put_other_value(s, &c);
    Config at_default = c;
    Setting_put(s, &at_default, s->fallback);
    if (Setting_has_effect(s, &c) || Config_validate(&c, err, sizeof err) ||
        Config_validate(&at_default, err, sizeof err))
        return 0;
    if (value_changes_numbers(s, &c))
        fail_msg("--%s: declared without effect, yet its value changes the numbers (%s)", s->name,
                 Setting_inert_text(s, &c, err, sizeof err) > 0 ? err : "");
    return 1;
}

/* Every configuration of the tiny one with one enumeration changed, or with another setting's
   needs and its other value (the configurations the table itself names), where s has no
   effect: its value changes no number there.  Returns how many were checked. */
static int check_inert_nearby(const Setting *s)
{
    int checked = 0;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *e = Settings_at(i);
        for (int v = 0; e != s && e->kind == SETTING_ENUM && v < e->names->count; v++) {
            Config c = tiny();
            Setting_put(e, &c, v);
            checked += check_if_inert(s, c);
        }
        Config c = tiny();
        if (e != s && e->needs && apply_needs(e, &c)) {
            put_other_value(e, &c);
            checked += check_if_inert(s, c);
        }
    }
    return checked;
}

static void test_declared_dependencies_hold_in_runs(void **state)
{
    (void)state;
    int inert_checked = 0, declared = 0, inert_configurations = 0;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (!s->in_use)
            continue;
        declared++;
        if (!s->needs || !*s->needs)
            fail_msg("--%s has in_use but no needs", s->name);
        Config on = tiny();
        bool settings_only = apply_needs(s, &on);
        put_other_value(s, &on);
        char text[WARNING_LENGTH];
        if (settings_only) {
            if (!Setting_has_effect(s, &on))
                fail_msg("--%s: its needs (%s) do not put it in use", s->name, s->needs);
            if (!value_changes_numbers(s, &on))
                fail_msg("--%s: under its needs (%s) its value changes no number", s->name,
                         s->needs);
            assert_int_equal(Setting_inert_text(s, &on, text, sizeof text), 0);
        } else {
            print_message(
                "--%s needs more than settings (%s): checked where it has no effect only\n",
                s->name, s->needs);
        }
        Config off;
        if (strcmp(s->needs, "weights=none") == 0) {
            /* Without effect only on a checkpoint's weights, which no Config near the tiny one
               holds: tests/test_weights.c runs it there. */
            print_message("--%s has no effect only under --weights\n", s->name);
            continue;
        }
        if (!find_inert(s, &off)) {
            /* Only a value refused wherever it would have no effect (--head 2 of one head). */
            Config refused = tiny();
            put_other_value(s, &refused);
            if (!Config_validate(&refused, text, sizeof text))
                fail_msg("--%s: no configuration near the tiny one where it has no effect",
                         s->name);
            continue;
        }
        if (value_changes_numbers(s, &off))
            fail_msg("--%s: declared without effect, yet its value changes the numbers", s->name);
        inert_configurations += check_inert_nearby(s);
        assert_true(Setting_inert_text(s, &off, text, sizeof text) > 0);
        char head[96];
        snprintf(head, sizeof head, "--%s ", s->name);
        assert_true(strncmp(text, head, strlen(head)) == 0);
        assert_non_null(strstr(text, " has no effect"));
        inert_checked++;
    }
    print_message("%d settings declare a dependency; %d checked where they have no effect, in %d "
                  "configurations\n",
                  declared, inert_checked, inert_configurations);
}

/* c with its rotary settings: RoPE half, the local θ and the --window-layers pattern. */
static Config rotary(double local_theta, const char *pattern, int nope_every)
{
    Config c = tiny();
    c.rope = ROPE_HALF;
    c.rope_local_base_freq = local_theta;
    c.nope_every = nope_every;
    char err[256];
    assert_int_equal(Setting_parse(Settings_find("window-layers"), &c, pattern, err, sizeof err),
                     0);
    return c;
}

/* Whether --name is declared in use in c, checked against the run: a setting in use changes
   the numbers with its other value, one without effect changes none. */
static bool in_use_as_run(const char *name, Config c)
{
    const Setting *s = Settings_find(name);
    put_other_value(s, &c);
    bool in_use = Setting_has_effect(s, &c);
    if (value_changes_numbers(s, &c) != in_use)
        fail_msg("--%s declared %s, yet the run says otherwise", name,
                 in_use ? "in use" : "without effect");
    return in_use;
}

/* The global θ (and its scaling) acts on the layers no local θ turns, the local θ on the
   rotated layers the pattern marks L: a θ that turns no layer is declared without effect. */
static void test_a_theta_in_use_where_a_layer_turns_by_it(void **state)
{
    (void)state;
    const char *global[] = {"rope-theta", "rope-scaling"};
    for (size_t i = 0; i < sizeof global / sizeof *global; i++) {
        assert_false(in_use_as_run(global[i], rotary(500, "all", 0)));
        assert_true(in_use_as_run(global[i], rotary(500, "LG", 0)));
        assert_false(in_use_as_run(global[i], rotary(500, "LG", 2))); /* layer 2 has no RoPE */
        assert_true(in_use_as_run(global[i], rotary(0, "all", 0)));
    }
    Config scaled = rotary(100, "all", 0);
    scaled.rope_scaling = ROPE_SCALING_LINEAR;
    assert_false(in_use_as_run("rope-factor", scaled));
    assert_false(in_use_as_run("rope-local-base-freq", rotary(100, "G", 0)));
    assert_false(in_use_as_run("rope-local-base-freq", rotary(0, "0:1", 0)));
    assert_false(in_use_as_run("rope-local-base-freq", rotary(100, "GL", 2)));
    assert_true(in_use_as_run("rope-local-base-freq", rotary(100, "LG", 2)));
    /* A local θ that turns no layer does not put the pattern in use (no window mask here):
       the run of the two is that of neither, (G, 100) = (G, 0) above and (G, 0) = (all, 0). */
    const Setting *pattern = Settings_find("window-layers");
    Config no_local = rotary(100, "G", 0), every_layer_local = rotary(100, "all", 0);
    assert_false(Setting_has_effect(pattern, &no_local));
    no_local.rope_local_base_freq = 0;
    assert_false(value_changes_numbers(pattern, &no_local));
    assert_true(Setting_has_effect(pattern, &every_layer_local));
}

/* The words: the setting, its value, what it needs and what c has instead. */
static void test_inert_text(void **state)
{
    (void)state;
    Config c = Config_default();
    char text[WARNING_LENGTH];
    assert_true(Setting_inert_text(Settings_find("rope-factor"), &c, text, sizeof text) > 0);
    assert_string_equal(text, "--rope-factor 8 has no effect: it needs, for one, --rope half "
                              "--rope-scaling linear (here --rope none, --rope-scaling none)");
    c.attention = ATTENTION_MARKOV;
    c.rope = ROPE_HALF;
    assert_true(Setting_inert_text(Settings_find("rope"), &c, text, sizeof text) > 0);
    assert_string_equal(text, "--rope half has no effect: it needs, for one, --attention softmax "
                              "(here --attention markov)");
    /* Its needs met and still without effect (σ_qk where W^Q and W^K are xavier's). */
    c = Config_default();
    c.init_query = c.init_key = MATRIX_INIT_XAVIER;
    assert_true(Setting_inert_text(Settings_find("sigma-qk"), &c, text, sizeof text) > 0);
    assert_string_equal(text, "--sigma-qk 1 has no effect under the other settings (it has one "
                              "with, for one, --init normal)");
    assert_int_equal(Setting_inert_text(Settings_find("tokens"), &c, text, sizeof text), 0);
    assert_string_equal(text, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inert_text),
        cmocka_unit_test(test_a_theta_in_use_where_a_layer_turns_by_it),
        cmocka_unit_test(test_declared_dependencies_hold_in_runs),
    };
    return cmocka_run_group_tests_name("inert", tests, NULL, NULL);
}
