#include "batch.h"

#include "attnscope/random.h"

static void field_numbers(Text *t, const char *name, const double *x, int n)
{
    Text_printf(t, ",\n \"%s\": ", name);
    Json_numbers(t, x, n);
}

void Batch_document(const Result *r, Text *t)
{
    const Config *c = &r->config;
    int layers = c->depth + 1, T = c->tokens;
    Text_printf(t, "{\"attnscope\": \"%s\",\n \"config\": {", ATTNSCOPE_VERSION);
    Text_printf(t, "\"T\":%d,\"d\":%d,\"d_qk\":%d,\"depth\":%d,\"sigma_qk\":", T, c->width,
                c->width, c->depth);
    Json_number(t, c->sigma_qk);
    Text_printf(t,
                ",\"attention\":\"%s\",\"mask\":\"%s\",\"window\":%d,\"gap\":\"%s\","
                "\"layernorm\":\"%s\",\"skip\":\"%s\",\"seed\":%llu,\"seeds\":%d,\"layer\":%d},",
                ATTENTION_NAMES.names[c->attention], MASK_NAMES.names[c->mask], c->window,
                GAP_NAMES.names[c->gap], LAYERNORM_NAMES.names[c->layernorm],
                SKIP_NAMES.names[c->skip], (unsigned long long)c->seed, c->seeds, c->layer);
    Text_printf(t, "\n \"rng\": ");
    Json_string(t, RANDOM_ALGORITHM);
    Text_printf(t, ",\n \"sigma\": ");
    Json_number(t, r->sigma);
    Text_printf(t, ",\n \"logit_std\": ");
    Json_number(t, r->logit_std);
    field_numbers(t, "stable_rank", r->network.stable_rank, layers);
    field_numbers(t, "stable_rank_minus_one", r->network.stable_rank_minus_one, layers);
    field_numbers(t, "stable_rank_mean", r->stable_rank_band.mean, layers);
    field_numbers(t, "stable_rank_std", r->stable_rank_band.std, layers);
    Text_printf(t, ",\n \"counterpart_gap\": \"%s\"", GAP_NAMES.names[r->counterpart_gap]);
    field_numbers(t, "counterpart_stable_rank", r->counterpart.stable_rank, layers);
    field_numbers(t, "counterpart_stable_rank_minus_one", r->counterpart.stable_rank_minus_one,
                  layers);
    field_numbers(t, "counterpart_stable_rank_mean", r->counterpart_band.mean, layers);
    field_numbers(t, "counterpart_stable_rank_std", r->counterpart_band.std, layers);
    field_numbers(t, "token_similarity", r->network.token_similarity, layers);
    field_numbers(t, "counterpart_token_similarity", r->counterpart.token_similarity, layers);
    /* ℓ = 1..L: ‖∂X_L/∂W^V_ℓ‖_F² at the full depth L, attention frozen */
    field_numbers(t, "gradient_norm", r->network.gradient_norm + 1, c->depth);
    field_numbers(t, "log10_gradient_norm", r->network.log10_gradient_norm + 1, c->depth);
    field_numbers(t, "counterpart_gradient_norm", r->counterpart.gradient_norm + 1, c->depth);
    field_numbers(t, "counterpart_log10_gradient_norm", r->counterpart.log10_gradient_norm + 1,
                  c->depth);
    field_numbers(t, "log10_norm", r->network.log10_norm, layers);
    field_numbers(t, "counterpart_log10_norm", r->counterpart.log10_norm, layers);
    Text_printf(t,
                ",\n \"shown_gap\": \"%s\",\n \"outliers_removed\": %d,"
                "\n \"eigenvalues_exact\": %s,\n \"eigenvalues\": [",
                GAP_NAMES.names[r->shown_gap], r->outliers_removed,
                r->eigenvalues_exact ? "true" : "false");
    for (int i = 0; i < T; i++) {
        Text_printf(t, i ? ",[" : "[");
        Json_number(t, r->eigenvalues[i].re);
        Text_printf(t, ",");
        Json_number(t, r->eigenvalues[i].im);
        Text_printf(t, "]");
    }
    Text_printf(t, "]");
    field_numbers(t, "singular_values", r->singular_values, T);
    Text_printf(t, ",\n \"warnings\": [");
    for (int i = 0; i < r->warnings.count; i++) {
        if (i)
            Text_printf(t, ", ");
        Json_string(t, r->warnings.text[i]);
    }
    Text_printf(t, "]}\n");
}
