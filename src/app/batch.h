/* The batch JSON document (a stable contract; extra fields are allowed). */
#ifndef ATTNSCOPE_BATCH_H
#define ATTNSCOPE_BATCH_H

#include "attnscope/conditioning.h"
#include "attnscope/model.h"
#include "attnscope/sweep.h"
#include "hf_config.h"
#include "json.h"
#include "weights.h"

/* The document for r; the width sweep, the conditioning and what --hf-config read are added
   when not NULL; "weights" names the checkpoint run, null for drawn weights. */
void Batch_document(const Result *r, const WidthSweep *sweep, const Conditioning *conditioning,
                    const HfConfigReport *hf_config, const CheckpointIdentity *weights, Text *t);

/* The document of --softmax-demo: κ of `draws` draws, their median, the closed form. */
void Batch_softmax_demo(const Config *c, const double *kappa, int draws, Text *t);

#endif
