#include "save.h"

#include "ascii.h"
#include "presets.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int Save_header(const Config *c, const char *name, const char *when, char *buf, size_t size)
{
    enum { COLUMNS = 90 };
    size_t used = 0;
    int column = 0;
    /* Appends with snprintf's count, so that the return says how much was needed. */
    used += (size_t)snprintf(buf, size,
                             "# %s: saved from the attnscope screen, %s\n#\n# Shows:", name, when);
    column = (int)strlen("# Shows:");
    for (int i = 0; i < Settings_count(); i++) {
        char field[96];
        if (!Setting_show(Settings_at(i), c, field, sizeof field))
            continue;
        int width = Ascii_columns(field);
        bool wrap = column + 1 + width > COLUMNS;
        used += (size_t)snprintf(buf + (used < size ? used : size), used < size ? size - used : 0,
                                 "%s %s", wrap ? "\n#  " : "", field);
        column = (wrap ? 3 : column) + 1 + width;
    }
    used +=
        (size_t)snprintf(buf + (used < size ? used : size), used < size ? size - used : 0, "\n\n");
    return (int)used;
}

/* mkdir -p of the last `levels` components of dir (the ones we own). */
static int make_directories(char *dir, int levels, char *err, size_t size)
{
    if (levels > 0) {
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            int status = make_directories(dir, levels - 1, err, size);
            *slash = '/';
            if (status)
                return status;
        }
    }
    if (mkdir(dir, 0777) && errno != EEXIST) {
        snprintf(err, size, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

bool Save_name_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
}

static int check_name(const char *name, char *err, size_t size)
{
    size_t n = strlen(name);
    if (n > SAVE_NAME_MAX) {
        snprintf(err, size, "the name has %zu characters; at most %d", n, SAVE_NAME_MAX);
        return -1;
    }
    if (name[0] == '.') {
        snprintf(err, size, "a name cannot start with '.'");
        return -1;
    }
    for (const char *c = name; *c; c++)
        if (!Save_name_char((unsigned char)*c)) {
            snprintf(err, size, "'%c' in the name: use letters, digits, '-', '_' and '.'", *c);
            return -1;
        }
    return 0;
}

/* Writes text to temp, then links it to path: link fails when path exists, so a save never
   replaces a preset and the file appears whole or not at all. */
static int write_new_file(const char *text, const char *temp, const char *path, char *err,
                          size_t size)
{
    errno = 0;
    FILE *f = fopen(temp, "w");
    if (!f) {
        snprintf(err, size, "cannot write %s: %s", temp, strerror(errno));
        return -1;
    }
    bool ok = fputs(text, f) >= 0;
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0) && ok;
    ok = (fclose(f) == 0) && ok;
    int status = 0;
    if (!ok) {
        snprintf(err, size, "cannot write %s: %s", temp, strerror(errno ? errno : EIO));
        status = -1;
    } else if (link(temp, path)) {
        status = errno == EEXIST ? 1 : -1;
        if (status < 0)
            snprintf(err, size, "cannot write %s: %s", path, strerror(errno));
    }
    unlink(temp);
    return status;
}

int Save_preset(const char *text, const char *name, char *path, size_t path_size, char *err,
                size_t size)
{
    char dir[512], stamp[64], temp[600];
    if (name && name[0] && check_name(name, err, size))
        return -1;
    if (!Presets_user_directory(dir, sizeof dir)) {
        snprintf(err, size, "no preset directory: set XDG_CONFIG_HOME or HOME");
        return -1;
    }
    /* attnscope/presets may be missing (and .config under HOME). */
    if (make_directories(dir, 2, err, size))
        return -1;
    bool named = name && name[0];
    if (!named) {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "attnscope-%Y%m%d-%H%M%S", &tm);
    }
    /* The default name takes a suffix when a save in the same second has it already. */
    for (int attempt = 1; attempt <= (named ? 1 : 99); attempt++) {
        int n = named         ? snprintf(path, path_size, "%s/%s.preset", dir, name)
                : attempt > 1 ? snprintf(path, path_size, "%s/%s-%d.preset", dir, stamp, attempt)
                              : snprintf(path, path_size, "%s/%s.preset", dir, stamp);
        if (n < 0 || (size_t)n >= path_size) {
            snprintf(err, size, "the preset path is too long");
            return -1;
        }
        snprintf(temp, sizeof temp, "%s.tmp%ld", path, (long)getpid());
        int status = write_new_file(text, temp, path, err, size);
        if (status <= 0)
            return status;
    }
    if (named)
        snprintf(err, size, "a preset named %s exists: choose another name", name);
    else
        snprintf(err, size, "too many presets saved this second");
    return -1;
}
