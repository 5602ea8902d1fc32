#!/bin/bash
# Where K is singular by its structure (heads of --head-dim 4, two of them: H·d_h = 8 < d = 16,
# so every row of the block's output lies in W^O's 8-dimensional row space), the conditioning
# panel says κ(K) = ∞ and why, where it read "null", the word for "not computed", and
# "beyond double precision"; the batch document keeps its null and says why in a warning.
# The Lanczos path claims no bound below ∞ there.  Heads that fill d (d_h = 8) are no such
# case: the same panel prints κ(K)'s number and says nothing of a singular K.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

narrow="-T 8 -d 16 -L 3 --heads 2 --head-dim 4 --wo gaussian"
doc=$TMP/narrow.json
check "batch: the narrow heads' conditioning" \
    bash -c "'$BIN' --batch --conditioning --conditioning-path exact $narrow >'$doc'"
check "  its kappa_jacobian is null at every layer" \
    grep -qE '"kappa_jacobian": \[null,null,null\]' "$doc"
check "  and a warning says K is singular" grep -q "so K is singular: kappa_jacobian is null" "$doc"
# The legend of both networks' κ(K) says ∞ beside the readout's ∞, never "not available".
check "batch: the conditioning figure exported" \
    bash -c "'$BIN' --batch --conditioning --conditioning-path exact $narrow --export '$TMP/svg' >/dev/null 2>&1"
check "  its legend says κ(K) of both networks is ∞ (singular)" \
    test "$(grep -cE '>κ\(K\) \(gap (off|center)\) ∞ \(singular\)<' "$TMP/svg/conditioning.svg")" = 2
check "  and not (n/a)" bash -c "! grep -qE '>κ\(K\) \(gap [a-z]+\) \(n/a\)<' '$TMP/svg/conditioning.svg'"

conditioning_view() { # description cols rows path: the view's panel once its job is done
    trace=$TMP/$RANDOM.trace
    start "$2" "$3" "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $narrow --conditioning-path $4 --no-confirm --trace '$trace'"
    expect "$1: the stable rank is computed" "computed in [0-9]+ ms"
    press "$1: V, the conditioning view" "view: conditioning" V
    check "$1: its job is done" settled
}

conditioning_view "exact" 120 40 exact
expect "  the shown layer's κ(K) is ∞ (no skip: no κ(aI + bK))" "ℓ=1: κ\(K\)=∞ κ\(aI\+bK\)=null"
expect "  the panel says K is singular, and why" "K singular, κ\(K\) = ∞: H·d_h = 8 < d = 16 \(!\)"
check "  no κ(K) reads null" absent "κ\(K\)=null"
expect "  the legend says the network's κ(K) is ∞ (singular)" "κ\(K\) \(gap off\) ∞ \(singular\)"
check "  not (n/a)" absent "κ\(K\) \(gap off\) \(n/a\)"
check "  nothing is said to be beyond double precision" absent "beyond double precision"
quits "q quits"

conditioning_view "Lanczos" 120 40 lanczos
expect "  κ(K) is ∞, not a bound" "ℓ=1: κ\(K\)=∞ "
expect "  and singular, with the reason" "K singular, κ\(K\) = ∞: H·d_h = 8 < d = 16"
check "  no proved bound is claimed for it" absent "κ\(K\)≥"
quits "q quits"

conditioning_view "80×24" 80 24 exact
expect "  the compact panel's title says singular" "κ\(K\) = ∞, singular \(!\)"
quits "q quits"

# The control: heads that fill d.  The same words must not appear.
narrow="-T 8 -d 16 -L 3 --heads 2 --head-dim 8 --wo gaussian"
conditioning_view "H·d_h = d" 120 40 exact
expect "  κ(K) is a number" "ℓ=1: κ\(K\)=[0-9]"
check "  nothing says K is singular" absent "singular[,:]|K singular"
check "  nor ∞" absent "∞"
quits "q quits"
finish
