/* Reading text inputs line by line, bounded: presets, --jsonl, merge and merge --grid read
 * through here, and so will every later reader of a file a user hands us.  A line longer
 * than LINE_MAX_BYTES is refused, not read: one line of a sweep's input or of a result file
 * holds one configuration or one record (a record at T = 4096 is well under 1 MiB), so a
 * longer one is a wrong file (a device, a binary) that would otherwise take all memory.
 * Memory running out mid-line is an error naming the file and the line, never an end.
 * Small files a reader takes whole (config.json, token ids, a checkpoint's index) are read up
 * to a bound here too.
 */
#ifndef ATTNSCOPE_COMMON_LINE_READER_H
#define ATTNSCOPE_COMMON_LINE_READER_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* The longest line accepted, in bytes, its newline included (64 MiB). */
#define LINE_MAX_BYTES ((size_t)64 << 20)

typedef enum {
    LINE_READ,      /* a line is in text[0..length) */
    LINE_END,       /* the input ended */
    LINE_TOO_LONG,  /* bad input: a line above the bound (exit 2) */
    LINE_NO_MEMORY, /* a failure: memory ran out mid-line (exit 1) */
    LINE_IO_ERROR,  /* a failure: the read failed (exit 1) */
} LineStatus;

typedef struct {
    FILE *in;
    const char *name; /* for messages: the file, or "standard input" */
    size_t max;       /* LINE_MAX_BYTES unless a test lowers it */
    long number;      /* of the line last read, from 1 */
    char *text;       /* the line last read, NUL-terminated (it may hold NUL bytes) */
    size_t length;
    size_t capacity;
} LineReader;

LineReader LineReader_start(FILE *in, const char *name);

/* The next line, its newline kept.  On LINE_TOO_LONG, LINE_NO_MEMORY and LINE_IO_ERROR err
   holds "NAME:LINE: what happened". */
LineStatus LineReader_next(LineReader *r, char *err, size_t size);

void LineReader_release(LineReader *r);

/* The exit status a reading failure asks for: 2 for bad input, 1 otherwise. */
int LineStatus_exit_status(LineStatus status);

/* Opens path for reading, refusing what is not a regular file (a FIFO, a device, a folder)
   with what it is: the open never blocks (O_NONBLOCK, cleared once the file is known to be
   regular), so a FIFO where a preset should be cannot hang the screen.  NULL with
   "'PATH': why" in err. */
FILE *File_open_regular(const char *path, char *err, size_t size);

/* File_open_regular's open as a descriptor, for a caller that maps the file (a checkpoint's
   shard): the descriptor, blocking again, and the file's status in *st; -1 with "'PATH': why"
   in err. */
int File_open_regular_fd(const char *path, struct stat *st, char *err, size_t size);

/* What File_read_whole found; each reader says it in its own words. */
typedef enum {
    FILE_WHOLE_READ,      /* the file is in *text */
    FILE_WHOLE_TOO_LARGE, /* more than the limit: bad input */
    FILE_WHOLE_NO_MEMORY,
    FILE_WHOLE_READ_FAILED, /* File_read_whole's *error (File_read_regular's err) says why */
    FILE_WHOLE_NOT_OPENED,  /* File_read_regular: err says why */
} FileWhole;

/* A small file whole (config.json, a token-id list, a checkpoint's index), from f's position:
   at most limit bytes into *text (malloc'd and NUL-terminated: the caller frees it) and
   *length; on any other outcome *text is NULL.  One read of limit + 1 bytes tells a file of
   exactly limit bytes from a larger one.  *error is the read's errno where it failed (so the
   reader can say "Input/output error"), else 0. */
FileWhole File_read_whole(FILE *f, size_t limit, char **text, size_t *length, int *error);

/* File_open_regular(path), then File_read_whole: FILE_WHOLE_NOT_OPENED or
   FILE_WHOLE_READ_FAILED with "'PATH': why" in err where the open refuses or the read fails;
   the caller words FILE_WHOLE_TOO_LARGE and FILE_WHOLE_NO_MEMORY. */
FileWhole File_read_regular(const char *path, size_t limit, char **text, size_t *length, char *err,
                            size_t size);

#endif
