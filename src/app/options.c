#include "options.h"

#include "attnscope/model.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Seeds travel through JSON, whose numbers are doubles: keep them exact there. */
#define SEED_MAX 9007199254740991ull /* 2^53 − 1 */

typedef enum { SETTING_INT, SETTING_DOUBLE, SETTING_SEED, SETTING_ENUM } SettingType;

/* One model setting: its long name, short letter, type, range and where it lives. */
typedef struct {
    const char *name;
    char letter;
    SettingType type;
    long min, max;
    const EnumNames *names;
    size_t offset;
} Setting;

#define FIELD(f) offsetof(Config, f)
static const Setting SETTINGS[] = {
    {"tokens", 'T', SETTING_INT, CONFIG_TOKENS_MIN, CONFIG_TOKENS_MAX, NULL, FIELD(tokens)},
    {"width", 'd', SETTING_INT, CONFIG_WIDTH_MIN, CONFIG_WIDTH_MAX, NULL, FIELD(width)},
    {"depth", 'L', SETTING_INT, CONFIG_DEPTH_MIN, CONFIG_DEPTH_MAX, NULL, FIELD(depth)},
    {"sigma-qk", 's', SETTING_DOUBLE, 0, 0, NULL, FIELD(sigma_qk)},
    {"attention", 'a', SETTING_ENUM, 0, 0, &ATTENTION_NAMES, FIELD(attention)},
    {"mask", 'm', SETTING_ENUM, 0, 0, &MASK_NAMES, FIELD(mask)},
    {"window", 'w', SETTING_INT, 1, CONFIG_TOKENS_MAX - 1, NULL, FIELD(window)},
    {"gap", 'g', SETTING_ENUM, 0, 0, &GAP_NAMES, FIELD(gap)},
    {"layernorm", 'n', SETTING_ENUM, 0, 0, &LAYERNORM_NAMES, FIELD(layernorm)},
    {"skip", 'k', SETTING_ENUM, 0, 0, &SKIP_NAMES, FIELD(skip)},
    {"layer", 'l', SETTING_INT, 1, CONFIG_DEPTH_MAX, NULL, FIELD(layer)},
    {"seed", 0, SETTING_SEED, 0, 0, NULL, FIELD(seed)},
    {"seeds", 0, SETTING_INT, 1, CONFIG_SEEDS_MAX, NULL, FIELD(seeds)},
};
enum { SETTINGS_COUNT = sizeof SETTINGS / sizeof SETTINGS[0] };

static const Setting *setting_named(const char *name)
{
    for (int i = 0; i < SETTINGS_COUNT; i++)
        if (strcmp(SETTINGS[i].name, name) == 0)
            return &SETTINGS[i];
    return NULL;
}

/* "-T/--tokens" or "--seed", for messages. */
static const char *spelled(const Setting *s, char *buf, size_t size)
{
    if (s->letter)
        snprintf(buf, size, "-%c/--%s", s->letter, s->name);
    else
        snprintf(buf, size, "--%s", s->name);
    return buf;
}

/* "-T/--tokens '12x'": the value cut after 40 bytes, so that what is accepted always fits
   in the message (a preset line may be megabytes long). */
static void named(const Setting *s, const char *value, char *buf, size_t size)
{
    char opt[32];
    snprintf(buf, size, "%s '%.40s%s'", spelled(s, opt, sizeof opt), value,
             strlen(value) > 40 ? "..." : "");
}

int Options_set(Config *c, const char *name, const char *value, char *err, size_t size)
{
    const Setting *s = setting_named(name);
    char opt[96];
    if (!s) {
        snprintf(err, size, "unknown setting '%s'", name);
        return -1;
    }
    named(s, value, opt, sizeof opt);
    char *end = NULL;
    errno = 0;
    /* strtol and strtod skip leading blanks: refuse them, as trailing ones are. */
    bool blank = *value == ' ' || (*value >= '\t' && *value <= '\r');
    switch (s->type) {
    case SETTING_INT: {
        long v = strtol(value, &end, 10);
        if (*value == '\0' || blank || *end != '\0' || errno == ERANGE || v < s->min ||
            v > s->max) {
            snprintf(err, size, "%s: accepted a whole number %ld..%ld", opt, s->min, s->max);
            return -1;
        }
        *(int *)((char *)c + s->offset) = (int)v;
        return 0;
    }
    case SETTING_DOUBLE: {
        double v = strtod(value, &end);
        if (*value == '\0' || blank || *end != '\0' || !isfinite(v) || !(v > 0) ||
            v > CONFIG_SIGMA_QK_MAX) {
            snprintf(err, size, "%s: accepted a number 0 < X <= %g", opt, CONFIG_SIGMA_QK_MAX);
            return -1;
        }
        *(double *)((char *)c + s->offset) = v;
        return 0;
    }
    case SETTING_SEED: {
        unsigned long long v = strtoull(value, &end, 10);
        if (*value < '0' || *value > '9' || *end != '\0' || errno == ERANGE || v > SEED_MAX) {
            snprintf(err, size, "%s: accepted a whole number 0..%llu", opt, SEED_MAX);
            return -1;
        }
        *(uint64_t *)((char *)c + s->offset) = (uint64_t)v;
        return 0;
    }
    case SETTING_ENUM: {
        int v = EnumNames_find(s->names, value);
        if (v < 0) {
            char list[128];
            snprintf(err, size, "%s: accepted %s", opt,
                     EnumNames_list(s->names, list, sizeof list));
            return -1;
        }
        *(int *)((char *)c + s->offset) = v;
        return 0;
    }
    }
    return -1;
}

int Options_write_preset(const Config *c, char *buf, size_t size)
{
    return snprintf(buf, size,
                    "tokens = %d\nwidth = %d\ndepth = %d\nsigma-qk = %.17g\nattention = %s\n"
                    "mask = %s\nwindow = %d\ngap = %s\nlayernorm = %s\nskip = %s\nlayer = %d\n"
                    "seed = %llu\nseeds = %d\n",
                    c->tokens, c->width, c->depth, c->sigma_qk, ATTENTION_NAMES.names[c->attention],
                    MASK_NAMES.names[c->mask], c->window, GAP_NAMES.names[c->gap],
                    LAYERNORM_NAMES.names[c->layernorm], SKIP_NAMES.names[c->skip], c->layer,
                    (unsigned long long)c->seed, c->seeds);
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

/* The length of the UTF-8 sequence at p, or 0 when it is none (a stray continuation
   byte, an overlong form, a surrogate, beyond U+10FFFF, 0xFE and 0xFF). */
static size_t utf8_length(const unsigned char *p)
{
    int more;
    unsigned char lo = 0x80, hi = 0xBF;
    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) {
        more = 1;
    } else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        more = 2;
        lo = p[0] == 0xE0 ? 0xA0 : 0x80;
        hi = p[0] == 0xED ? 0x9F : 0xBF;
    } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        more = 3;
        lo = p[0] == 0xF0 ? 0x90 : 0x80;
        hi = p[0] == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    for (int i = 1; i <= more; i++, lo = 0x80, hi = 0xBF)
        if (p[i] < lo || p[i] > hi) /* the terminating NUL ends it here too */
            return 0;
    return (size_t)more + 1;
}

/* Parses one preset line into c; returns 0, or -1 with the message (without FILE:LINE). */
static int preset_line(Config *c, char *line, size_t length, bool seen[SETTINGS_COUNT], char *err,
                       size_t size)
{
    if (strlen(line) != length) {
        snprintf(err, size, "contains a NUL byte: a preset is plain text");
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)line; *p;) {
        size_t n = utf8_length(p);
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
    const Setting *s = setting_named(key);
    if (!s) {
        char names[256];
        size_t used = 0;
        for (int i = 0; i < SETTINGS_COUNT && used < sizeof names; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     SETTINGS[i].name);
        snprintf(err, size, "unknown key '%.40s'; accepted: %s", key, names);
        return -1;
    }
    if (seen[s - SETTINGS]) {
        snprintf(err, size, "duplicate key '%s'", key);
        return -1;
    }
    seen[s - SETTINGS] = true;
    return Options_set(c, key, value, err, size);
}

int Options_load_preset(Config *c, const char *path, char *err, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, size, "--preset '%s': %s", path, strerror(errno));
        return -1;
    }
    Config trial = *c;
    bool seen[SETTINGS_COUNT] = {false};
    char *line = NULL, msg[OPTIONS_ERROR_SIZE];
    size_t cap = 0;
    ssize_t got;
    int number = 0, status = 0;
    errno = 0;
    while ((got = getline(&line, &cap, f)) >= 0) {
        number++;
        if (preset_line(&trial, line, (size_t)got, seen, msg, sizeof msg)) {
            snprintf(err, size, "%s:%d: %s", path, number, msg);
            status = -1;
            break;
        }
    }
    if (status == 0 && ferror(f)) {
        snprintf(err, size, "%s: %s", path, strerror(errno ? errno : EIO));
        status = -1;
    }
    free(line);
    fclose(f);
    if (status == 0)
        *c = trial;
    return status;
}

void Options_usage(FILE *out)
{
    fputs("Usage: attnscope [options]            interactive screen\n"
          "       attnscope --batch [options]    compute once, print one JSON document\n"
          "\n"
          "  -T, --tokens N      tokens, 2..4096 (256); needs T <= d\n"
          "  -d, --width N       width d = d_qk, 1..4096 (256)\n"
          "  -L, --depth N       layers, 1..256 (8)\n"
          "  -s, --sigma-qk X    std of the query/key weights, 0 < X <= 4 (1.0)\n"
          "  -a, --attention K   softmax|markov|relu|sigmoid|linear|uniform|identity (softmax)\n"
          "  -m, --mask M        full|causal|window|window-causal (full)\n"
          "  -w, --window W      window half-width, 1..T-1 (1)\n"
          "  -g, --gap G         off|center|uniform|deflate|outliers (off)\n"
          "  -n, --layernorm N   none|rms|ln (none)\n"
          "  -k, --skip S        none|plain|scaled (none)\n"
          "  -l, --layer N       layer whose attention matrix is shown, 1..depth (1)\n"
          "      --seed N        random seed, 0..2^53-1 (1)\n"
          "      --seeds N       ensemble size for the stable-rank curves, 1..1024 (1)\n"
          "      --preset FILE   load settings (key = value lines); later options override\n"
          "      --batch         print the results as one JSON document and exit\n"
          "      --sweep-T       with --batch: add sr - 1 at the shown layer for T = 16, 32, ...\n"
          "                      up to T at the same T/d, gap off and removed (width_sweep)\n"
          "      --export DIR    with --batch: also write CSV files and one SVG per plot into DIR\n"
          "      --max-memory N  refuse configurations needing more (e.g. 512M, 2G; default:\n"
          "                      half of the physical memory)\n"
          "      --ascii         no Unicode glyphs\n"
          "      --no-color      no colours (NO_COLOR is honoured too)\n"
          "      --trace FILE    write the screen's events with monotonic ms (latency)\n"
          "  -h, --help          this text\n"
          "  -V, --version       version\n"
          "\n"
          "Exit codes: 0 success, 1 internal failure, 2 bad usage or input.\n",
          out);
}

enum {
    OPT_SEED = 256,
    OPT_SEEDS,
    OPT_PRESET,
    OPT_BATCH,
    OPT_ASCII,
    OPT_NO_COLOR,
    OPT_SWEEP_T,
    OPT_MAX_MEMORY,
    OPT_EXPORT,
    OPT_TRACE
};

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
    if (o->max_memory)
        return o->max_memory;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? (unsigned long long)pages * (unsigned long long)page / 2
                                 : 1ull << 32;
}

int Options_check_memory(const Options *o, const Config *c, char *err, size_t size)
{
    unsigned long long need = Model_memory_estimate(c), budget = Options_memory_budget(o);
    if (need <= budget)
        return 0;
    snprintf(err, size,
             "T = %d, d = %d, depth %d needs about %.0f MiB, above the memory budget of %.0f "
             "MiB (--max-memory, default half of the physical memory)",
             c->tokens, c->width, c->depth, need / 1048576.0, budget / 1048576.0);
    return -1;
}

int Options_parse(int argc, char **argv, Options *o, char *err, size_t size)
{
    static const struct option longs[] = {
        {"tokens", required_argument, NULL, 'T'},
        {"width", required_argument, NULL, 'd'},
        {"depth", required_argument, NULL, 'L'},
        {"sigma-qk", required_argument, NULL, 's'},
        {"attention", required_argument, NULL, 'a'},
        {"mask", required_argument, NULL, 'm'},
        {"window", required_argument, NULL, 'w'},
        {"gap", required_argument, NULL, 'g'},
        {"layernorm", required_argument, NULL, 'n'},
        {"skip", required_argument, NULL, 'k'},
        {"layer", required_argument, NULL, 'l'},
        {"seed", required_argument, NULL, OPT_SEED},
        {"seeds", required_argument, NULL, OPT_SEEDS},
        {"preset", required_argument, NULL, OPT_PRESET},
        {"batch", no_argument, NULL, OPT_BATCH},
        {"sweep-T", no_argument, NULL, OPT_SWEEP_T},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"export", required_argument, NULL, OPT_EXPORT},
        {"ascii", no_argument, NULL, OPT_ASCII},
        {"no-color", no_argument, NULL, OPT_NO_COLOR},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    *o = (Options){.config = Config_default()};
    opterr = 0;
    optind = 0; /* GNU: 0 re-initialises, so the parser can run more than once */
    int ch;
    while ((ch = getopt_long(argc, argv, ":T:d:L:s:a:m:w:g:n:k:l:hV", longs, NULL)) != -1) {
        const char *setting = NULL;
        switch (ch) {
        case OPT_SEED:
            setting = "seed";
            break;
        case OPT_SEEDS:
            setting = "seeds";
            break;
        case OPT_PRESET:
            if (Options_load_preset(&o->config, optarg, err, size))
                return 2;
            continue;
        case OPT_BATCH:
            o->batch = true;
            continue;
        case OPT_MAX_MEMORY:
            o->max_memory = parse_size(optarg);
            if (!o->max_memory) {
                snprintf(err, size,
                         "--max-memory '%s': accepted a size like 512M, 2G or 300 (MiB), above 0",
                         optarg);
                return 2;
            }
            continue;
        case OPT_EXPORT:
            if (!*optarg) {
                snprintf(err, size, "--export '': accepted a directory name");
                return 2;
            }
            o->export_dir = optarg;
            continue;
        case OPT_SWEEP_T:
            o->sweep_tokens = true;
            continue;
        case OPT_ASCII:
            o->ascii = true;
            continue;
        case OPT_NO_COLOR:
            o->no_color = true;
            continue;
        case OPT_TRACE:
            o->trace_path = optarg;
            continue;
        case 'h':
            o->help = true;
            continue;
        case 'V':
            o->version = true;
            continue;
        case ':':
            snprintf(err, size, "%s: needs a value (see --help)", argv[optind - 1]);
            return 2;
        case '?':
            if (optopt)
                snprintf(err, size, "unknown option '-%c' (see --help)", optopt);
            else
                snprintf(err, size, "unknown option '%s' (see --help)", argv[optind - 1]);
            return 2;
        default:
            for (int i = 0; i < SETTINGS_COUNT; i++)
                if (SETTINGS[i].letter == ch)
                    setting = SETTINGS[i].name;
            break;
        }
        if (Options_set(&o->config, setting, optarg, err, size))
            return 2;
    }
    if (optind < argc) {
        snprintf(err, size, "unexpected argument '%s' (see --help)", argv[optind]);
        return 2;
    }
    if (o->help || o->version)
        return 0;
    if (o->batch && o->trace_path) {
        snprintf(err, size,
                 "--trace '%s': accepted only without --batch (it records the interactive "
                 "screen's events)",
                 o->trace_path);
        return 2;
    }
    return Config_validate(&o->config, err, size) ? 2 : 0;
}
