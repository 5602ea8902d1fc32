/* The interactive screen: the entry point the program calls. */
#ifndef ATTNSCOPE_TUI_TUI_H
#define ATTNSCOPE_TUI_TUI_H

#include "attnscope/config.h"
#include "attnscope/model.h"
#include "hf_config.h"

#include <stdbool.h>
#include <stddef.h>

/* What the screen's status line says at start when only one of OpenBLAS's buffers fits
   (one_lane); main says why in full on stderr. */
#define TUI_ONE_LANE_NOTE "one lane: ulimit -v fits one BLAS buffer"

typedef struct {
    Config config;                    /* first settings (valid: Config_validate passed) */
    bool ascii;                       /* --ascii: no Unicode even in a UTF-8 locale */
    bool no_color;                    /* --no-color (NO_COLOR is read here too) */
    bool no_confirm;                  /* --no-confirm: never ask before a long job */
    int conditioning_path;            /* --conditioning-path (ConditioningPath) */
    bool export_matrix;               /* --export-matrix: x writes the attention matrix too */
    bool present;                     /* --present: start in presentation mode */
    const char *trace_path;           /* --trace FILE, or NULL */
    unsigned long long memory_budget; /* bytes a job may take (keys beyond it are refused) */
    const char *memory_budget_source; /* what set it, for the refusal ("--max-memory", ...) */
    /* Only one of OpenBLAS's buffers fits the address space (ulimit -v): the network and its
       counterpart run in turn, and the status line says why at start. */
    bool one_lane;
    /* The classroom tour stepped with > and <: its directory (NULL: none) and the preset
       parser the command line uses (all of the file or nothing, "FILE:LINE: ..." in err). */
    const char *tour_dir;
    /* The --preset file the settings came from (NULL: none): its "Point at:" note is shown in
       presentation mode while the settings are its own, found in the tour or not. */
    const char *start_preset;
    /* The shipped presets the picker (P) lists beside the tour and the user's own. */
    const char *presets_dir;
    int (*load_preset)(Config *c, const char *path, char *err, size_t size);
    /* The preset writer the command line uses (p saves the settings with it); returns the
       length it needed, as snprintf does. */
    int (*format_preset)(const Config *c, char *buf, size_t size);
    /* --hf-config's report, whose warnings (fields not modelled) no run makes: each is listed
       with every result it describes (HfConfig_warning_holds of config and the result's
       settings).  NULL: no file was read. */
    const HfConfigReport *hf_config;
} TuiSettings;

/* Runs the screen until q or a signal.  Returns the exit status: 0, 2 when there is no
   terminal, $TERM is unset, unknown or cannot move the cursor, or the trace file cannot be
   opened (message on stderr), 1 on internal failure.  After SIGINT, SIGTERM or SIGHUP the
   terminal is restored and the process ends by that signal; after a crash (SIGSEGV,
   SIGBUS, SIGFPE, SIGILL, SIGABRT) too. */
int Tui_run(const TuiSettings *s);

#endif
