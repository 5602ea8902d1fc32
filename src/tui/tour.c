#include "tour.h"

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
    t->count = 0;
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && t->count < TOUR_STEPS_MAX) {
        size_t n = strlen(e->d_name);
        if (n < 8 || strcmp(e->d_name + n - 7, ".preset") != 0)
            continue;
        int w = snprintf(t->path[t->count], TOUR_PATH_SIZE, "%s/%s", dir, e->d_name);
        if (w > 0 && w < TOUR_PATH_SIZE)
            t->count++;
    }
    closedir(d);
    /* Whole paths in one directory sort as their names: the steps' numbers lead them. */
    qsort(t->path, (size_t)t->count, TOUR_PATH_SIZE, by_name);
    return t->count;
}

void Tour_title(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, size, "%s", slash ? slash + 1 : path);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[TOUR_TITLE_SIZE * 2];
    if (fgets(line, sizeof line, f) && line[0] == '#') {
        char *text = line + 1;
        while (*text == ' ')
            text++;
        text[strcspn(text, "\r\n")] = '\0';
        if (*text)
            snprintf(out, size, "%s", text);
    }
    fclose(f);
}
