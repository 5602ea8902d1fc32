#include "presets.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ATTNSCOPE_PRESETS_DIR
#error "ATTNSCOPE_PRESETS_DIR (PREFIX/share/attnscope/presets) is set by the Makefile"
#endif

static bool is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The directory of the running binary (Linux: /proc/self/exe), or "" when unknown. */
static void binary_directory(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    buf[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    else
        buf[0] = '\0';
}

/* Copies candidate into buf when it is a directory that fits. */
static const char *take(const char *candidate, char *buf, size_t size)
{
    if (!is_directory(candidate) || strlen(candidate) >= size)
        return NULL;
    memcpy(buf, candidate, strlen(candidate) + 1);
    return buf;
}

const char *Presets_shipped_directory(char *buf, size_t size)
{
    const char *env = getenv("ATTNSCOPE_PRESETS");
    if (env && env[0])
        return take(env, buf, size);
    /* bin: the binary's directory; above: its parent (PREFIX, or the source tree for
       build/attnscope). */
    char bin[PATH_MAX], above[PATH_MAX], candidate[PATH_MAX + 64];
    binary_directory(bin, sizeof bin);
    memcpy(above, bin, sizeof above);
    char *slash = strrchr(above, '/');
    if (slash)
        *slash = '\0';
    if (bin[0] && slash) {
        snprintf(candidate, sizeof candidate, "%s/share/attnscope/presets", above);
        if (take(candidate, buf, size))
            return buf;
    }
    if (take(ATTNSCOPE_PRESETS_DIR, buf, size))
        return buf;
    if (bin[0]) {
        snprintf(candidate, sizeof candidate, "%s/presets", bin);
        if (take(candidate, buf, size))
            return buf;
    }
    if (bin[0] && slash) {
        snprintf(candidate, sizeof candidate, "%s/presets", above);
        if (take(candidate, buf, size))
            return buf;
    }
    return take("presets", buf, size);
}

const char *Presets_user_directory(char *buf, size_t size)
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

/* dir/name.preset (or dir/name when name ends in .preset) into path when it is a file. */
static bool found_in(const char *dir, const char *name, char *path, size_t size)
{
    if (!dir)
        return false;
    size_t n = strlen(name);
    bool suffixed = n > 7 && strcmp(name + n - 7, ".preset") == 0;
    int w = snprintf(path, size, "%s/%s%s", dir, name, suffixed ? "" : ".preset");
    return w > 0 && (size_t)w < size && is_file(path);
}

/* A tour step by its name without its number: NAME finds dir/NN-NAME.preset (the steps'
   numbers order the tour, their names say what they show). */
static bool found_in_tour(const char *dir, const char *name, char *path, size_t size)
{
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        return false;
    size_t n = strlen(name);
    bool suffixed = n > 7 && strcmp(name + n - 7, ".preset") == 0;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        const char *rest = e->d_name + strspn(e->d_name, "0123456789");
        if (rest == e->d_name || *rest != '-' || strncmp(rest + 1, name, n) != 0 ||
            strcmp(rest + 1 + n, suffixed ? "" : ".preset") != 0)
            continue;
        int w = snprintf(path, size, "%s/%s", dir, e->d_name);
        found = w > 0 && (size_t)w < size && is_file(path);
    }
    closedir(d);
    return found;
}

int Presets_resolve(const char *arg, char *path, size_t path_size, char *err, size_t size)
{
    if (strchr(arg, '/') || is_file(arg)) {
        if ((size_t)snprintf(path, path_size, "%s", arg) < path_size)
            return 0;
        snprintf(err, size, "--preset '%.80s…': the path is too long", arg);
        return -1;
    }
    char user[PATH_MAX], shipped[PATH_MAX], tour[PATH_MAX + 8];
    const char *user_dir = Presets_user_directory(user, sizeof user);
    const char *shipped_dir = Presets_shipped_directory(shipped, sizeof shipped);
    const char *tour_dir = NULL;
    if (shipped_dir && (size_t)snprintf(tour, sizeof tour, "%s/tour", shipped_dir) < sizeof tour)
        tour_dir = tour;
    if (arg[0] &&
        (found_in(user_dir, arg, path, path_size) || found_in(shipped_dir, arg, path, path_size) ||
         found_in(tour_dir, arg, path, path_size) || found_in_tour(tour_dir, arg, path, path_size)))
        return 0;
    struct stat st;
    bool directory = stat(arg, &st) == 0 && S_ISDIR(st.st_mode);
    /* Where a name was looked for: the directories that exist, and why another was not. */
    char places[400];
    if (user_dir && shipped_dir)
        snprintf(places, sizeof places, "in %.160s or %.160s", user_dir, shipped_dir);
    else if (user_dir)
        snprintf(places, sizeof places, "in %.160s (no shipped presets were found)", user_dir);
    else if (shipped_dir)
        snprintf(places, sizeof places, "in %.160s (no user directory: HOME is not set)",
                 shipped_dir);
    else
        snprintf(places, sizeof places,
                 "anywhere (no user directory: HOME is not set; no shipped presets were found)");
    snprintf(err, size,
             "--preset '%.80s': %s, nor a preset of that name %s (accepted: a preset file, or "
             "the name of one there without .preset)",
             arg, directory ? "a directory, not a preset file" : "no such file", places);
    return -1;
}
