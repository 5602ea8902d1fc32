/* Settings as text: one "name value" as a preset line, and a line of several as the screen's `:`
 * line takes them (`heads 4 kv-heads 2`, `--head-dim 128`, `rope-scaling=llama3`).  Both go
 * through Setting_parse, so a value is accepted or refused with the command line's own words.
 */
#ifndef ATTNSCOPE_COMMON_SETTING_LINE_H
#define ATTNSCOPE_COMMON_SETTING_LINE_H

#include "attnscope/config.h"

#include <stdbool.h>
#include <stddef.h>

/* The setting spelled `word`: its long option (with or without "--"), "-" and its letter, or
   its JSON key; NULL when none is. */
const Setting *SettingLine_setting(const char *word);

/* Sets s in c from value, refusing a setting given twice (seen[], by table index, marks the
   ones given so far).  Returns 0, or -1 with the message of Setting_parse (or "duplicate
   key"). */
int SettingLine_assign(const Setting *s, Config *c, const char *value, bool seen[SETTINGS_MAX],
                       char *err, size_t size);

/* Sets the settings of text in c, all of them or none: each name and its value as above,
   apart by blanks or by '=' ("head-dim 128", "head-dim=128", "--head-dim 128", "-T 64"),
   several in a row, the last of a setting given twice winning as on the command line; the
   relations between settings are not checked.  Returns the number of
   settings set (1 or more), or -1 with a message naming the setting, the value and what is
   accepted, c untouched.  `changed` (by table index, may be NULL) marks the settings given. */
int SettingLine_set(Config *c, const char *text, bool changed[SETTINGS_MAX], char *err,
                    size_t size);

/* SettingLine_set, then the relations between settings (Config_validate) on the whole, as the
   command line checks them, so that `heads 4 kv-heads 2` passes where either alone would not:
   all or nothing. */
int SettingLine_apply(Config *c, const char *text, bool changed[SETTINGS_MAX], char *err,
                      size_t size);

/* What s accepts, as --help words it: "2..d", "0 < X <= 4", "full|causal|window". */
void SettingLine_accepted(const Setting *s, char *buf, size_t size);

#endif
