#!/bin/sh
# The architecture as a rule: includes point down only,
#   src/app -> src/tui (its entry point tui.h only) -> src/common -> src/core.
# The core knows no terminal, thread, file format or I/O; src/common knows no terminal; the
# screen never calls LAPACK.
cd "$(dirname "$0")/.." || exit 1
status=0
bad() { echo "layering: $1"; status=1; }
# The headers of a layer, as an alternation for grep: "a\.h|b\.h".
headers() { for h in "$1"/*.h; do [ -e "$h" ] && basename "$h"; done | sed 's/\./\\./' | paste -sd'|' -; }
common_h=$(headers src/common)
tui_h=$(headers src/tui)
app_h=$(headers src/app)
includes_any() { # file, header alternation
    [ -n "$2" ] && grep -nE "#include *\"(\\.\\./)?([a-z]+/)?($2)\"" "$1"
}
for f in src/core/*.c src/core/*.h; do
    [ -e "$f" ] || continue
    grep -nE '#include *[<"](n?curses|pthread|stdio_ext|unistd|fcntl|sys/)' "$f" && bad "$f includes a terminal, thread or OS header"
    grep -nE '\b(fopen|printf|fprintf|puts|pthread_[a-z_]+)\(' "$f" && bad "$f does I/O or threading"
    includes_any "$f" "$common_h|$tui_h|$app_h" && bad "$f includes a layer above the core"
done
for f in src/common/*.c src/common/*.h; do
    [ -e "$f" ] || continue
    grep -nE '#include *[<"](n?curses|term\.h)' "$f" && bad "$f includes a terminal header"
    includes_any "$f" "$tui_h|$app_h" && bad "$f includes the screen or the app layer"
done
for f in src/tui/*.c src/tui/*.h; do
    [ -e "$f" ] || continue
    grep -nE '#include *[<"](lapacke|cblas|gsl/)' "$f" && bad "$f calls LAPACK/BLAS/GSL directly"
    includes_any "$f" "$app_h" && bad "$f includes the app layer"
done
screen_internals=$(echo "$tui_h" | tr '|' '\n' | grep -vx 'tui\\.h' | paste -sd'|' -)
for f in src/app/*.c src/app/*.h; do
    [ -e "$f" ] || continue
    includes_any "$f" "$screen_internals" && bad "$f includes a screen header other than tui.h"
done
[ $status -eq 0 ] && echo "layering: ok"
exit $status
