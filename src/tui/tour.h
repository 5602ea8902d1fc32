/* The classroom tour (issue 7): the preset files of one directory, in name order, stepped
 * through with > and <.  Only lists and reads headers; the preset parser is the program's
 * own (the app passes it in), so the screen and the command line read presets alike.
 */
#ifndef ATTNSCOPE_TUI_TOUR_H
#define ATTNSCOPE_TUI_TOUR_H

#include <stddef.h>

enum { TOUR_STEPS_MAX = 64, TOUR_PATH_SIZE = 512, TOUR_TITLE_SIZE = 120 };

typedef struct {
    int count;
    char path[TOUR_STEPS_MAX][TOUR_PATH_SIZE];
} Tour;

/* Lists dir's *.preset files, sorted by name.  Returns their number (0 when the directory
   is missing or holds none). */
int Tour_list(Tour *t, const char *dir);

/* The comment lines that open a preset file (its header: what it shows, which figure), up
   to max_lines, without their "#" and one space (an indented line continues the one
   before), joined by newlines into out.  Returns their number. */
int Tour_header(const char *path, char *out, size_t size, int max_lines);

/* The step's title: its first line without the leading "# " ("Tour 2/9: remove the gap"),
   or the file's name when it has no comment line. */
void Tour_title(const char *path, char *out, size_t size);

#endif
