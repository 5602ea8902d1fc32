/* `attnscope merge`: result records of disjoint seed ranges of one configuration combined into
 * the record of their union, exactly as a run of all the seeds would report it (counts, means
 * and second moments by Chan's formula; docs/model.md, Sweeps). */
#ifndef ATTNSCOPE_MERGE_H
#define ATTNSCOPE_MERGE_H

#include <stdio.h>

/* argv[0] is "merge"; then FILE... ("-": standard input), --csv, --uneven and --grid FILE.  Writes
   one merged record per configuration (JSON Lines), or with --csv one row per configuration and
   layer, to out. Returns the exit status: 0; 2 when the input is unreadable, malformed or does not
   fit together (message on stderr, nothing on out); 1 when out of memory or a write failed. */
int Merge_main(int argc, char **argv, FILE *out);

#endif
