/* The CSV files of an export (export_csv.h), each the numbers of a result, a sweep or a
 * conditioning as the document has them, in their shortest round-trip form. */
#include "export_csv.h"

#include "attnscope/entropy.h"
#include "attnscope/format.h"
#include "attnscope/layer.h"
#include "attnscope/theory.h"
#include "figure_series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shown layer's spectra, NULL until its layer is done (the files then have no rows). */
static const Complex *shown_eigenvalues(const Result *r)
{
    return r->spectra_ready ? r->eigenvalues : NULL;
}

static const double *shown_singular_values(const Result *r)
{
    return r->spectra_ready ? r->singular_values : NULL;
}

/* A number for CSV: shortest round-trip form, an empty field when undefined. */
static void csv_number(FILE *f, double x)
{
    char buf[FORMAT_NUMBER_SIZE];
    fputs(Format_shortest(x, buf), f);
}

enum { SETTINGS_SIZE = 1024 };

/* " option path", the path as one word to a POSIX shell: as it is where every character is
   one no shell reads specially, else in single quotes (a quote in it as '\''). */
static void option_with_path(FILE *f, const char *option, const char *path)
{
    const char *plain = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:,+@%=-";
    fprintf(f, " %s ", option);
    if (path[0] && strspn(path, plain) == strlen(path)) {
        fputs(path, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = path; *p; p++)
        if (*p == '\'')
            fputs("'\\''", f); /* close the quotes, a quote escaped, open them again */
        else
            fputc(*p, f);
    fputc('\'', f);
}

/* Two comment lines that make a CSV file stand alone: the version and what the file holds,
   then the settings, with the checkpoint and the token-id file, which no setting holds, and
   the options that computed the file's numbers beside the result's (run: "--sweep-T", or
   NULL), so that the line runs the file's run again. */
static void csv_header_run(FILE *f, const Config *c, const char *what, const char *run)
{
    char settings[SETTINGS_SIZE];
    Figure_settings(c, settings, sizeof settings);
    const WeightSource *weights = Layer_weights_in_use();
    const char *ids = Layer_token_ids_name();
    fprintf(f, "# attnscope %s, %s\n# %s", ATTNSCOPE_VERSION, what, settings);
    if (weights)
        option_with_path(f, "--weights", weights->name);
    if (ids)
        option_with_path(f, "--token-ids", ids);
    fprintf(f, "%s%s\n", run ? " " : "", run ? run : "");
}

static void csv_header(FILE *f, const Config *c, const char *what)
{
    csv_header_run(f, c, what, NULL);
}

/* The eigenvalues of a T×T matrix (none: NULL) under the header of c's settings. */
static void write_eigenvalues(FILE *f, const Config *c, const Complex *eigenvalues,
                              const char *what)
{
    int T = c->tokens;
    double root_t = sqrt((double)T);
    csv_header(f, c, what);
    fputs("index,re,im,modulus,sqrtT_re,sqrtT_im\n", f);
    for (int i = 0; eigenvalues && i < T; i++) {
        const Complex *z = &eigenvalues[i];
        fprintf(f, "%d,", i + 1);
        csv_number(f, z->re);
        fputc(',', f);
        csv_number(f, z->im);
        fputc(',', f);
        csv_number(f, hypot(z->re, z->im));
        fputc(',', f);
        csv_number(f, root_t * z->re);
        fputc(',', f);
        csv_number(f, root_t * z->im);
        fputc('\n', f);
    }
}

void ExportCsv_eigenvalues(FILE *f, const Result *r)
{
    write_eigenvalues(f, &r->config, shown_eigenvalues(r),
                      "eigenvalues.csv: the eigenvalues of the shown layer's attention matrix");
}

void ExportCsv_compare_eigenvalues(FILE *f, const Result *r, const ToggledNetwork *toggled,
                                   bool removed)
{
    char title[FIGURE_TITLE_SIZE], what[FIGURE_TITLE_SIZE + 96];
    EigenvaluePlot e;
    Config half;
    bool drawn = Figure_compare_eigenvalues(r, toggled, removed, false, title, &e, &half);
    snprintf(what, sizeof what, "eigenvalues_with%s_gap_removal.csv: the compare view's %s",
             removed ? "" : "out", title);
    write_eigenvalues(f, &half, drawn ? e.values : NULL, what);
}

void ExportCsv_singular_values(FILE *f, const Result *r)
{
    const double *singular_values = shown_singular_values(r);
    int T = r->config.tokens;
    csv_header(f, &r->config,
               "singular_values.csv: the singular values of the shown layer's attention matrix");
    fputs("index,singular_value,sqrtT_singular_value\n", f);
    for (int i = 0; singular_values && i < T; i++) {
        fprintf(f, "%d,", i + 1);
        csv_number(f, singular_values[i]);
        fputc(',', f);
        csv_number(f, sqrt((double)T) * singular_values[i]);
        fputc('\n', f);
    }
}

/* A theory curve's entry at layer l, empty where theory has none (the document's null curve:
   entry 0, sr(Σ_0) = T, not finite) or the entry is undefined. */
static void theory_entry(FILE *f, const double *curve, int l)
{
    if (isfinite(curve[0]))
        csv_number(f, curve[l]);
}

/* The per-layer members of the document's grouped objects that are no Result series: the
   theory's curves (theory_stable_rank, theory_counterpart_stable_rank) and each layer's side
   of the phase threshold (attention_phase_side, attention_phase_counterpart_side), a text;
   all empty where the document has null.  Header (row < 0) or layer row's fields. */
static void grouped_fields(FILE *f, const Result *r, const TheoryPrediction *p, double beta,
                           int row)
{
    if (row < 0) {
        fputs(",theory_stable_rank,theory_counterpart_stable_rank,attention_phase_side,"
              "attention_phase_counterpart_side",
              f);
        return;
    }
    const char *side = Theory_phase_side(beta, r->network.phase_critical_beta[row]),
               *counterpart_side = Theory_phase_side(beta, r->counterpart.phase_critical_beta[row]);
    fputc(',', f);
    theory_entry(f, p->stable_rank, row);
    fputc(',', f);
    theory_entry(f, p->counterpart_stable_rank, row);
    fprintf(f, ",%s,%s", side ? side : "", counterpart_side ? counterpart_side : "");
}

void Export_layers_csv(FILE *f, const Result *r)
{
    const Config *c = &r->config;
    int layers = c->depth + 1;
    double curves[2 * (CONFIG_DEPTH_MAX + 1)];
    TheoryPrediction p = {.stable_rank = curves, .counterpart_stable_rank = curves + layers};
    Theory_predict(c, &p);
    double beta = Theory_phase_void(c, 1) ? NAN : Theory_phase_beta(c);
    csv_header(f, &r->config, "layers.csv: one row per layer, every per-layer series");
    fputs("layer", f);
    for (int i = 0; i < RESULT_SERIES_COUNT; i++)
        fprintf(f, ",%s", RESULT_SERIES[i].name);
    grouped_fields(f, r, &p, beta, -1);
    fputs(",mask\n", f);
    for (int l = 0; l <= c->depth; l++) {
        fprintf(f, "%d", l);
        for (int i = 0; i < RESULT_SERIES_COUNT; i++) {
            fputc(',', f);
            if (l > 0 || !RESULT_SERIES[i].from_layer_one)
                csv_number(f, RESULT_SERIES[i].values(r)[l]);
        }
        grouped_fields(f, r, &p, beta, l);
        /* The layer's own mask (--window-layers); the input, layer 0, has no attention. */
        fprintf(f, ",%s\n", l > 0 ? MASK_NAMES.names[Config_layer_mask(c, l)] : "");
    }
}

/* The options of k's run: its path pinned as it went, so that the settings line takes it
   again whatever the machine's speed (auto's choice rests on it). */
static const char *conditioning_options(const Conditioning *k)
{
    return k->jacobian_exact ? "--conditioning --conditioning-path exact"
           : k->kron_off     ? "--conditioning --conditioning-path lanczos"
                             : "--conditioning --conditioning-path kron";
}

void Export_conditioning_csv(FILE *f, const Conditioning *k)
{
    csv_header_run(f, &k->config,
                   k->jacobian_exact
                       ? "conditioning.csv: one row per layer, the network's series and "
                         "the counterpart's (docs/model.md section 8); jacobian_exact = "
                         "true"
                       : "conditioning.csv: one row per layer, the network's series and "
                         "the counterpart's (docs/model.md section 8); jacobian_exact = "
                         "false",
                   conditioning_options(k));
    fputs("layer", f);
    for (int n = 0; n < 2; n++)
        for (int i = 0; i < CONDITIONING_SERIES_COUNT; i++)
            fprintf(f, ",%s%s", n ? "counterpart_" : "", CONDITIONING_SERIES[i].name);
    fputc('\n', f);
    for (int l = 1; l <= k->config.depth; l++) {
        fprintf(f, "%d", l);
        for (int n = 0; n < 2; n++)
            for (int i = 0; i < CONDITIONING_SERIES_COUNT; i++) {
                fputc(',', f);
                csv_number(f, ConditioningSeries_values(&CONDITIONING_SERIES[i],
                                                        n ? &k->counterpart : &k->network)[l]);
            }
        fputc('\n', f);
    }
}

/* A CSV of columns side by side: the header lines, the names, then `rows` rows, row i holding
   each column's values[i] (the first column the plot's x). */
static void write_columns_csv(FILE *f, const Config *c, const char *what, const char *run,
                              int columns, const char *const *names, const double *const *values,
                              int rows)
{
    csv_header_run(f, c, what, run);
    for (int k = 0; k < columns; k++)
        fprintf(f, "%s%s", k ? "," : "", names[k]);
    fputc('\n', f);
    for (int i = 0; i < rows; i++) {
        for (int k = 0; k < columns; k++) {
            if (k)
                fputc(',', f);
            csv_number(f, values[k][i]);
        }
        fputc('\n', f);
    }
}

/* A series panel's CSV: what the file holds (its first line), the name of x and of each
   series with markers, in order. */
typedef struct {
    const char *what, *x_name, *names[2];
    const char *run; /* the option that computes the series beside the result, or NULL */
} SeriesCsv;

static const SeriesCsv SWEEP_CSV = {"width_sweep.csv: the width sweep's sr - 1 at the shown "
                                    "layer against T, the mean over seeds, gap off and removed",
                                    "T",
                                    {"stable_rank_minus_one", "stable_rank_minus_one_gap"},
                                    "--sweep-T"},
                       GRADIENT_CSV = {"gradient.csv: log10 of the gradient norm at full depth "
                                       "per layer, attention frozen, the network and its "
                                       "counterpart",
                                       "layer",
                                       {"log10_gradient_norm", "counterpart_log10_gradient_norm"},
                                       NULL},
                       SIMILARITY_CSV = {"token_similarity.csv: mu(X_l)/mu(X_0) per layer, the "
                                         "network and its counterpart",
                                         "layer",
                                         {"token_similarity", "counterpart_token_similarity"},
                                         NULL};

/* The numbers a series panel plots: its x, then each series that has markers (the curves of
   data: a line the figure derives, as the sweep's reference slope, is no number of the run). */
static void write_series_csv(FILE *f, const Config *c, const SeriesCsv *csv, const SeriesPlot *p)
{
    const char *columns[SERIES_MAX + 1] = {csv->x_name};
    const double *values[SERIES_MAX + 1] = {p->series[0].x};
    int n = 1;
    for (int k = 0; k < p->count && n <= 2; k++)
        if (p->series[k].marker) {
            columns[n] = csv->names[n - 1];
            values[n++] = p->series[k].y;
        }
    write_columns_csv(f, c, csv->what, csv->run, n, columns, values, p->series[0].count);
}

void ExportCsv_width_sweep(FILE *f, const Result *r, const WidthSweep *w)
{
    SeriesText t;
    SeriesPlot p;
    Figure_sweep_plot(&r->config, w, false, &t, &p);
    write_series_csv(f, &r->config, &SWEEP_CSV, &p);
}

void ExportCsv_gradient(FILE *f, const Result *r)
{
    SeriesText t;
    SeriesPlot p;
    Figure_gradient_plot(r, true, &t, &p);
    write_series_csv(f, &r->config, &GRADIENT_CSV, &p);
}

void ExportCsv_token_similarity(FILE *f, const Result *r)
{
    SeriesText t;
    SeriesPlot p;
    Figure_similarity_plot(r, &t, &p);
    write_series_csv(f, &r->config, &SIMILARITY_CSV, &p);
}

/* The row entropies H_i of the shown matrix that the entropy view's histogram draws, a row
   per query i; none where they are undefined. */
void ExportCsv_row_entropies(FILE *f, const Result *r)
{
    const Config *c = &r->config;
    csv_header(f, c,
               "row_entropies.csv: the row entropies H_i (nats) of the shown layer's attention "
               "matrix, shown head, as built");
    fputs("row,row_entropy\n", f);
    for (int i = 0; r->spectra_ready && Entropy_defined(c->attention) && i < c->tokens; i++) {
        fprintf(f, "%d,", i + 1);
        csv_number(f, r->row_entropy[i]);
        fputc('\n', f);
    }
}

/* The singular values the conditioning view's histogram draws: K's (the exact path), or B's
   products of its factors' (every k-th above 256 of each), descending; no rows where the
   panel says why instead (in the first line). */
void ExportCsv_conditioning_singular_values(FILE *f, const Conditioning *k)
{
    ConditioningHistogram h;
    Figure_conditioning_histogram(k, false, &h);
    char what[FIGURE_TITLE_SIZE + 128];
    snprintf(what, sizeof what, "conditioning_singular_values.csv: %s%s%s", h.title,
             h.message ? ": " : "", h.message ? h.message : "");
    csv_header_run(f, &k->config, what, conditioning_options(k));
    fputs("index,singular_value\n", f);
    for (int i = 0; !h.message && i < h.plot.count; i++) {
        fprintf(f, "%d,", i + 1);
        csv_number(f, h.plot.values[i]);
        fputc('\n', f);
    }
    Figure_conditioning_histogram_release(&h);
}

bool Export_stop_requested(LinalgStop stop)
{
    return stop.requested && stop.requested(stop.context);
}

/* A matrix as CSV rows: row i (labelled i + 1 under row_label) holds its `columns` entries
   (headed column_label_1 …), entry (i, j) at data[i·row_stride + j·column_stride].  Polls
   stop before each row (T numbers: ~1.7 ms of a core at T = 2048, where the whole file takes
   seconds) and returns false when it asked, the file then cut short. */
static bool write_rows_csv(FILE *f, const char *row_label, const char *column_label, int rows,
                           int columns, const double *data, size_t row_stride, size_t column_stride,
                           LinalgStop stop)
{
    fputs(row_label, f);
    for (int j = 1; j <= columns; j++)
        fprintf(f, ",%s_%d", column_label, j);
    fputc('\n', f);
    for (int i = 0; i < rows; i++) {
        if (Export_stop_requested(stop))
            return false;
        fprintf(f, "%d", i + 1);
        for (int j = 0; j < columns; j++) {
            fputc(',', f);
            csv_number(f, data[i * row_stride + j * column_stride]);
        }
        fputc('\n', f);
    }
    return true;
}

/* A T×T matrix kept in full (a map at block 1): a row per query i, its T keys' entries, the
   shown layer's A or (product) the product of the shown head's matrices.  False: stopped. */
bool ExportCsv_matrix(FILE *f, const Result *r, bool product, LinalgStop stop)
{
    const AttentionMap *m = product ? &r->product_map : &r->attention_map;
    csv_header(f, &r->config,
               product ? "attention_product.csv: the product A_l...A_1 of the shown head's "
                         "attention matrices up to the shown layer"
                       : "attention_matrix.csv: the shown layer's attention matrix A as built "
                         "(row i: query i's weights on the keys)");
    return write_rows_csv(f, "query", "key", m->tokens, m->tokens, m->mean, (size_t)m->tokens, 1,
                          stop);
}

enum { WHAT_SIZE = 1024 };

/* What input.csv holds, as the run made X0: the rows of a checkpoint's table for the ids
   (Layer_input_source, for the one seed the file draws), or rows drawn from the seed. */
static void input_what(const Config *c, char *buf, size_t size)
{
    Config first_seed = *c;
    first_seed.seeds = 1; /* Layer_input draws X0 for c->seed alone */
    char source[512];
    const char *head = "input.csv: the network's input X0 (row i: token i's d entries)";
    if (Layer_input_source(&first_seed, source, sizeof source))
        snprintf(buf, size, "%s, the rows for %s", head, source);
    else if (c->input == INPUT_EMBEDDING)
        snprintf(buf, size, "%s, the rows of a table drawn from the seed for ids drawn from it",
                 head);
    else
        snprintf(buf, size, "%s, orthonormal rows drawn from the seed", head);
}

/* The network's input X0 of the result's run (input, T×d: Export_input), so that another
   program can run the same forward.  False: stopped. */
bool ExportCsv_input(FILE *f, const Result *r, const double *input, LinalgStop stop)
{
    const Config *c = &r->config;
    char what[WHAT_SIZE];
    input_what(c, what, sizeof what);
    csv_header(f, c, what);
    return write_rows_csv(f, "token", "x", c->tokens, c->width, input, 1, (size_t)c->tokens, stop);
}
