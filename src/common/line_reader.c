#include "line_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

LineReader LineReader_start(FILE *in, const char *name)
{
    return (LineReader){.in = in, .name = name, .max = LINE_MAX_BYTES};
}

/* Room for one more byte and the terminating NUL: 0, or -1 when memory ran out. */
static int make_room(LineReader *r)
{
    if (r->length + 2 <= r->capacity)
        return 0;
    size_t want = r->capacity ? 2 * r->capacity : 256;
    if (want > r->max + 2)
        want = r->max + 2;
    char *grown = realloc(r->text, want);
    if (!grown)
        return -1;
    r->text = grown;
    r->capacity = want;
    return 0;
}

LineStatus LineReader_next(LineReader *r, char *err, size_t size)
{
    r->length = 0;
    r->number++;
    int c = 0;
    errno = 0;
    while ((c = getc_unlocked(r->in)) != EOF) {
        if (r->length == r->max) {
            snprintf(err, size, "%s:%ld: a line longer than %zu MiB (the most a line may hold)",
                     r->name, r->number, r->max >> 20);
            return LINE_TOO_LONG;
        }
        if (make_room(r)) {
            snprintf(err, size, "%s:%ld: out of memory reading a line of %zu bytes so far", r->name,
                     r->number, r->length);
            return LINE_NO_MEMORY;
        }
        r->text[r->length++] = (char)c;
        if (c == '\n')
            break;
    }
    if (c == EOF && ferror(r->in)) {
        snprintf(err, size, "%s:%ld: %s", r->name, r->number, strerror(errno ? errno : EIO));
        return LINE_IO_ERROR;
    }
    if (c == EOF && r->length == 0)
        return LINE_END;
    r->text[r->length] = '\0';
    return LINE_READ;
}

void LineReader_release(LineReader *r)
{
    free(r->text);
    r->text = NULL;
    r->capacity = r->length = 0;
}

int LineStatus_exit_status(LineStatus status)
{
    return status == LINE_TOO_LONG ? 2 : 1;
}

/* What st is when not a regular file: a folder as open(2) would say it. */
static const char *not_regular(mode_t mode)
{
    return S_ISDIR(mode)    ? strerror(EISDIR)
           : S_ISFIFO(mode) ? "a FIFO, not a regular file"
           : S_ISCHR(mode)  ? "a character device, not a regular file"
           : S_ISBLK(mode)  ? "a block device, not a regular file"
           : S_ISSOCK(mode) ? "a socket, not a regular file"
                            : "not a regular file";
}

FileWhole File_read_whole(FILE *f, size_t limit, char **text, size_t *length, int *error)
{
    char *buffer = malloc(limit + 1);
    errno = 0;
    size_t n = buffer ? fread(buffer, 1, limit + 1, f) : 0;
    *error = buffer && ferror(f) ? (errno ? errno : EIO) : 0; /* fread may leave errno unset */
    FileWhole status = !buffer     ? FILE_WHOLE_NO_MEMORY
                       : *error    ? FILE_WHOLE_READ_FAILED
                       : n > limit ? FILE_WHOLE_TOO_LARGE
                                   : FILE_WHOLE_READ;
    if (status == FILE_WHOLE_READ) {
        buffer[n] = '\0';
    } else {
        free(buffer);
        buffer = NULL;
        n = 0;
    }
    *text = buffer;
    *length = n;
    return status;
}

FileWhole File_read_regular(const char *path, size_t limit, char **text, size_t *length, char *err,
                            size_t size)
{
    FILE *f = File_open_regular(path, err, size);
    if (!f) {
        *text = NULL;
        *length = 0;
        return FILE_WHOLE_NOT_OPENED;
    }
    int error;
    FileWhole status = File_read_whole(f, limit, text, length, &error);
    fclose(f);
    if (status == FILE_WHOLE_READ_FAILED)
        snprintf(err, size, "'%s': %s", path, strerror(error));
    return status;
}

int File_open_regular_fd(const char *path, struct stat *st, char *err, size_t size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, st) != 0) {
        snprintf(err, size, "'%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        snprintf(err, size, "'%s': %s", path, not_regular(st->st_mode));
        close(fd);
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        snprintf(err, size, "'%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

FILE *File_open_regular(const char *path, char *err, size_t size)
{
    struct stat st;
    int fd = File_open_regular_fd(path, &st, err, size);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (fd >= 0 && !f) {
        snprintf(err, size, "'%s': %s", path, strerror(errno));
        close(fd);
    }
    return f;
}
