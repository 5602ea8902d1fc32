/* The batch JSON document (a stable contract; extra fields are allowed). */
#ifndef ATTNSCOPE_BATCH_H
#define ATTNSCOPE_BATCH_H

#include "attnscope/model.h"
#include "attnscope/sweep.h"
#include "json.h"

/* The document for r; the width sweep is added when sweep is not NULL. */
void Batch_document(const Result *r, const WidthSweep *sweep, Text *t);

#endif
