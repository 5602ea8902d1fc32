#include "prompt.h"

#include <curses.h> /* KEY_ codes only: the screen module reads the keys */
#include <string.h>

PromptOutcome Prompt_key(Prompt *p, int key)
{
    size_t n = strlen(p->text);
    switch (key) {
    case 27:
        return PROMPT_CANCEL;
    case '\n':
    case '\r':
    case KEY_ENTER:
        return PROMPT_DONE;
    case KEY_BACKSPACE:
    case 127:
    case 8:
        if (n > 0)
            p->text[n - 1] = '\0';
        return PROMPT_EDITED;
    default:
        if (key < 0 || key > 127 || !p->allowed(key))
            return PROMPT_REFUSED;
        if ((int)n >= p->max_chars || n + 1 >= sizeof p->text)
            return PROMPT_FULL;
        p->text[n] = (char)key;
        p->text[n + 1] = '\0';
        return PROMPT_EDITED;
    }
}

bool Prompt_printable(int c)
{
    return c >= 0x20 && c < 0x7f;
}
