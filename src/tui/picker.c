#include "picker.h"

#include <curses.h> /* KEY_ codes only: the screen module reads the keys */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A page of the list for PgUp / PgDn. */
#define PICKER_PAGE 10

static void read_header(Picker *p)
{
    p->header[0] = '\0';
    p->header_page = 0;
    if (p->count > 0)
        Tour_header(p->entry[p->selected].path, p->header, sizeof p->header, 64);
}

Picker *Picker_new(void)
{
    return calloc(1, sizeof(Picker));
}

void Picker_free(Picker *p)
{
    if (!p)
        return;
    free(p->entry);
    free(p);
}

/* Appends dir's presets to p's list.  Returns 0, or -1 when memory ran out. */
static int add_directory(Picker *p, const char *dir, PresetSource source)
{
    /* Tour_list sorts one directory's presets by name: reused for every source. */
    Tour listed = {0};
    if (Tour_list(&listed, dir) < 0)
        return -1;
    if (listed.count > 0) {
        void *grown = realloc(p->entry, sizeof *p->entry * (size_t)(p->count + listed.count));
        if (!grown) {
            Tour_free(&listed);
            return -1;
        }
        p->entry = grown;
    }
    for (int i = 0; i < listed.count; i++) {
        PickerEntry *e = &p->entry[p->count++];
        snprintf(e->path, sizeof e->path, "%s", listed.path[i]);
        const char *slash = strrchr(e->path, '/'), *base = slash ? slash + 1 : e->path;
        size_t n = strlen(base) - 7; /* without ".preset", which Tour_list asked for */
        n = n < sizeof e->name ? n : sizeof e->name - 1;
        memcpy(e->name, base, n);
        e->name[n] = '\0';
        e->source = source;
    }
    Tour_free(&listed);
    return 0;
}

int Picker_list(Picker *p, const char *shipped_dir, const char *tour_dir, const char *user_dir)
{
    p->count = 0;
    p->selected = 0;
    if (add_directory(p, tour_dir, PRESET_TOUR) || add_directory(p, shipped_dir, PRESET_SHIPPED) ||
        add_directory(p, user_dir, PRESET_USER)) {
        p->count = 0;
        p->header[0] = '\0';
        return -1;
    }
    read_header(p);
    return p->count;
}

void Picker_select_path(Picker *p, const char *path)
{
    for (int i = 0; i < p->count; i++)
        if (strcmp(p->entry[i].path, path) == 0) {
            p->selected = i;
            read_header(p);
            return;
        }
}

static void move_to(Picker *p, int index)
{
    if (p->count == 0)
        return;
    index = index < 0 ? 0 : index >= p->count ? p->count - 1 : index;
    if (index != p->selected) {
        p->selected = index;
        read_header(p);
    }
}

PickerOutcome Picker_key(Picker *p, int key)
{
    switch (key) {
    case KEY_UP:
    case 'k':
        move_to(p, p->selected - 1);
        return PICKER_STAY;
    case KEY_DOWN:
    case 'j':
        move_to(p, p->selected + 1);
        return PICKER_STAY;
    case KEY_PPAGE:
        move_to(p, p->selected - PICKER_PAGE);
        return PICKER_STAY;
    case KEY_NPAGE:
        move_to(p, p->selected + PICKER_PAGE);
        return PICKER_STAY;
    case KEY_HOME:
        move_to(p, 0);
        return PICKER_STAY;
    case KEY_END:
        move_to(p, p->count - 1);
        return PICKER_STAY;
    case ' ':
        p->header_page++;
        return PICKER_STAY;
    case '\n':
    case '\r':
    case KEY_ENTER:
        return p->count > 0 ? PICKER_LOAD : PICKER_STAY;
    case 27: /* Esc */
    case 'q':
    case 'P':
        return PICKER_CLOSE;
    default:
        return PICKER_STAY;
    }
}

const char *Preset_source_name(PresetSource s)
{
    switch (s) {
    case PRESET_TOUR:
        return "tour";
    case PRESET_USER:
        return "yours";
    case PRESET_SHIPPED:
    default:
        return "shipped";
    }
}
