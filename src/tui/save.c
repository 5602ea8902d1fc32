#include "save.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *Save_directory(char *buf, size_t size)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf(buf, size, "%s/attnscope/presets", xdg);
    else if (home && home[0])
        n = snprintf(buf, size, "%s/.config/attnscope/presets", home);
    else
        return NULL;
    return n > 0 && (size_t)n < size ? buf : NULL;
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

int Save_preset(const char *text, char *path, size_t path_size, char *err, size_t size)
{
    char dir[512], stamp[64], temp[600];
    if (!Save_directory(dir, sizeof dir)) {
        snprintf(err, size, "no preset directory: set XDG_CONFIG_HOME or HOME");
        return -1;
    }
    /* attnscope/presets may be missing (and .config under HOME). */
    if (make_directories(dir, 2, err, size))
        return -1;
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "attnscope-%Y%m%d-%H%M%S", &tm);
    int n = snprintf(path, path_size, "%s/%s.preset", dir, stamp);
    if (n < 0 || (size_t)n >= path_size) {
        snprintf(err, size, "the preset path is too long");
        return -1;
    }
    snprintf(temp, sizeof temp, "%s.tmp%ld", path, (long)getpid());
    errno = 0;
    FILE *f = fopen(temp, "w");
    if (!f) {
        snprintf(err, size, "cannot write %s: %s", temp, strerror(errno));
        return -1;
    }
    bool ok = fputs(text, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(temp, path)) {
        snprintf(err, size, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        unlink(temp);
        return -1;
    }
    return 0;
}
