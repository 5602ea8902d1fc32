/* The classroom tour (issue 7): the preset files of one directory, in name order, stepped
 * through with > and <.  Only lists and reads headers; the preset parser is the program's
 * own (the app passes it in), so the screen and the command line read presets alike.
 */
#ifndef ATTNSCOPE_TUI_TOUR_H
#define ATTNSCOPE_TUI_TOUR_H

#include <stddef.h>

enum { TOUR_PATH_SIZE = 512, TOUR_TITLE_SIZE = 120, TOUR_CAPTION_SIZE = 1024 };

/* Zero-initialise ({0}) before the first Tour_list. */
typedef struct {
    int count;
    char (*path)[TOUR_PATH_SIZE]; /* count paths, as many as the directory holds */
} Tour;

/* Lists all of dir's *.preset files (a path longer than TOUR_PATH_SIZE is left out), sorted
   by name, replacing what t held.  Returns their number (0 when the directory is missing or
   holds none), or -1 when memory ran out (t then holds none). */
int Tour_list(Tour *t, const char *dir);

/* Frees the list; t is then empty. */
void Tour_free(Tour *t);

/* The comment lines that open a preset file (its header: what it shows, which figure), up
   to max_lines, without their "#" and one space (an indented line continues the one
   before), joined by newlines into out.  Returns their number. */
int Tour_header(const char *path, char *out, size_t size, int max_lines);

/* The header's "Point at: ..." note (what a teacher shows on the screen at this step), its
   indented continuation lines joined with single spaces into out, or "" when the header has
   none.  Returns its length. */
size_t Tour_point_at(const char *path, char *out, size_t size);

/* The view the step is shown in: its header's "View: NAME" line, NAME one of the v key's
   views as Panel_name spells them ("entropy"), into out, or "" when the header names none.
   Returns its length. */
size_t Tour_view(const char *path, char *out, size_t size);

/* The step's title: its first line without the leading "# " ("Tour 2/9: remove the gap"),
   or the file's name when it has no comment line. */
void Tour_title(const char *path, char *out, size_t size);

#endif
