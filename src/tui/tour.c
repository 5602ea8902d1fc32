#include "tour.h"

#include "line_reader.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

int Tour_list(Tour *t, const char *dir)
{
    Tour_free(t);
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        return 0;
    int capacity = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 8 || strcmp(e->d_name + n - 7, ".preset") != 0)
            continue;
        if (t->count == capacity) {
            capacity = capacity ? 2 * capacity : 32;
            void *grown = realloc(t->path, sizeof *t->path * (size_t)capacity);
            if (!grown) {
                closedir(d);
                Tour_free(t);
                return -1;
            }
            t->path = grown;
        }
        int w = snprintf(t->path[t->count], TOUR_PATH_SIZE, "%s/%s", dir, e->d_name);
        if (w > 0 && w < TOUR_PATH_SIZE)
            t->count++;
    }
    closedir(d);
    /* Whole paths in one directory sort as their names: the steps' numbers lead them. */
    if (t->count > 0)
        qsort(t->path, (size_t)t->count, TOUR_PATH_SIZE, by_name);
    return t->count;
}

void Tour_free(Tour *t)
{
    free(t->path);
    t->path = NULL;
    t->count = 0;
}

int Tour_header(const char *path, char *out, size_t size, int max_lines)
{
    out[0] = '\0';
    /* Never blocks: a FIFO named like a preset has no header (loading it says why). */
    char err[256];
    FILE *f = File_open_regular(path, err, sizeof err);
    if (!f)
        return 0;
    char line[TOUR_TITLE_SIZE * 4];
    size_t used = 0;
    int lines = 0;
    while (lines < max_lines && fgets(line, sizeof line, f) && line[0] == '#') {
        /* One space goes; deeper indentation stays, it marks a continued sentence. */
        char *text = line + 1 + (line[1] == ' ');
        text[strcspn(text, "\r\n")] = '\0';
        int n = snprintf(out + used, size - used, "%s%s", lines ? "\n" : "", text);
        if (n < 0 || (size_t)n >= size - used) {
            out[used] = '\0'; /* the header is cut at a whole line */
            break;
        }
        used += (size_t)n;
        lines++;
    }
    fclose(f);
    return lines;
}

size_t Tour_point_at(const char *path, char *out, size_t size)
{
    char header[4096];
    out[0] = '\0';
    Tour_header(path, header, sizeof header, 64);
    const char *at = strstr(header, "Point at:");
    /* Only at the start of a line: the note, not a mention of it. */
    while (at && at != header && at[-1] != '\n')
        at = strstr(at + 1, "Point at:");
    if (!at)
        return 0;
    size_t used = 0;
    for (const char *line = at; line && (line == at || *line == ' ');) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        while (n && *line == ' ') {
            line++;
            n--;
        }
        int w = snprintf(out + used, size - used, "%s%.*s", used ? " " : "", (int)n, line);
        if (w < 0 || (size_t)w >= size - used) {
            out[used] = '\0'; /* cut at a whole line */
            break;
        }
        used += (size_t)w;
        line = end ? end + 1 : NULL;
    }
    return used;
}

size_t Tour_view(const char *path, char *out, size_t size)
{
    char header[4096];
    out[0] = '\0';
    Tour_header(path, header, sizeof header, 64);
    /* Only at the start of a line: the step's view, not a mention of one. */
    const char *line = header;
    while (line && strncmp(line, "View:", 5) != 0) {
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    if (!line)
        return 0;
    const char *name = line + 5 + strspn(line + 5, " ");
    int n = (int)strcspn(name, "\n");
    while (n > 0 && name[n - 1] == ' ')
        n--;
    int w = snprintf(out, size, "%.*s", n, name);
    if (w < 0 || (size_t)w >= size) {
        out[0] = '\0'; /* a name cut short names no view */
        return 0;
    }
    return (size_t)w;
}

void Tour_title(const char *path, char *out, size_t size)
{
    if (Tour_header(path, out, size, 1) == 0 || !out[0]) {
        const char *slash = strrchr(path, '/');
        snprintf(out, size, "%s", slash ? slash + 1 : path);
    }
}
