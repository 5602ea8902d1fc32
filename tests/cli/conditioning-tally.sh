#!/bin/bash
# The matrix-free path's warnings count the layers that went each way (docs/model.md §8.2):
# the Kronecker path's outcomes (certified, not certified within its steps, B0 singular, B0
# too far) add up to the layers of both networks, and so do the final routes (Kronecker,
# Lanczos, beyond Lanczos's reach with a bound, nothing certifiable, inexact, overflow), each
# equal to the document's own jacobian_s_min_route counts; no warning sends layers to
# Lanczos that went beyond it.  On main the cutting-skip case counted 8 + 10 of 20 at the
# Kronecker stage (2 not certified, unaccounted) and the default sent its 16 "beyond" layers
# "by Lanczos on K^T K there".
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

batch_document "$tmp/skip" --conditioning --conditioning-path kron \
    --preset presets/skipless-cutting-skip.preset -L 10 --seed 11
batch_document "$tmp/default" --conditioning

counted() { # name
    check "$1: the route warnings' counts sum to the layers and match the routes" \
        "$PY" - "$tmp/$1.json" <<'PY'
import collections, json, re, sys
doc = json.load(open(sys.argv[1]))
c, layers = doc["conditioning"], 2 * doc["config"]["depth"]
routes = collections.Counter(c["jacobian_s_min_route"] + c["counterpart_jacobian_s_min_route"])
def count(phrase):
    said = [w for w in c["warnings"] if phrase in w]
    assert len(said) <= 1, said
    if not said:
        return 0
    return int(re.search(r"(\d+) of the %d layers of both networks" % layers, said[0]).group(1))
certified = count("s_min(K) on the Kronecker path")
stage = {"certified": certified, "uncertified": count("the Kronecker path did not certify"),
         "singular": count("preconditions the Kronecker path, is singular"),
         "far": count("too far from K"), "inexact": count("disagree beyond their rounding")}
final = {"kronecker": certified, "lanczos": count("s_min(K) by Lanczos on K^T K at"),
         "beyond": count("the image of one vector proves") +
                   count("leaves Lanczos on K^T K nothing it could certify"),
         "inexact": stage["inexact"], "overflow": count("overflows the double range at")}
assert sum(stage.values()) == layers, (stage, layers)
assert sum(final.values()) == layers, (final, layers)
assert all(final[r] == routes[r] for r in final), (final, routes)
if not routes["lanczos"]:
    assert not any("by Lanczos on K^T K there" in w for w in c["warnings"]), c["warnings"]
PY
}
counted skip
counted default
finish
