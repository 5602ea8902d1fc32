#include "options.h"

#include "attnscope/budget.h"
#include "attnscope/format.h"
#include "attnscope/model.h"
#include "line_reader.h"
#include "memory_limits.h"
#include "conditioning_path.h"
#include "presets.h"
#include "safetensors.h"
#include "setting_line.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int Options_write_preset(const Config *c, char *buf, size_t size)
{
    size_t used = 0;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        char value[64];
        Setting_format(s, c, 0, value, sizeof value);
        int n = snprintf(buf + (used < size ? used : size), used < size ? size - used : 0,
                         "%s = %s\n", s->name, value);
        if (n < 0)
            return n;
        used += (size_t)n;
    }
    return (int)used;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

#define UTF8_BYTE_ORDER_MARK "\xEF\xBB\xBF"

/* Parses one preset line into c; returns 0, or -1 with the message (without FILE:LINE). */
static int preset_line(Config *c, char *line, size_t length, bool seen[], char *err, size_t size)
{
    if (strlen(line) != length) {
        snprintf(err, size, "contains a NUL byte: a preset is plain text");
        return -1;
    }
    const unsigned char *end = (const unsigned char *)line + length;
    for (const unsigned char *p = (const unsigned char *)line; *p;) {
        size_t n = Format_utf8_length(p, (size_t)(end - p));
        if ((*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') || *p == 0x7F) {
            snprintf(err, size, "contains control byte 0x%02x: a preset is plain text", *p);
            return -1;
        }
        if (!n) {
            snprintf(err, size,
                     "byte 0x%02x at column %zu is not UTF-8: a preset is plain UTF-8 text", *p,
                     (size_t)(p - (const unsigned char *)line) + 1);
            return -1;
        }
        p += n;
    }
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *text = trim(line);
    if (*text == '\0')
        return 0;
    char *eq = strchr(text, '=');
    if (!eq) {
        snprintf(err, size, "expected 'key = value', found no '='");
        return -1;
    }
    *eq = '\0';
    char *key = trim(text), *value = trim(eq + 1);
    const Setting *s = Settings_find(key);
    if (!s) {
        char names[1024];
        Settings_names(false, names, sizeof names);
        snprintf(err, size, "unknown key '%.40s'%s; accepted: %s", key,
                 strstr(key, UTF8_BYTE_ORDER_MARK)
                     ? " (it holds a byte-order mark, U+FEFF, accepted only at the file's start)"
                     : "",
                 names);
        return -1;
    }
    return SettingLine_assign(s, c, value, seen, err, size);
}

int Options_load_preset(Config *c, const char *path, char *err, size_t size)
{
    char msg[OPTIONS_ERROR_SIZE];
    FILE *f = File_open_regular(path, msg, sizeof msg);
    if (!f) {
        snprintf(err, size, "--preset %s", msg);
        return -1;
    }
    Config trial = *c;
    bool seen[SETTINGS_MAX] = {false};
    LineReader lines = LineReader_start(f, path);
    LineStatus got = LINE_END;
    int status = 0;
    while (status == 0 && (got = LineReader_next(&lines, msg, sizeof msg)) == LINE_READ) {
        /* A byte-order mark, which Windows editors write, is no part of the first key. */
        size_t mark = lines.number == 1 && lines.length >= 3 &&
                              memcmp(lines.text, UTF8_BYTE_ORDER_MARK, 3) == 0
                          ? 3
                          : 0;
        if (preset_line(&trial, lines.text + mark, lines.length - mark, seen, msg, sizeof msg)) {
            snprintf(err, size, "%s:%ld: %s", path, lines.number, msg);
            status = -1;
        }
    }
    if (status == 0 && got != LINE_END) {
        snprintf(err, size, "%s", msg);
        status = -1;
    }
    LineReader_release(&lines);
    fclose(f);
    if (status == 0)
        *c = trial;
    return status;
}

/* "  -T, --tokens N      tokens, 2..4096 (256); needs T <= d" */
static void setting_usage(FILE *out, const Setting *s, const Config *defaults)
{
    char letter[8] = "", option[48], range[160], fallback[64];
    const Setting *bound = s->bound ? Settings_find(s->bound) : NULL;
    if (s->letter)
        snprintf(letter, sizeof letter, "-%c,", s->letter);
    snprintf(option, sizeof option, "--%s %s", s->name, s->argument);
    SettingLine_accepted(s, range, sizeof range);
    Setting_format(s, defaults, 0, fallback, sizeof fallback);
    if (s->kind == SETTING_DOUBLE && !strpbrk(fallback, ".e") && isfinite(Setting_get(s, defaults)))
        strcat(fallback, ".0"); /* a number, not a count */
    /* Sixteen columns, and a blank after an option that fills them. */
    fprintf(out, "  %-4s%-15s %s%s%s (%s)", letter, option, s->help ? s->help : "",
            s->help ? ", " : "", range, fallback);
    if (bound && s->raises_bound)
        fprintf(out, "; needs %s <= %s", s->label, bound->label);
    fputc('\n', out);
}

void Options_usage(FILE *out)
{
    fputs("Usage: attnscope [options]            interactive screen\n"
          "       attnscope --batch [options]    compute once, print one JSON document\n"
          "       attnscope --batch --jsonl [options] <CONFIGS.jsonl\n"
          "                                      one result line per configuration line\n"
          "       attnscope grid 'KEY=V1,V2 ...' [--shards N] [options]\n"
          "                                      a grid of configurations as JSON Lines, each\n"
          "                                      in N seed ranges\n"
          "       attnscope merge [FILE...] [--csv] [--uneven] [--grid FILE]\n"
          "                                      results of seed ranges combined exactly into\n"
          "                                      one per configuration (--csv: a table)\n"
          "\n",
          out);
    Config defaults = Config_default();
    for (int i = 0; i < Settings_count(); i++)
        setting_usage(out, Settings_at(i), &defaults);
    fputs("      --preset FILE   load settings (key = value lines); later options override;\n"
          "                      earlier ones it changes are dropped, each named in a warning;\n"
          "                      a name (fig1-markov) reads your or the shipped preset of it\n"
          "      --batch         print the results as one JSON document and exit\n"
          "      --jsonl         with --batch: read one JSON object of settings per line on\n"
          "                      stdin (keys as in the document's config; missing keys take\n"
          "                      the options' values; \"max_time\" bounds the line's estimate\n"
          "                      as --max-time does) and print one result per line\n"
          "      --sweep-T       with --batch: add sr - 1 at the shown layer for T = 16, 32, ...\n"
          "                      (2, 4, ... when T < 16) up to T at the same T/d, gap off and\n"
          "                      removed, with log-log slopes over the resolved points\n"
          "                      (width_sweep)\n"
          "      --conditioning  with --batch: add kappa of A, of W_VO, of the attention block's\n"
          "                      input Jacobian K and of the block's a I + b' K per layer\n"
          "                      (conditioning)\n"
          "      --softmax-demo  with --batch: only kappa(softmax(alpha Z + beta I)), n = T, over\n"
          "                      --seeds draws, and its limit for alpha -> 0 (softmax_demo)\n"
          "      --export DIR    with --batch: also write CSV files and one SVG per plot into DIR\n"
          "      --export-matrix with --export (or the screen's x): also the shown layer's\n"
          "                      attention matrix in full (attention_matrix.csv; with\n"
          "                      --attention-map product, attention_product.csv too) and\n"
          "                      the input X0 (input.csv)\n"
          "      --verbose       with --batch: print the memory budget (and what set it) and the\n"
          "                      estimated compute time on stderr before computing, and the\n"
          "                      actual time after (with --jsonl: each line's)\n"
          "      --max-memory N  refuse configurations needing more (e.g. 512M, 2G; a bare\n"
          "                      number is MiB; default: half of the physical memory,\n"
          "                      or less where ulimit -v or the cgroup's memory limit\n"
          "                      leaves less)\n"
          "      --max-time S    with --batch: start a computation estimated at up to S seconds\n"
          "                      (default 3600; above it batch says the estimate and exits 2;\n"
          "                      with --jsonl each line is bounded so; a line's \"max_time\"\n"
          "                      key holds where --max-time is not given, and a line above\n"
          "                      its bound gets an error record)\n"
          "      --ascii         no Unicode glyphs\n"
          "      --no-color      no colours (NO_COLOR is honoured too)\n"
          "      --present       presentation mode (key Z): bold points and curves, the\n"
          "                      tour's notes on screen; z shows one panel full screen\n"
          "      --trace FILE    write the screen's events with monotonic ms (latency)\n"
          "      --no-confirm    start every job at once: the screen asks before a job it\n"
          "                      estimates above 30 s otherwise, batch refuses one above\n"
          "                      --max-time\n"
          "      --conditioning-path auto|exact|lanczos|kron\n"
          "                      how the conditioning (the screen's V, --conditioning) gets\n"
          "                      kappa(K): auto builds K in full (T*d <= 4096) unless that is\n"
          "                      priced above 60 s at this machine's rate, else kron (s_min by\n"
          "                      Davidson preconditioned through B's Kronecker factors, Lanczos\n"
          "                      where B is singular); exact, lanczos (Lanczos alone) and kron\n"
          "                      pin the path, whatever the machine's speed or load (batch\n"
          "                      refuses exact above T*d = 4096)\n"
          "      --weights FILE|DIR\n"
          "                      the weights of a safetensors checkpoint (a file, or a\n"
          "                      directory with model.safetensors or its sharded index)\n"
          "                      instead of drawn ones; the seed draws the input alone\n"
          "      --token-ids FILE\n"
          "                      the input's token ids (one a line, or a JSON array; T =\n"
          "                      their count), looked up in the checkpoint's embedding\n"
          "                      table or the drawn one; without it a checkpoint's table\n"
          "                      reads T ids drawn from the seed\n"
          "      --export-weights DIR\n"
          "                      write the weights as DIR/model.safetensors (Hugging Face\n"
          "                      Llama names) and DIR/config.json, then run --batch or exit\n"
          "      --export-dtype f64|f32|bf16\n"
          "                      the dtype --export-weights writes (default f64, exact)\n"
          "      --hf-config FILE|DIR\n"
          "                      the settings a Hugging Face config.json determines (DIR:\n"
          "                      DIR/config.json); later options override; fields the block\n"
          "                      does not model are warned about and listed in the JSON;\n"
          "                      earlier options it changes are dropped, each named in a warning\n"
          "  -h, --help          this text\n"
          "  -V, --version       version\n"
          "\n"
          "Exit codes: 0 success, 1 internal failure, 2 bad usage or input.\n",
          out);
}

/* The options that are not settings; a setting's long option returns OPT_SETTING + its index. */
enum {
    OPT_PRESET = 256,
    OPT_BATCH,
    OPT_JSONL,
    OPT_ASCII,
    OPT_NO_COLOR,
    OPT_PRESENT,
    OPT_SWEEP_T,
    OPT_MAX_MEMORY,
    OPT_EXPORT,
    OPT_TRACE,
    OPT_CONDITIONING,
    OPT_SOFTMAX_DEMO,
    OPT_VERBOSE,
    OPT_NO_CONFIRM,
    OPT_MAX_TIME,
    OPT_CONDITIONING_PATH,
    OPT_EXPORT_MATRIX,
    OPT_WEIGHTS,
    OPT_TOKEN_IDS,
    OPT_EXPORT_WEIGHTS,
    OPT_EXPORT_DTYPE,
    OPT_HF_CONFIG,
    OPT_SETTING = 512
};

static const struct option OTHER_OPTIONS[] = {
    {"preset", required_argument, NULL, OPT_PRESET},
    {"batch", no_argument, NULL, OPT_BATCH},
    {"jsonl", no_argument, NULL, OPT_JSONL},
    {"sweep-T", no_argument, NULL, OPT_SWEEP_T},
    {"conditioning", no_argument, NULL, OPT_CONDITIONING},
    {"softmax-demo", no_argument, NULL, OPT_SOFTMAX_DEMO},
    {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
    {"export", required_argument, NULL, OPT_EXPORT},
    {"ascii", no_argument, NULL, OPT_ASCII},
    {"no-color", no_argument, NULL, OPT_NO_COLOR},
    {"present", no_argument, NULL, OPT_PRESENT},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"no-confirm", no_argument, NULL, OPT_NO_CONFIRM},
    {"max-time", required_argument, NULL, OPT_MAX_TIME},
    {"conditioning-path", required_argument, NULL, OPT_CONDITIONING_PATH},
    {"export-matrix", no_argument, NULL, OPT_EXPORT_MATRIX},
    {"weights", required_argument, NULL, OPT_WEIGHTS},
    {"token-ids", required_argument, NULL, OPT_TOKEN_IDS},
    {"export-weights", required_argument, NULL, OPT_EXPORT_WEIGHTS},
    {"export-dtype", required_argument, NULL, OPT_EXPORT_DTYPE},
    {"hf-config", required_argument, NULL, OPT_HF_CONFIG},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
};
enum { OTHER_COUNT = sizeof OTHER_OPTIONS / sizeof OTHER_OPTIONS[0] };

/* "512M", "2G", "300" (MiB): a size in bytes, or 0 when malformed. */
static unsigned long long parse_size(const char *text)
{
    char *end;
    errno = 0;
    if (*text < '0' || *text > '9')
        return 0;
    unsigned long long v = strtoull(text, &end, 10);
    unsigned shift = 20;
    if (*end) {
        const char *units = "KMGT";
        const char *u = strchr(units, *end >= 'a' ? *end - 32 : *end);
        if (!u || !*u || (end[1] && strcmp(end + 1, "iB") != 0 && strcmp(end + 1, "B") != 0))
            return 0;
        shift = 10 * (unsigned)(u - units + 1);
    }
    if (errno == ERANGE || v == 0 || v > (~0ull >> shift))
        return 0;
    return v << shift;
}

unsigned long long Options_memory_budget(const Options *o)
{
    return o->max_memory ? o->max_memory : MemoryLimits_default()->bytes;
}

void Options_memory_budget_source(const Options *o, char *buf, size_t size)
{
    if (o->max_memory)
        snprintf(buf, size, "--max-memory");
    else
        snprintf(buf, size, "set by %s; --max-memory sets one", MemoryLimits_default()->source);
}

void Options_say_memory_budget(const Options *o, FILE *out)
{
    char source[MEMORY_SOURCE_SIZE];
    Options_memory_budget_source(o, source, sizeof source);
    fprintf(out, "attnscope: memory budget %llu MiB (%s)\n", Options_memory_budget(o) >> 20,
            source);
}

int Options_check_memory(const Options *o, const Config *c, char *err, size_t size)
{
    char source[MEMORY_SOURCE_SIZE], raise[96] = "";
    Options_memory_budget_source(o, source, sizeof source);
    if (!o->max_memory)
        MemoryLimits_raise_text(MemoryLimits_default(), Model_memory_estimate(c), raise,
                                sizeof raise);
    size_t used = strlen(source);
    snprintf(source + used, sizeof source - used, "%s", raise);
    return Budget_check_named(c, Options_memory_budget(o), source, err, size);
}

/* getopt_long's tables: the settings' options from the table, then the others. */
static void option_tables(struct option longs[SETTINGS_MAX + OTHER_COUNT + 1],
                          char shorts[2 * SETTINGS_MAX + 8])
{
    int n = 0;
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        longs[n++] = (struct option){s->name, required_argument, NULL, OPT_SETTING + i};
        if (s->letter) {
            size_t used = strlen(shorts);
            shorts[used] = s->letter;
            shorts[used + 1] = ':';
            shorts[used + 2] = '\0';
        }
    }
    strcat(shorts, "hV");
    for (int i = 0; i < OTHER_COUNT; i++)
        longs[n++] = OTHER_OPTIONS[i];
    longs[n] = (struct option){NULL, 0, NULL, 0};
}

/* The other options that set a flag or keep their argument as given: true when ch is one. */
static bool other_flag(int ch, Options *o)
{
    switch (ch) {
    case OPT_BATCH:
        o->batch = true;
        return true;
    case OPT_JSONL:
        o->jsonl = true;
        return true;
    case OPT_SWEEP_T:
        o->sweep_tokens = true;
        return true;
    case OPT_CONDITIONING:
        o->conditioning = true;
        return true;
    case OPT_SOFTMAX_DEMO:
        o->softmax_demo = true;
        return true;
    case OPT_ASCII:
        o->ascii = true;
        return true;
    case OPT_NO_COLOR:
        o->no_color = true;
        return true;
    case OPT_PRESENT:
        o->present = true;
        return true;
    case OPT_TRACE:
        o->trace_path = optarg;
        return true;
    case OPT_VERBOSE:
        o->verbose = true;
        return true;
    case OPT_NO_CONFIRM:
        o->no_confirm = true;
        return true;
    case OPT_EXPORT_MATRIX:
        o->export_matrix = true;
        return true;
    case 'h':
        o->help = true;
        return true;
    case 'V':
        o->version = true;
        return true;
    default:
        return false;
    }
}

/* Each setting that the file of option (--preset, --hf-config) changed from `before`: its
   origin, for the messages that name what gave a setting; an option typed before the file
   that it changed is dropped (Options_warn_dropped says so). */
static void note_file_origins(Options *o, const Config *before, const char *option)
{
    for (int i = 0; i < Settings_count(); i++) {
        double was = Setting_get(Settings_at(i), before),
               is = Setting_get(Settings_at(i), &o->config);
        if (was != is && !(isnan(was) && isnan(is))) {
            if (!o->origin_file[i])
                o->dropped_text[i] = o->given_text[i];
            o->origin_option[i] = option;
            o->origin_file[i] = optarg;
        }
    }
}

/* The field of --hf-config's file that set setting i last, NULL where an option or a preset
   did after it, or the file did not: a file that set the value the setting already had left no
   origin_file, but chose it all the same. */
static const char *hf_field(const Options *o, int i)
{
    bool by_file =
        o->origin_file[i] ? strcmp(o->origin_option[i], "--hf-config") == 0 : !o->given[i];
    return by_file && o->hf_config.file[0] ? HfConfig_field_of(&o->hf_config, Settings_at(i)->name)
                                           : NULL;
}

void Options_describe_origin(const void *context, const char *setting, char *buf, size_t size)
{
    const Options *o = context;
    const Setting *s = Settings_find(setting);
    int i = s ? (int)(s - Settings_at(0)) : -1;
    const char *field = i >= 0 ? hf_field(o, i) : NULL;
    if (field)
        snprintf(buf, size, "--hf-config %s's %s", o->hf_config.file, field);
    else if (i >= 0 && o->origin_file[i])
        snprintf(buf, size, "%s %s", o->origin_option[i], o->origin_file[i]);
    else
        snprintf(buf, size, i >= 0 && o->given[i] ? "--%s" : "--%s's default", setting);
}

bool Options_chosen(const void *context, const char *setting)
{
    const Options *o = context;
    const Setting *s = Settings_find(setting);
    int i = s ? (int)(s - Settings_at(0)) : -1;
    return i >= 0 && (o->given[i] || o->origin_file[i] || hf_field(o, i));
}

/* The other options whose argument is checked: 0, 2 with err written, or -1 when ch is none
   of them. */
static int other_value(int ch, Options *o, char *err, size_t size)
{
    switch (ch) {
    case OPT_PRESET: {
        char path[PATH_MAX];
        Config before = o->config;
        if (Presets_resolve(optarg, path, sizeof path, err, size) ||
            Options_load_preset(&o->config, path, err, size))
            return 2;
        note_file_origins(o, &before, "--preset");
        snprintf(o->preset_path, sizeof o->preset_path, "%s", path);
        return 0;
    }
    case OPT_HF_CONFIG: {
        /* Applied here, in its place among the options, as a preset is: later ones override. */
        char msg[OPTIONS_ERROR_SIZE];
        Config before = o->config;
        if (HfConfig_apply(optarg, &o->config, &o->hf_config, msg, sizeof msg) == 0) {
            note_file_origins(o, &before, "--hf-config");
            return 0;
        }
        snprintf(err, size, "--hf-config %s", msg);
        return 2;
    }
    case OPT_MAX_MEMORY:
        o->max_memory = parse_size(optarg);
        if (!o->max_memory) {
            snprintf(err, size,
                     "--max-memory '%s': accepted a size like 512M, 2G or 300 (MiB), above 0 "
                     "and at most %lluT",
                     optarg, ~0ull >> 40);
            return 2;
        }
        return 0;
    case OPT_EXPORT:
        if (!*optarg) {
            snprintf(err, size, "--export '': accepted a directory name");
            return 2;
        }
        o->export_dir = optarg;
        return 0;
    case OPT_MAX_TIME: {
        char *end;
        errno = 0;
        o->max_time = strtod(optarg, &end);
        if (end == optarg || *end || errno || !(o->max_time > 0) || !isfinite(o->max_time)) {
            snprintf(err, size, "--max-time '%s': accepted a number of seconds above 0", optarg);
            return 2;
        }
        return 0;
    }
    case OPT_CONDITIONING_PATH:
        o->conditioning_path = ConditioningPath_parse(optarg);
        if (o->conditioning_path < 0) {
            snprintf(err, size, "--conditioning-path '%s': accepted " CONDITIONING_PATH_ACCEPTED,
                     optarg);
            return 2;
        }
        return 0;
    case OPT_WEIGHTS:
    case OPT_EXPORT_WEIGHTS:
        if (!*optarg) {
            snprintf(err, size, "%s '': accepted a %s",
                     ch == OPT_WEIGHTS ? "--weights" : "--export-weights",
                     ch == OPT_WEIGHTS ? "safetensors file or a directory holding one"
                                       : "directory name");
            return 2;
        }
        *(ch == OPT_WEIGHTS ? &o->weights_path : &o->export_weights_dir) = optarg;
        return 0;
    case OPT_TOKEN_IDS:
        if (!*optarg) {
            snprintf(err, size, "--token-ids '': accepted a file of token ids");
            return 2;
        }
        o->token_ids_path = optarg;
        return 0;
    case OPT_EXPORT_DTYPE:
        o->export_dtype = strcmp(optarg, "f64") == 0    ? SAFETENSORS_F64
                          : strcmp(optarg, "f32") == 0  ? SAFETENSORS_F32
                          : strcmp(optarg, "bf16") == 0 ? SAFETENSORS_BF16
                                                        : -1;
        if (o->export_dtype < 0) {
            snprintf(err, size, "--export-dtype '%s': accepted f64, f32 or bf16", optarg);
            return 2;
        }
        o->export_dtype_given = true;
        return 0;
    default:
        return -1;
    }
}

/* getopt's reports of a missing value (':') and an unknown option ('?'): 2, err written. */
static int getopt_error(int ch, char **argv, char *err, size_t size)
{
    if (ch == ':')
        snprintf(err, size, "%s: needs a value (see --help)", argv[optind - 1]);
    else if (optopt)
        snprintf(err, size, "unknown option '-%c' (see --help)", optopt);
    else
        snprintf(err, size, "unknown option '%s' (see --help)", argv[optind - 1]);
    return 2;
}

/* The setting of a long option's code or of a letter. */
static const Setting *setting_of(int ch)
{
    const Setting *setting = Settings_at(ch - OPT_SETTING);
    for (int i = 0; !setting && i < Settings_count(); i++)
        if (Settings_at(i)->letter == ch)
            setting = Settings_at(i);
    return setting;
}

/* The options accepted only with (or without) others: 0, or 2 with err written. */
static int check_combinations(const Options *o, char *err, size_t size)
{
    if (!o->batch && (o->conditioning || o->softmax_demo)) {
        snprintf(err, size, "%s: accepted only with --batch (it adds to the JSON document)",
                 o->conditioning ? "--conditioning" : "--softmax-demo");
        return 2;
    }
    if (o->softmax_demo && (o->conditioning || o->sweep_tokens || o->export_dir)) {
        snprintf(err, size,
                 "--softmax-demo: accepted without --conditioning, --sweep-T and --export (it "
                 "prints the demo alone)");
        return 2;
    }
    if (o->batch && o->present) {
        snprintf(err, size,
                 "--present: accepted only without --batch (it starts the screen in presentation "
                 "mode; --batch draws no screen)");
        return 2;
    }
    if (o->softmax_demo && (o->weights_path || o->token_ids_path || o->hf_config.file[0])) {
        snprintf(err, size,
                 "--softmax-demo: accepted without %s (it draws softmax(alpha Z + beta I) "
                 "alone, from no checkpoint and no tokens)",
                 o->weights_path     ? "--weights"
                 : o->token_ids_path ? "--token-ids"
                                     : "--hf-config");
        return 2;
    }
    if (o->batch && o->trace_path) {
        snprintf(err, size,
                 "--trace '%s': accepted only without --batch (it records the interactive "
                 "screen's events)",
                 o->trace_path);
        return 2;
    }
    if (o->jsonl && !o->batch) {
        snprintf(err, size,
                 "--jsonl: accepted only with --batch (it reads configurations for "
                 "batch runs on stdin)");
        return 2;
    }
    if (o->jsonl && (o->conditioning || o->softmax_demo)) {
        snprintf(err, size,
                 "--jsonl: accepted without --conditioning and --softmax-demo (a line's record "
                 "is the batch document without them)");
        return 2;
    }
    if (o->jsonl && o->export_dir) {
        snprintf(err, size,
                 "--export '%s': accepted only without --jsonl (every line would overwrite "
                 "the same files)",
                 o->export_dir);
        return 2;
    }
    if (o->jsonl && o->export_weights_dir) {
        snprintf(err, size,
                 "--export-weights '%s': accepted only without --jsonl (each line describes its "
                 "own model; export one with --batch and that line's settings)",
                 o->export_weights_dir);
        return 2;
    }
    if (o->export_matrix && o->batch && !o->export_dir) {
        snprintf(err, size,
                 "--export-matrix: accepted with --batch only beside --export DIR (it adds the "
                 "attention matrix to the exported files), or on the screen (x exports it)");
        return 2;
    }
    if (o->export_dtype_given && !o->export_weights_dir) {
        snprintf(err, size, "--export-dtype: accepted only with --export-weights DIR");
        return 2;
    }
    if (o->weights_path && o->sweep_tokens) {
        snprintf(err, size,
                 "--weights '%s': accepted only without --sweep-T (the sweep runs other widths, "
                 "which the checkpoint's shapes do not fit)",
                 o->weights_path);
        return 2;
    }
    if (o->weights_path && o->jsonl) {
        snprintf(err, size,
                 "--weights '%s': accepted only without --jsonl (a line could change the "
                 "shapes the checkpoint fixes)",
                 o->weights_path);
        return 2;
    }
    if (o->token_ids_path && (o->jsonl || o->sweep_tokens)) {
        snprintf(err, size, "--token-ids '%s': accepted only without %s (the file's ids fix T)",
                 o->token_ids_path, o->jsonl ? "--jsonl" : "--sweep-T");
        return 2;
    }
    if (o->hf_config.file[0] && o->jsonl) {
        snprintf(err, size,
                 "--hf-config '%s': accepted only without --jsonl (its unmodelled fields belong "
                 "to the configuration it read, which a line could change)",
                 o->hf_config.file);
        return 2;
    }
    if (o->verbose && !o->batch) {
        snprintf(err, size,
                 "--verbose: accepted only with --batch (the screen shows its estimate on the "
                 "status line)");
        return 2;
    }
    return 0;
}

/* The settings --softmax-demo reads: n = T, α, β and the draws; and d, which it does not read
   but which must keep T <= d for Config_validate. */
static bool softmax_demo_reads(const Setting *s)
{
    static const char *const read[] = {"tokens", "init-alpha", "init-beta",
                                       "seed",   "seeds",      "width"};
    for (size_t i = 0; i < sizeof read / sizeof read[0]; i++)
        if (strcmp(s->name, read[i]) == 0)
            return true;
    return false;
}

/* With --softmax-demo every setting it does not read, given other than at its default, would
   be ignored without a word (the JSON's config records it): refused, naming it. */
static int check_softmax_demo_settings(const Options *o, char *err, size_t size)
{
    Config defaults = Config_default();
    for (int i = 0; o->softmax_demo && i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (!o->given[i] || softmax_demo_reads(s) ||
            Setting_get(s, &o->config) == Setting_get(s, &defaults))
            continue;
        char name[64], shown[64];
        Setting_format(s, &o->config, 0, shown, sizeof shown);
        snprintf(err, size,
                 "%s %s: ignored with --softmax-demo, which reads only -T, --init-alpha, "
                 "--init-beta, --seed and --seeds (and takes -d for T <= d)",
                 Setting_spelled(s, name, sizeof name), shown);
        return 2;
    }
    return 0;
}

int Options_parse_each(int argc, char **argv, Options *o, char *err, size_t size)
{
    struct option longs[SETTINGS_MAX + OTHER_COUNT + 1];
    char shorts[2 * SETTINGS_MAX + 8] = ":";
    option_tables(longs, shorts);
    *o = (Options){.config = Config_default()};
    opterr = 0;
    optind = 0; /* GNU: 0 re-initialises, so the parser can run more than once */
    int ch;
    while ((ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (other_flag(ch, o))
            continue;
        int status = other_value(ch, o, err, size);
        if (status >= 0) {
            if (status)
                return status;
            continue;
        }
        if (ch == ':' || ch == '?')
            return getopt_error(ch, argv, err, size);
        const Setting *setting = setting_of(ch);
        if (Setting_parse(setting, &o->config, optarg, err, size))
            return 2;
        o->given[setting - Settings_at(0)] = true;
        o->given_text[setting - Settings_at(0)] = optarg;
        o->dropped_text[setting - Settings_at(0)] = NULL;
        o->origin_file[setting - Settings_at(0)] = NULL;
    }
    if (optind < argc) {
        snprintf(err, size, "unexpected argument '%s' (see --help)", argv[optind]);
        return 2;
    }
    if (o->help || o->version)
        return 0;
    if (HfConfig_check(&o->hf_config, &o->config, err, size))
        return 2;
    return check_combinations(o, err, size);
}

void Options_warn_dropped(const Options *o, FILE *out)
{
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        if (!o->dropped_text[i] || !o->origin_file[i])
            continue;
        char spelled[64], holds[64];
        Setting_spelled(s, spelled, sizeof spelled);
        Setting_format(s, &o->config, 0, holds, sizeof holds);
        fprintf(out,
                "attnscope: warning: %s %s is dropped: %s %s, given after it, sets %s = %s (give "
                "options after %s to override it)\n",
                spelled, o->dropped_text[i], o->origin_option[i], o->origin_file[i], s->name, holds,
                o->origin_option[i]);
    }
}

bool Options_given(const Options *o, const char *name)
{
    const Setting *s = Settings_find(name);
    return s && o->given[s - Settings_at(0)];
}

void Options_warn_inert(const Options *o, const Config *c, Warnings *w)
{
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        char text[WARNING_LENGTH];
        if ((o->given[i] || Setting_get(s, c) != Setting_get(s, &o->config)) &&
            Setting_inert_text(s, c, text, sizeof text) > 0)
            Warnings_add_about(w, WARNING_ABOUT_RUN, "%s", text);
    }
}

/* A relation between settings refused (Config_validate) names them as options; where one was
   set by a file (--hf-config, --preset) and left so by the options after it, nobody typed
   that option: the message adds where its value came from, --hf-config's field too. */
static void name_file_origins(const Options *o, char *err, size_t size)
{
    for (int i = 0; i < Settings_count(); i++) {
        const Setting *s = Settings_at(i);
        char spelled[64], value[64];
        snprintf(spelled, sizeof spelled, "--%s ", s->name);
        if (!o->origin_file[i] || !strstr(err, spelled))
            continue;
        bool hf = strcmp(o->origin_option[i], "--hf-config") == 0;
        const char *field = hf ? HfConfig_field_of(&o->hf_config, s->name) : NULL;
        Setting_format(s, &o->config, 0, value, sizeof value);
        size_t n = strlen(err);
        if (field)
            snprintf(err + n, size - n, "; --%s %s is \"%s\" of --hf-config '%s'", s->name, value,
                     field, o->hf_config.file);
        else
            snprintf(err + n, size - n, "; --%s %s is %s %s's", s->name, value, o->origin_option[i],
                     o->origin_file[i]);
    }
}

int Options_parse(int argc, char **argv, Options *o, char *err, size_t size)
{
    int status = Options_parse_each(argc, argv, o, err, size);
    if (status || o->help || o->version)
        return status;
    /* Token ids, and a checkpoint's embedding table where it has one, are the embedding
       input's (main.c settles it once the checkpoint is open). */
    if ((o->token_ids_path || o->weights_path) && !Options_given(o, "input"))
        o->config.input = INPUT_EMBEDDING;
    if (o->token_ids_path && o->config.input != INPUT_EMBEDDING) {
        snprintf(err, size,
                 "--token-ids '%s': accepted only with the embedding input (not --input %s): "
                 "the ids index its table",
                 o->token_ids_path, INPUT_NAMES.names[o->config.input]);
        return 2;
    }
    /* With --jsonl the command line's settings are only the base of each line, which checks
       its own combination (an error record); each value was checked as it was parsed. */
    if (!o->jsonl && Config_validate(&o->config, err, size)) {
        name_file_origins(o, err, size);
        return 2;
    }
    return check_softmax_demo_settings(o, err, size);
}

int Options_flush_stdout(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    perror("attnscope: stdout");
    return 1;
}
