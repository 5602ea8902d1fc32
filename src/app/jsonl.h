/* Many configurations in one process: `attnscope --batch --jsonl` reads one JSON object of
 * settings per line on stdin and writes one result record per line on stdout, in input order.
 * Also the JSON spelling of a Config, read and written through the settings table, which the
 * grid and merge share.
 */
#ifndef ATTNSCOPE_JSONL_H
#define ATTNSCOPE_JSONL_H

#include "attnscope/model.h"
#include "json.h"
#include "json_read.h"
#include "options.h"

#include <stdio.h>

/* Applies the members of a JSON object to c, each key being a setting's JSON key (the
   batch document's "config" object; its "d_qk" must equal "d").  Keys not given keep c's
   values.  Returns 0, or -1 with a message naming the key, the value and what is accepted
   (c may then be partly changed). */
int Jsonl_apply_config(const JsonValue *object, Config *c, char *err, size_t size);

/* Applies a configuration line (grid's output, --jsonl's input) to c: its settings as
   Jsonl_apply_config does, and its job key "max_time", the bound on the line's estimated
   seconds (a number above 0), into *max_time (0 where not given).  Returns 0, or -1 with a
   message naming the key, the value and what is accepted. */
int Jsonl_apply_line(const JsonValue *object, Config *c, double *max_time, char *err, size_t size);

/* c as a JSON object with every setting, in table order: {"T":256,"d":256,...}. */
void Jsonl_write_config(const Config *c, Text *t);

/* The number in the whole grid of stdin's first line, for stderr's messages only (a record's
   "line" stays the input's): the sweep scripts set it for each job's chunk of the grid. */
#define JSONL_FIRST_LINE_ENV "ATTNSCOPE_FIRST_LINE"

/* Runs every line of in (base settings: o->config) with the workspace, result and lanes
   given, and writes the records to out.  Returns the exit status: 0 when every line ran, 2
   when some line was refused as bad input, 1 when a computation or a write failed. */
int Jsonl_run(const Options *o, const Progress *lanes, Workspace *w, Result *r, FILE *in,
              FILE *out);

#endif
