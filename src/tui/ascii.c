#include "ascii.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

/* The symbols of the labels, the status line and the help, with their ASCII spellings. */
static const struct {
    uint32_t cp;
    const char *ascii;
} SPELLINGS[] = {
    {0x03C3, "sigma"},  /* σ */
    {0x03A3, "Sigma"},  /* Σ */
    {0x03BB, "lambda"}, /* λ */
    {0x2113, "l"},      /* ℓ */
    {0x00D7, "x"},      /* × */
    {0x00F7, "/"},      /* ÷ */
    {0x221A, "sqrt"},   /* √ */
    {0x2212, "-"},      /* − */
    {0x00B7, "*"},      /* · */
    {0x2264, "<="},     /* ≤ */
    {0x2265, ">="},     /* ≥ */
    {0x221E, "inf"},    /* ∞ */
    {0x2248, "~"},      /* ≈ */
    {0x2026, "..."},    /* … */
    {0x2190, "<-"},     /* ← */
    {0x2192, "->"},     /* → (also "becomes": λ1→0, deflate→center) */
    {0x2191, "Up"},     /* ↑ */
    {0x2193, "Down"},   /* ↓ */
    {0x00BC, "1/4"},    /* ¼ */
    {0x2074, "^4"},     /* ⁴ */
    {0x00B2, "^2"},     /* ² */
    {0x2081, "1"},      /* ₁ */
    {0x2082, "2"},      /* ₂ */
    {0x22A5, "_perp"},  /* ⊥ */
    {0x2500, "-"},      /* ─ */
    {0x2502, "|"},      /* │ */
    {0x253C, "+"},      /* ┼ */
    {0x2524, "+"},      /* ┤ */
    {0x2534, "+"},      /* ┴ */
    {0x2514, "+"},      /* └ */
    {0x2022, "."},      /* • */
    {0x2504, "."},      /* ┄ */
    {0x2506, ":"},      /* ┆ */
    {0x25C6, "@"},      /* ◆ */
    {0x25CF, "*"},      /* ● */
    {0x25CB, "o"},      /* ○ */
    {0x25CE, "0"},      /* ◎ (the eigenvalue sent to 0) */
    {0x25C9, "&"},      /* ◉ (● and ○ in one cell) */
    {0x25B8, ">"},      /* ▸ */
    {0x25C2, "<"},      /* ◂ */
    {0x25B4, "^"},      /* ▴ */
    {0x25B5, "^"},      /* ▵ */
    {0x25BE, "v"},      /* ▾ */
    {0x26A0, "!"},      /* ⚠ */
    {0x2713, "ok"},     /* ✓ */
    {0x2016, "||"},     /* ‖ */
    {0x2202, "d"},      /* ∂ */
    {0x03BC, "mu"},     /* μ */
    {0x03B3, "gamma"},  /* γ */
    {0x1D40, "^T"},     /* ᵀ */
    {0x00B1, "+-"},     /* ± */
    {0x25C7, "#"},      /* ◇ */
    {0x2013, "-"},      /* – */
    {0x2218, "o"},      /* ∘ */
    {0x03C0, "pi"},     /* π */
    {0x03BA, "kappa"},  /* κ */
    {0x03B1, "alpha"},  /* α */
    {0x03B2, "beta"},   /* β */
    {0x22EF, "..."},    /* ⋯ */
    {0x2297, "(x)"},    /* ⊗ */
};

int Ascii_decode(const char *s, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] == 0) {
        *cp = 0;
        return 0;
    }
    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    int n = u[0] >= 0xF0 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC0 ? 2 : 0;
    if (n == 0 || u[0] >= 0xF8) {
        *cp = 0xFFFD;
        return 1;
    }
    uint32_t v = u[0] & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((u[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        v = (v << 6) | (u[i] & 0x3F);
    }
    *cp = v;
    return n;
}

int Ascii_encode(uint32_t cp, char *out)
{
    int n;
    if (cp < 0x80) {
        out[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    out[n] = '\0';
    return n;
}

char *Ascii_transliterate(const char *utf8, char *out, size_t size)
{
    size_t used = 0;
    uint32_t cp;
    int n;
    if (size == 0)
        return out;
    bool after_word = false; /* the last symbol was spelled as a word (Sigma) */
    while ((n = Ascii_decode(utf8, &cp)) > 0) {
        utf8 += n;
        char one[2] = {(char)cp, '\0'};
        const char *spelling = cp < 0x80 ? one : "?";
        for (size_t i = 0; cp >= 0x80 && i < sizeof SPELLINGS / sizeof SPELLINGS[0]; i++)
            if (SPELLINGS[i].cp == cp)
                spelling = SPELLINGS[i].ascii;
        /* Two spelled letters in a row keep apart: Σℓ is Sigma_l, not Sigmal. */
        bool word = cp >= 0x80 && isalpha((unsigned char)spelling[0]);
        const char *joint = after_word && word ? "_" : "";
        after_word = word;
        size_t length = strlen(spelling), joint_length = strlen(joint);
        if (used + joint_length + length >= size)
            break;
        memcpy(out + used, joint, joint_length);
        memcpy(out + used + joint_length, spelling, length);
        used += joint_length + length;
    }
    out[used] = '\0';
    return out;
}

int Ascii_columns(const char *s)
{
    int columns = 0;
    uint32_t cp;
    int n;
    while ((n = Ascii_decode(s, &cp)) > 0) {
        s += n;
        columns++;
    }
    return columns;
}

size_t Ascii_words_fit(const char *s, int width)
{
    size_t fit = 0, at = 0;
    int columns = 0;
    uint32_t cp;
    /* A word ends where a space or the end follows; the columns count what comes before. */
    while (columns <= width) {
        if (at > 0 && (s[at] == ' ' || s[at] == '\0'))
            fit = at;
        if (s[at] == '\0')
            break;
        at += (size_t)Ascii_decode(s + at, &cp);
        columns++;
    }
    return fit;
}

char *Ascii_cut(char *s, int width, const char *ellipsis)
{
    if (Ascii_columns(s) <= width)
        return s;
    if (!ellipsis)
        ellipsis = "";
    int keep = width - Ascii_columns(ellipsis);
    char *p = s;
    uint32_t cp;
    for (int i = 0; i < keep && *p; i++)
        p += Ascii_decode(p, &cp);
    strcpy(p, keep >= 0 ? ellipsis : "");
    return s;
}
