/* The batch JSON document of SPEC §5 (a stable contract; extra fields are allowed). */
#ifndef ATTNSCOPE_BATCH_H
#define ATTNSCOPE_BATCH_H

#include "attnscope/model.h"
#include "json.h"

void Batch_document(const Result *r, Text *t);

#endif
