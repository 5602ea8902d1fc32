/* The relations between settings that single options cannot check (Config_validate), what
 * follows from a configuration: σ, the head width, the MLP's width, the key/value heads, the
 * sinks, which attention kinds are row-stochastic; and whether a setting has an effect under
 * the others (its row's in_use and needs), in words. */
#include "config_internal.h"

#include "attnscope/init.h"
#include "attnscope/layer.h"
#include "attnscope/qk.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Whether c draws m as the factor of a product's SVD (per head for W^K, per layer for W^V),
   which one block shared by several heads cannot be. */
static bool drawn_as_factor(const Config *c, Matrix m)
{
    return isnan(Init_matrix(c, m).std);
}

/* The shape's relations: the orthonormal input's T <= d, the shown layer within the depth, the
   heads and key/value heads dividing what they share. */
static int validate_shape(const Config *c, char *err, size_t size)
{
    if (c->tokens > c->width && c->input == INPUT_ORTHONORMAL) {
        snprintf(err, size,
                 "-T/--tokens %d exceeds -d/--width %d: the orthonormal input needs T <= d "
                 "(raise --width to at least %d, or choose --input embedding)",
                 c->tokens, c->width, c->tokens);
        return -1;
    }
    if (c->layer < 1 || c->layer > c->depth) {
        snprintf(err, size, "-l/--layer %d: accepted 1..%d (the depth, -L/--depth %d)", c->layer,
                 c->depth, c->depth);
        return -1;
    }
    if (c->head_dim == 0 && c->width % c->heads != 0) {
        snprintf(err, size,
                 "--heads %d: accepted a divisor of -d/--width %d (each head has width d/H), "
                 "or any H with --head-dim setting each head's width",
                 c->heads, c->width);
        return -1;
    }
    if (c->head_dim > c->width) { /* a head's queries and keys have rank at most d anyway */
        snprintf(err, size, "--head-dim %d: accepted 0..%d (d_h <= -d/--width %d; 0: d/H)",
                 c->head_dim, c->width, c->width);
        return -1;
    }
    if (c->rope != ROPE_NONE && Config_head_width(c) % 2 != 0 && c->head_dim > 0) {
        snprintf(err, size,
                 "--head-dim %d: accepted an even width with --rope %s (rotary positions turn a "
                 "head's dimensions in pairs), or --rope none",
                 c->head_dim, ROPE_NAMES.names[c->rope]);
        return -1;
    }
    if (c->kv_heads > 0 && c->heads % c->kv_heads != 0) {
        snprintf(err, size,
                 "--kv-heads %d: accepted a divisor of --heads %d (each key/value head serves H/G "
                 "query heads), or 0 for one per head",
                 c->kv_heads, c->heads);
        return -1;
    }
    return 0;
}

/* Heads whose concatenated width H·d_h is not d (--head-dim): W^Q, W^K, W^V are d×H·d_h and
   W^O H·d_h×d, so nothing that needs them square can be drawn. */
static int validate_heads_width(const Config *c, char *err, size_t size)
{
    int inner = Config_heads_width(c);
    if (inner == c->width)
        return 0;
    if (inner > CONFIG_WIDTH_MAX) { /* the heads' width is bounded as the width is */
        snprintf(err, size,
                 "--head-dim %d: accepted H·d_h <= %d, not %d with --heads %d (choose at most "
                 "%d)",
                 c->head_dim, CONFIG_WIDTH_MAX, inner, c->heads, CONFIG_WIDTH_MAX / c->heads);
        return -1;
    }
    if (c->output == OUTPUT_IDENTITY) {
        snprintf(err, size,
                 "--wo identity: accepted only where H·d_h = d, not with --heads %d of --head-dim "
                 "%d (H·d_h = %d, d = %d: the heads' concatenation is not the width, so there is "
                 "no identity from one to the other); choose --wo gaussian or orthogonal",
                 c->heads, c->head_dim, inner, c->width);
        return -1;
    }
    if (c->init == INIT_CUTTING_SKIP) {
        snprintf(err, size,
                 "--init cutting-skip: accepted only where H·d_h = d, not with --heads %d of "
                 "--head-dim %d (H·d_h = %d, d = %d): %s",
                 c->heads, c->head_dim, inner, c->width,
                 inner < c->width
                     ? "W^V W^O = W_VO then has rank at most H·d_h < d, and the scheme is "
                       "W_VO = c^2 times an orthogonal d×d matrix, which has rank d"
                     : "two independent Haar factors d×H·d_h and H·d_h×d multiply to a "
                       "contraction, not to c^2 times an orthogonal matrix, where H·d_h > d");
        return -1;
    }
    if (c->init == INIT_MIMETIC && inner > c->width) {
        snprintf(err, size,
                 "--init mimetic: accepted where H·d_h <= d, not with --heads %d of --head-dim %d "
                 "(H·d_h = %d > d = %d: alpha2 Z2 - beta2 I has only d singular triplets for "
                 "the heads' %d columns, and the scheme does not say how wider heads share "
                 "them)",
                 c->heads, c->head_dim, inner, c->width, inner);
        return -1;
    }
    static const char *const options[] = {"--init-query", "--init-key", "--init-value",
                                          "--init-output"};
    const MatrixInitChoice choices[] = {c->init_query, c->init_key, c->init_value, c->init_output};
    for (int i = 0; i < 4; i++) {
        MatrixInitChoice choice = choices[i];
        if (choice != MATRIX_INIT_IDENTITY)
            continue;
        snprintf(err, size,
                 "%s identity: accepted only where H·d_h = d, not with --heads %d of --head-dim %d "
                 "(the matrix is %d×%d, and only a square matrix is the identity)",
                 options[i], c->heads, c->head_dim, i == 3 ? inner : c->width,
                 i == 3 ? c->width : inner);
        return -1;
    }
    return 0;
}

/* The draws' relations: shared key/value heads drawn on their own, the W^O each scheme allows,
   an identity MLP only where its matrices are square. */
static int validate_draws(const Config *c, char *err, size_t size)
{
    if (Config_kv_heads(c) < c->heads &&
        (drawn_as_factor(c, MATRIX_KEY) || drawn_as_factor(c, MATRIX_VALUE))) {
        snprintf(err, size,
                 "--kv-heads %d: accepted only with W^K and W^V drawn on their own (--init %s "
                 "draws each head's W^K or W^V as a factor of its own product, which a shared "
                 "one is not); use --kv-heads 0",
                 c->kv_heads, INIT_NAMES.names[c->init]);
        return -1;
    }
    if (c->init == INIT_CUTTING_SKIP && c->output == OUTPUT_GAUSSIAN) {
        snprintf(err, size,
                 "--wo gaussian: accepted identity or orthogonal with --init cutting-skip (its "
                 "W^O is c times a Haar-orthogonal matrix)");
        return -1;
    }
    if (c->init == INIT_MIMETIC && c->output == OUTPUT_ORTHOGONAL) {
        snprintf(err, size,
                 "--wo orthogonal: accepted identity or gaussian with --init mimetic (its W^O is "
                 "the factor sqrt(S) V^T of alpha2 Z2 - beta2 I, not orthogonal)");
        return -1;
    }
    if (c->output == OUTPUT_ORTHOGONAL && c->init_output != MATRIX_INIT_SCHEME &&
        c->init_output != MATRIX_INIT_ORTHOGONAL && c->init_output != MATRIX_INIT_IDENTITY) {
        snprintf(err, size,
                 "--init-output %s: accepted scheme, orthogonal or identity with --wo orthogonal "
                 "(choose --wo gaussian for a W^O drawn otherwise)",
                 MATRIX_INIT_NAMES.names[c->init_output]);
        return -1;
    }
    if (c->mlp != MLP_NONE && c->init_mlp == MATRIX_INIT_IDENTITY &&
        Config_mlp_hidden(c) != c->width) {
        if (c->mlp_hidden == 0)
            snprintf(err, size,
                     "--init-mlp identity: accepted with --mlp-ratio 1 only (W1 and W2 are %d·d×d, "
                     "and only a square matrix is the identity)",
                     c->mlp_ratio);
        else
            snprintf(err, size,
                     "--init-mlp identity: accepted with --mlp-hidden %d (= d) only (W1 and W2 are "
                     "%d×d, and only a square matrix is the identity)",
                     c->width, c->mlp_hidden);
        return -1;
    }
    return 0;
}

/* The rotary scaling's relation: llama3's blend runs between the two wavelengths
   C/high < C/low, and no frequency can be computed otherwise.  (A scaling without RoPE has
   no effect, and says so as every such setting does: Setting_inert_text.)  A local θ is a θ
   (at least 1, as --rope-theta) or 0 for none. */
static int validate_rope_scaling(const Config *c, char *err, size_t size)
{
    if (c->rope_local_base_freq > 0 && c->rope_local_base_freq < 1) {
        snprintf(err, size,
                 "--rope-local-base-freq %g: accepted 0 (every layer turns by --rope-theta) or "
                 "1 to 1e9, the local layers' theta",
                 c->rope_local_base_freq);
        return -1;
    }
    if (c->rope_scaling == ROPE_SCALING_LLAMA3 &&
        !(c->rope_low_freq_factor < c->rope_high_freq_factor)) {
        snprintf(err, size,
                 "--rope-low-freq-factor %g with --rope-high-freq-factor %g: accepted low < high "
                 "(llama3 blends the wavelengths between C/high and C/low)",
                 c->rope_low_freq_factor, c->rope_high_freq_factor);
        return -1;
    }
    return 0;
}

/* The first relation that fails makes the message: the shape's, the draws', the rotary
   scaling's, then what the screen shows (the head, the seed range, the window).  Only what
   cannot be computed or would be misread is refused: a setting that merely has no effect
   under the others runs, with a warning (Setting_inert_text, docs/model.md §1). */
int Config_validate(const Config *c, char *err, size_t size)
{
    if (validate_shape(c, err, size) || validate_heads_width(c, err, size) ||
        validate_draws(c, err, size) || validate_rope_scaling(c, err, size))
        return -1;
    if (c->head < 1 || c->head > c->heads) {
        snprintf(err, size, "--head %d: accepted 1..%d (the heads, --heads %d)", c->head, c->heads,
                 c->heads);
        return -1;
    }
    /* The run draws seeds seed .. seed + seeds - 1, each recorded (merge, --jsonl) as a JSON
       number: past 2^53 - 1 a seed would not be written exactly. */
    if (c->seed > CONFIG_SEED_MAX - (uint64_t)(c->seeds - 1)) {
        snprintf(err, size,
                 "--seed %llu with --seeds %d: seeds %llu..%llu pass the largest seed %llu (a seed "
                 "is written as a JSON number, exact to 2^53 - 1); accepted --seed up to %llu "
                 "with --seeds %d",
                 (unsigned long long)c->seed, c->seeds, (unsigned long long)c->seed,
                 (unsigned long long)c->seed + (unsigned long long)(c->seeds - 1), CONFIG_SEED_MAX,
                 CONFIG_SEED_MAX - (unsigned long long)(c->seeds - 1), c->seeds);
        return -1;
    }
    if (window_in_use(c) && c->window >= c->tokens) {
        snprintf(err, size,
                 "-w/--window %d: accepted 1..%d (below T = %d; a wider window is the %s mask)",
                 c->window, c->tokens - 1, c->tokens, c->mask == MASK_WINDOW ? "full" : "causal");
        return -1;
    }
    return 0;
}

double Config_sigma(const Config *c)
{
    if (Qk_normalised(c)) /* the logits' spread is √d_h·cos θ's, not σ_qk's */
        return NAN;
    /* Embedding rows are not orthonormal: the logits of a row share its norm and the rows'
       overlaps, so they are not the i.i.d. law σ describes. */
    if (c->input == INPUT_EMBEDDING && !Attention_is_input_independent(c->attention))
        return NAN;
    /* Markov attention draws its matrix from σ_qk whatever the scheme draws W^Q, W^K from. */
    double sigma_qk = c->attention == ATTENTION_MARKOV ? c->sigma_qk : Init_effective_sigma_qk(c);
    double s2 = sigma_qk * sigma_qk, variance = s2 * s2;
    /* Input rows of norm √d: every first-layer logit is d times larger. */
    if (c->input_norm == INPUT_NORM_SQRT_D && logit_scale_in_use(c))
        variance *= (double)c->width * c->width;
    /* Orthonormal tokens give logits of variance σ_qk⁴·d_h·scale²: σ_qk⁴ at 1/√d_h. */
    if (c->logit_scale == LOGIT_SCALE_LINEAR && logit_scale_in_use(c))
        variance /= Config_head_width(c);
    return sqrt(expm1(variance));
}

int Config_head_width(const Config *c)
{
    if (c->head_dim > 0)
        return c->head_dim;
    return c->heads > 0 ? c->width / c->heads : c->width;
}

int Config_heads_width(const Config *c)
{
    return c->heads > 0 ? c->heads * Config_head_width(c) : c->width;
}

int Config_mlp_hidden(const Config *c)
{
    return c->mlp_hidden > 0 ? c->mlp_hidden : c->mlp_ratio * c->width;
}

bool Config_mlp_gated(const Config *c)
{
    return c->mlp == MLP_SWIGLU || c->mlp == MLP_GEGLU;
}

int Config_kv_heads(const Config *c)
{
    return c->kv_heads > 0 ? c->kv_heads : c->heads;
}

int Config_kv_head_of(const Config *c, int h)
{
    return h / (c->heads / Config_kv_heads(c));
}

bool Config_has_sink(const Config *c)
{
    return c->attention == ATTENTION_SOFTMAX && c->sink != -INFINITY;
}

bool Config_rows_stochastic(const Config *c)
{
    return Attention_is_row_stochastic(c->attention) && !Config_has_sink(c);
}

int Attention_is_row_stochastic(Attention a)
{
    return a == ATTENTION_SOFTMAX || a == ATTENTION_MARKOV || a == ATTENTION_UNIFORM ||
           a == ATTENTION_IDENTITY;
}

int Attention_is_input_independent(Attention a)
{
    return a == ATTENTION_MARKOV || a == ATTENTION_UNIFORM || a == ATTENTION_IDENTITY;
}

Gap Gap_toggled(Gap g)
{
    return g == GAP_OFF ? GAP_CENTER : GAP_OFF;
}

bool Setting_has_effect(const Setting *s, const Config *c)
{
    return !s->in_use || s->in_use(c);
}

/* snprintf's way of appending: `used` counts what did not fit too, and nothing is written
   past the end. */
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int n =
        vsnprintf(*used < size ? buf + *used : NULL, *used < size ? size - *used : 0, fmt, args);
    va_end(args);
    if (n > 0)
        *used += (size_t)n;
}

int Setting_inert_text(const Setting *s, const Config *c, char *buf, size_t size)
{
    if (size)
        buf[0] = '\0';
    if (Setting_has_effect(s, c))
        return 0;
    /* s->needs as options ("--rope half --rope-scaling linear"), and what c has instead. */
    char needs[256] = "", here[256] = "";
    size_t needs_used = 0, here_used = 0;
    for (const char *p = s->needs; p && *p;) {
        size_t length = strcspn(p, " ");
        const char *equals = memchr(p, '=', length);
        int name_length = equals ? (int)(equals - p) : (int)length;
        int want_length = equals ? (int)(p + length - equals - 1) : 0;
        char name[64], current[64];
        snprintf(name, sizeof name, "%.*s", name_length, p);
        const Setting *other = Settings_find(name);
        /* --weights is no setting, but the one the run has is known: "weights=FILE" needs
           one, "weights=none" drawn weights. */
        bool weights = !other && strcmp(name, "weights") == 0;
        bool drawn = weights && want_length == 4 && strncmp(equals + 1, "none", 4) == 0;
        const WeightSource *source = Layer_weights_in_use();
        /* Drawn weights are named where a checkpoint is read instead, not where they are
           drawn: there they go without saying. */
        if (drawn && source)
            append(needs, sizeof needs, &needs_used, "%sdrawn weights (no --weights)",
                   needs_used ? " and " : "");
        else if (!drawn)
            append(needs, sizeof needs, &needs_used, "%s--%s %.*s", needs_used ? " " : "", name,
                   want_length, equals + 1);
        if (other && (Setting_format(other, c, 0, current, sizeof current) != want_length ||
                      strncmp(current, equals + 1, (size_t)want_length)))
            append(here, sizeof here, &here_used, "%s--%s %s", here_used ? ", " : "", name,
                   current);
        if (weights && !drawn && !source)
            append(here, sizeof here, &here_used, "%sno --weights", here_used ? ", " : "");
        if (drawn && source)
            append(here, sizeof here, &here_used, "%s--weights %s", here_used ? ", " : "",
                   source->name);
        p += length;
        p += strspn(p, " ");
    }
    char value[64];
    Setting_format(s, c, 0, value, sizeof value);
    if (here_used)
        return snprintf(buf, size, "--%s %s has no effect: it needs, for one, %s (here %s)",
                        s->name, value, needs, here);
    return snprintf(buf, size,
                    "--%s %s has no effect under the other settings (it has one with, for one, %s)",
                    s->name, value, needs);
}
