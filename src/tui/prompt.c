#include "prompt.h"

#include <curses.h> /* KEY_ codes only: the screen module reads the keys */
#include <stdio.h>
#include <string.h>

/* The control keys a shell's line editor reads (Ctrl-letter is the letter's code & 0x1f). */
enum {
    CTRL_A = 'A' & 0x1f,
    CTRL_D = 'D' & 0x1f,
    CTRL_E = 'E' & 0x1f,
    CTRL_H = 'H' & 0x1f,
    CTRL_K = 'K' & 0x1f,
    CTRL_U = 'U' & 0x1f,
    CTRL_W = 'W' & 0x1f,
};

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Removes the characters from..to-1, the cursor where they were. */
static void cut(Prompt *p, int from, int to)
{
    memmove(p->text + from, p->text + to, strlen(p->text + to) + 1);
    p->cursor = from;
}

/* The start of the word before the cursor: back over blanks, then over the word. */
static int word_start(const Prompt *p)
{
    int at = p->cursor;
    while (at > 0 && blank(p->text[at - 1]))
        at--;
    while (at > 0 && !blank(p->text[at - 1]))
        at--;
    return at;
}

/* The keys that edit the text or move the cursor in it; PROMPT_REFUSED for any other key. */
static PromptOutcome edit(Prompt *p, int key)
{
    int n = (int)strlen(p->text);
    switch (key) {
    case KEY_BACKSPACE:
    case 127:
    case CTRL_H:
        if (p->cursor > 0)
            cut(p, p->cursor - 1, p->cursor);
        return PROMPT_EDITED;
    case KEY_DC:
    case CTRL_D:
        if (key == CTRL_D && n == 0)
            return PROMPT_CANCEL;
        if (p->cursor < n)
            cut(p, p->cursor, p->cursor + 1);
        return PROMPT_EDITED;
    case KEY_LEFT:
        p->cursor -= p->cursor > 0;
        return PROMPT_EDITED;
    case KEY_RIGHT:
        p->cursor += p->cursor < n;
        return PROMPT_EDITED;
    case KEY_HOME:
    case CTRL_A:
        p->cursor = 0;
        return PROMPT_EDITED;
    case KEY_END:
    case CTRL_E:
        p->cursor = n;
        return PROMPT_EDITED;
    case CTRL_K:
        p->text[p->cursor] = '\0';
        return PROMPT_EDITED;
    case CTRL_U:
        cut(p, 0, p->cursor);
        return PROMPT_EDITED;
    case CTRL_W:
        cut(p, word_start(p), p->cursor);
        return PROMPT_EDITED;
    default:
        return PROMPT_REFUSED;
    }
}

PromptOutcome Prompt_key(Prompt *p, int key)
{
    int n = (int)strlen(p->text);
    /* A text written without Prompt_set_text keeps the cursor inside it. */
    if (p->cursor < 0 || p->cursor > n)
        p->cursor = n;
    switch (key) {
    case 27:
        return PROMPT_CANCEL;
    case '\n':
    case '\r':
    case KEY_ENTER:
        return PROMPT_DONE;
    default: {
        PromptOutcome edited = p->max_chars > 0 ? edit(p, key) : PROMPT_REFUSED;
        if (edited != PROMPT_REFUSED)
            return edited;
        if (key < 0 || key > 127 || !p->allowed(key))
            return PROMPT_REFUSED;
        if (n >= p->max_chars || n + 1 >= (int)sizeof p->text)
            return PROMPT_FULL;
        memmove(p->text + p->cursor + 1, p->text + p->cursor, (size_t)(n - p->cursor) + 1);
        p->text[p->cursor++] = (char)key;
        return PROMPT_EDITED;
    }
    }
}

void Prompt_set_text(Prompt *p, const char *text)
{
    int most = p->max_chars < PROMPT_SIZE ? p->max_chars : PROMPT_SIZE - 1;
    snprintf(p->text, sizeof p->text, "%.*s", most > 0 ? most : 0, text);
    p->cursor = (int)strlen(p->text);
}

int Prompt_first_shown(const Prompt *p, int room)
{
    int n = (int)strlen(p->text), cursor = p->cursor < 0 || p->cursor > n ? n : p->cursor;
    if (room < 1 || n + 1 <= room)
        return room < 1 ? cursor : 0;
    int step = room / 2 > 0 ? room / 2 : 1;
    int first = cursor < room ? 0 : ((cursor - room) / step + 1) * step;
    return first < n + 1 - room ? first : n + 1 - room;
}

bool Prompt_printable(int c)
{
    return c >= 0x20 && c < 0x7f;
}
