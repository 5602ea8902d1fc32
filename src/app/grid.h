/* `attnscope grid`: a grid of configurations, written as JSON Lines for --batch --jsonl, each
 * configuration optionally split into shards by seed range. */
#ifndef ATTNSCOPE_GRID_H
#define ATTNSCOPE_GRID_H

#include <stdio.h>

/* argv[0] is "grid"; the terms KEY=V1,V2,... (one argument or several), --shards N and the
   ordinary options (the base settings).  Writes one config object per line to out.
   Returns the exit status: 0, 2 (bad usage, with the message on stderr) or 1 (a write
   failed). */
int Grid_main(int argc, char **argv, FILE *out);

#endif
