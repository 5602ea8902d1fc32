/* The command line and the preset files, both generated from the
 * settings table (config.h): a preset line `key = value` means exactly `--key value`. */
#ifndef ATTNSCOPE_OPTIONS_H
#define ATTNSCOPE_OPTIONS_H

#include "attnscope/config.h"
#include "attnscope/model.h"
#include "hf_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { OPTIONS_PATH_SIZE = 4096 }; /* PATH_MAX on Linux */

typedef struct {
    Config config;
    bool batch;
    bool jsonl;                     /* --jsonl: with --batch, one configuration per stdin line */
    bool sweep_tokens;              /* --sweep-T: add the width sweep to the batch document */
    bool conditioning;              /* --conditioning: add the conditioning object */
    bool softmax_demo;              /* --softmax-demo: the softmax conditioning demo instead */
    unsigned long long max_memory;  /* bytes; 0: half of the physical memory */
    const char *export_dir;         /* --export DIR: CSV and SVG files of the result */
    const char *weights_path;       /* --weights FILE|DIR: a checkpoint's weights, not drawn */
    const char *token_ids_path;     /* --token-ids FILE: the embedding input's ids */
    bool given[SETTINGS_MAX];       /* the settings the command line gave, by table index */
    const char *export_weights_dir; /* --export-weights DIR: the weights as a checkpoint */
    HfConfigReport hf_config;       /* --hf-config FILE|DIR: what it read (file "" if none) */
    int export_dtype;               /* --export-dtype: a SafetensorsDtype, F64 by default */
    bool export_dtype_given;
    bool export_matrix; /* --export-matrix: and the attention matrix in full */
    bool ascii;
    bool no_color;
    bool present; /* --present: the screen starts in presentation mode */
    bool help;
    bool version;
    const char *trace_path; /* --trace FILE: the screen's timestamped events */
    bool verbose;           /* --verbose: batch prints its estimated and actual time */
    bool no_confirm;        /* --no-confirm: the screen never asks before a long job */
    double max_time; /* --max-time SECONDS: the longest estimate batch starts; 0: none given */
    int conditioning_path; /* --conditioning-path: a ConditioningPath, auto by default */
    /* By table index, the --preset or --hf-config whose file last changed the setting (the
       option, and its argument), NULL where an option after it, or nothing, set it. */
    const char *origin_option[SETTINGS_MAX], *origin_file[SETTINGS_MAX];
    /* By table index, the argument of the setting's option as typed (given_text), and that
       argument where a --preset or --hf-config after it changed the setting and no option
       set it again (dropped_text), NULL otherwise: Options_warn_dropped names each. */
    const char *given_text[SETTINGS_MAX], *dropped_text[SETTINGS_MAX];
    /* The last --preset's file as found (a tour step's note is read from it), "" if none. */
    char preset_path[OPTIONS_PATH_SIZE];
} Options;

/* The longest estimated compute time --batch starts without --max-time or --no-confirm. */
#define BATCH_MAX_SECONDS 3600.0

enum { OPTIONS_ERROR_SIZE = 1280 }; /* an unknown key's error lists every setting */

/* One warning on out for each option that a --preset or --hf-config after it overrode
   (Options.dropped_text): what was typed, the file, and the value that holds. */
void Options_warn_dropped(const Options *o, FILE *out);

/* Parses argv into o (defaults first, then each option and preset in order).  Returns 0,
   or 2 with a message in err that names the option, the value and what is accepted. */
int Options_parse(int argc, char **argv, Options *o, char *err, size_t size);

/* Whether the command line gave the setting called name. */
bool Options_given(const Options *o, const char *name);

/* SettingOrigins.describe for the Options at context: "--width" where an option set the
   setting last, "--hf-config ckpt/config.json's hidden_size" where --hf-config's file did
   ("--preset P" for a preset), "--width's default" where nothing did. */
void Options_describe_origin(const void *context, const char *setting, char *buf, size_t size);

/* SettingOrigins.chosen for the Options at context: whether an option or a file (--preset,
   --hf-config) set the setting, rather than its default. */
bool Options_chosen(const void *context, const char *setting);

/* A warning in w for each setting that the user set and that has no effect in c
   (Setting_inert_text): set means given on the command line, or changed from o's value by
   c's own source (a --jsonl line); a preset's lines alone do not warn, since a preset
   writes every setting whether it applies or not. */
void Options_warn_inert(const Options *o, const Config *c, Warnings *w);

/* Options_parse without the checks between settings (Config_validate): for a caller that
   changes the settings further (the grid) and checks each result itself. */
int Options_parse_each(int argc, char **argv, Options *o, char *err, size_t size);

/* Applies a preset file: all of it, or (on the first malformed line) nothing, with the
   message "FILE:LINE: ..." in err.  Returns 0 or -1. */
int Options_load_preset(Config *c, const char *path, char *err, size_t size);

/* Writes the preset lines describing c, one per setting (the keys the reader takes); returns
   the length it needed, as snprintf does. */
int Options_write_preset(const Config *c, char *buf, size_t size);

/* Flushes what --help or --version wrote: 0, or 1 with the reason on stderr (a full disk,
   a closed pipe), so that nothing written is never a success. */
int Options_flush_stdout(void);

void Options_usage(FILE *out);

/* The memory budget in bytes: --max-memory, or the least of the process's real limits
   (MemoryLimits_default). */
unsigned long long Options_memory_budget(const Options *o);

enum { MEMORY_SOURCE_SIZE = 320 };

/* What set that budget, for the messages: "--max-memory", or "set by ulimit -v of 244 MiB,
   ...; --max-memory sets one". */
void Options_memory_budget_source(const Options *o, char *buf, size_t size);

/* --verbose's line "attnscope: memory budget N MiB (what set it)" on out. */
void Options_say_memory_budget(const Options *o, FILE *out);

/* Budget_check against that budget. */
int Options_check_memory(const Options *o, const Config *c, char *err, size_t size);

#endif
