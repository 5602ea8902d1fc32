/* The --window-layers pattern (config.h): its code from its spelling and back, and each
 * layer's mask and rotary θ under it. */
#include "config_internal.h"

#include "attnscope/qk.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The code of the p-letter pattern whose letter k is L where bit k of `local` is set: 2^p
   plus those bits, reduced to its shortest period, 0 when every letter is L. */
static double pattern_code(int p, uint64_t local)
{
    for (int q = 1; q < p; q++) {
        if (p % q)
            continue;
        uint64_t first = local & ((1ull << q) - 1), repeated = 0;
        for (int k = 0; k < p; k += q)
            repeated |= first << k;
        if (repeated == local) {
            p = q;
            local = first;
            break;
        }
    }
    return local == (1ull << p) - 1 ? 0.0 : (double)((1ull << p) | local);
}

int Config_window_layers_code(const char *text, double *code)
{
    if (strcmp(text, "all") == 0) {
        *code = 0;
        return 0;
    }
    int a, b, used = 0;
    if (sscanf(text, "%3d:%3d%n", &a, &b, &used) == 2 && text[used] == '\0' &&
        strspn(text, "0123456789:") == strlen(text) && a + b >= 1 &&
        a + b <= WINDOW_LAYERS_PERIOD_MAX) {
        *code = pattern_code(a + b, (1ull << a) - 1);
        return 0;
    }
    size_t p = strspn(text, "LG");
    if (p == 0 || text[p] != '\0' || p > WINDOW_LAYERS_PERIOD_MAX)
        return -1;
    uint64_t local = 0;
    for (size_t k = 0; k < p; k++)
        if (text[k] == 'L')
            local |= 1ull << k;
    *code = pattern_code((int)p, local);
    return 0;
}

/* Whether code is one Config_window_layers_code gives (0 aside): 2^p plus p bits. */
static bool pattern_code_valid(double code)
{
    return code >= 2 && code < (double)(1ull << (WINDOW_LAYERS_PERIOD_MAX + 1)) &&
           code == floor(code);
}

/* The period p and the L bits of a code other than 0. */
static int pattern_of(double code, uint64_t *local)
{
    uint64_t bits = (uint64_t)code;
    int p = 63;
    while (!(bits >> p))
        p--;
    *local = bits & ((1ull << p) - 1);
    return p;
}

void Config_window_layers_text(double code, char *buf, size_t size)
{
    if (!pattern_code_valid(code)) {
        snprintf(buf, size, "all");
        return;
    }
    uint64_t local;
    int p = pattern_of(code, &local);
    int a = 0;
    while (a < p && (local >> a & 1))
        a++;
    if (local >> a == 0) { /* L^a G^(p−a) */
        snprintf(buf, size, "%d:%d", a, p - a);
        return;
    }
    size_t k = 0;
    for (; k < (size_t)p && k + 1 < size; k++)
        buf[k] = local >> k & 1 ? 'L' : 'G';
    buf[k] = '\0';
}

/* Whether the pattern marks layer ℓ local (L); code 0 (or one no spelling gives) marks all. */
static bool pattern_local(double code, int layer)
{
    if (!pattern_code_valid(code))
        return true;
    uint64_t local;
    int p = pattern_of(code, &local);
    return local >> (((layer - 1) % p + p) % p) & 1;
}

bool Config_layer_local(const Config *c, int layer)
{
    return window_in_use(c) && pattern_local(c->window_layers, layer);
}

bool Config_layer_rotary_local(const Config *c, int layer)
{
    return rope_local_in_use(c) && pattern_local(c->window_layers, layer);
}

bool Config_some_layer_turns(const Config *c, bool by_local_theta)
{
    for (int layer = 1; layer <= c->depth; layer++)
        if (Qk_rotates(c, layer) && Config_layer_rotary_local(c, layer) == by_local_theta)
            return true;
    return false;
}

Mask Config_layer_mask(const Config *c, int layer)
{
    if (!window_in_use(c) || Config_layer_local(c, layer))
        return c->mask;
    return c->mask == MASK_WINDOW ? MASK_FULL : MASK_CAUSAL;
}
