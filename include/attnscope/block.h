/* The parts of the transformer block that are not attention (docs/model.md §1.5, §1.8):
 * LayerNorm in both conventions.  Token matrices are T×d column-major (a token is a row).
 */
#ifndef ATTNSCOPE_BLOCK_H
#define ATTNSCOPE_BLOCK_H

#include "attnscope/config.h"

/* c's LayerNorm (mode and row scale) on every token of x, in place.  unit: x/‖x‖ (ln centres
   first), exact; sqrt-d: PyTorch's (x − μ)/√(var + ε) for ln, x/√(mean(x²) + ε) for rms, rows
   of norm ≈ √d, ε = c->ln_eps (PyTorch's default 1e-5; 0: exactly √d).  A zero row stays zero.
   row_stat and row_max hold T doubles each (scratch). */
void Block_layernorm(const Config *c, int T, int d, double *x, double *row_stat, double *row_max);

/* A norm's gain on the rows × n column-major x: column j times o + gain[j] (o = offset, added
   only where it is not 0, so that o + w is w itself). */
void Block_gain_columns(int rows, int n, double *x, const double *gain, double offset);

/* RMSNorm with unit gain on the T rows of the T×d column-major block x, in place:
   x/√(mean(x²) + ε) (HF's LlamaRMSNorm, in double).  A zero row stays zero.  row_stat and
   row_max hold T doubles each (scratch). */
void Block_rms_rows(int T, int d, double epsilon, double *x, double *row_stat, double *row_max);

/* The MLP's activation, elementwise in place: relu max(x, 0), gelu x·Φ(x) with the exact
   normal CDF (PyTorch's default), tanh; for the gated ones the gate's: swiglu silu
   x·sigmoid(x), geglu the tanh approximation of GELU (Gemma's gelu_pytorch_tanh). */
void Block_activate(Mlp mlp, double *x, size_t n);

#endif
