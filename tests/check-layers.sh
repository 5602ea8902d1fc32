#!/bin/sh
# The architecture as a rule: includes point down only (app -> tui -> core, app -> core).
# The core knows no terminal, thread, file format or I/O; the screen never calls LAPACK.
cd "$(dirname "$0")/.." || exit 1
status=0
bad() { echo "layering: $1"; status=1; }
for f in src/core/*.c; do
    grep -nE '#include *[<"](n?curses|pthread|stdio_ext|unistd|fcntl|sys/)' "$f" && bad "$f includes a terminal, thread or OS header"
    grep -nE '\b(fopen|printf|fprintf|puts|pthread_[a-z_]+)\(' "$f" && bad "$f does I/O or threading"
    grep -nE '#include *"(\.\./)?(tui|app)/' "$f" && bad "$f includes a layer above it"
done
for f in src/tui/*.c src/tui/*.h; do
    [ -e "$f" ] || continue
    grep -nE '#include *[<"](lapacke|cblas|gsl/)' "$f" && bad "$f calls LAPACK/BLAS/GSL directly"
    grep -nE '#include *"(\.\./)?app/|#include *"(options|batch|json)\.h"' "$f" && bad "$f includes the app layer"
done
[ $status -eq 0 ] && echo "layering: ok"
exit $status
