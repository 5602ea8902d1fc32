/* The preset picker (issue 7): the shipped presets, the classroom tour and the user's own
 * presets in one list, the highlighted one's header comment beside it, Enter to load.
 * Only lists files and reads their headers; loading goes through the program's own preset
 * parser (the loop's), so the screen and the command line read presets alike.
 */
#ifndef ATTNSCOPE_TUI_PICKER_H
#define ATTNSCOPE_TUI_PICKER_H

#include "tour.h"

#include <stdbool.h>

enum { PICKER_NAME_SIZE = 80, PICKER_HEADER_SIZE = 2048 };

/* Where a preset comes from, shown beside its name. */
typedef enum { PRESET_SHIPPED, PRESET_TOUR, PRESET_USER } PresetSource;

typedef struct {
    char path[TOUR_PATH_SIZE];
    char name[PICKER_NAME_SIZE]; /* file name without ".preset" */
    PresetSource source;
} PickerEntry;

typedef struct {
    int count;
    int selected;
    PickerEntry *entry; /* count entries: every preset of the three directories */
    /* The selected preset's header (see Tour_header), read when the selection moves. */
    char header[PICKER_HEADER_SIZE];
    /* Which page of it is shown where it is longer than its rectangle: Space turns, the
       screen takes it modulo the pages at its size; 0 when the selection moves. */
    int header_page;
} Picker;

/* An empty picker (NULL when out of memory). */
Picker *Picker_new(void);
void Picker_free(Picker *p);

/* Lists all the *.preset files of the three directories (any may be NULL or missing), each
   sorted by name, the tour first (a class starts there), then the shipped presets, then the
   user's, replacing what p listed;
   selects the first.  Returns their number, or -1 when memory ran out (p then lists none). */
int Picker_list(Picker *p, const char *shipped_dir, const char *tour_dir, const char *user_dir);

/* Selects the entry whose path is path, if listed (the preset loaded last, so that the
   picker reopens where the user was). */
void Picker_select_path(Picker *p, const char *path);

typedef enum { PICKER_STAY, PICKER_CLOSE, PICKER_LOAD } PickerOutcome;

/* One key: arrows, j/k, PgUp/PgDn, Home/End move; Space turns the header's page; Enter
   loads; Esc, q and P close. */
PickerOutcome Picker_key(Picker *p, int key);

/* "shipped", "tour", "yours". */
const char *Preset_source_name(PresetSource s);

#endif
