#!/bin/bash
# The transformer block through the real binary: a user's model typed on the command line
# (heads, W^O, pre-LN with PyTorch's LayerNorm, GELU MLP, GPT-2 init) runs to a valid
# document whose config says what was asked, whose warnings say what the theory leaves out,
# and whose gradients are null; the same model saved as a preset runs to the same document;
# the shown head changes the spectra and nothing else.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

model=(-T 32 -d 64 -L 4 --heads 4 --head 2 --wo gaussian --ln-place pre -n ln --ln-scale sqrt-d
    -k plain --mlp gelu --mlp-ratio 4 --init gpt2)

runs() { valid_document "$1" 32 4 "${@:2}"; } # name args...: exit 0 and a valid document
check "a GPT-2-style block typed on the command line runs to a valid document" runs model "${model[@]}"

says() {
    "$PY" - "$tmp/model.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
c = doc["config"]
want = {"heads": 4, "head": 2, "wo": "gaussian", "ln_place": "pre", "layernorm": "ln",
        "ln_scale": "sqrt-d", "skip": "plain", "mlp": "gelu", "mlp_ratio": 4, "init": "gpt2",
        "logit_scale": "sqrt", "skip_gain": 1, "branch_gain": 1, "input_norm": "unit"}
bad = {k: (c.get(k), v) for k, v in want.items() if c.get(k) != v}
assert not bad, f"config: {bad}"
text = " ".join(doc["warnings"])
for phrase in ("head 2 of 4 shown", "T/d_h = 2", "sqrt(d) (PyTorch)", "gradients null"):
    assert phrase in text, f"the warnings lack '{phrase}': {text}"
assert all(g is None for g in doc["gradient_norm"]), doc["gradient_norm"]
assert doc["theory"]["stable_rank"] is None and doc["theory"]["note"], doc["theory"]
PY
}
check "its config, warnings, null gradients and theory note say what the block is" says

as_preset() {
    "$PY" - "$tmp/model.json" >"$tmp/model.preset" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["config"]
names = {"T": "tokens", "d": "width", "sigma_qk": "sigma-qk"}
print("# the block of tests/cli/block.sh")
for key, value in c.items():
    if key != "d_qk":  # an off value (null: --sink none) as the command line spells it
        print(f"{names.get(key, key.replace('_', '-'))} = {'none' if value is None else value}")
PY
    runs preset --preset "$tmp/model.preset" && cmp -s "$tmp/model.json" "$tmp/preset.json"
}
check "the same model as a preset gives the same document, byte for byte" as_preset

other_head() {
    runs head1 "${model[@]}" --head 1 || return 1
    "$PY" - "$tmp/model.json" "$tmp/head1.json" <<'PY'
import json, sys
two, one = (json.load(open(p)) for p in sys.argv[1:3])
assert two["stable_rank"] == one["stable_rank"], "the network changed with the shown head"
assert two["singular_values"] != one["singular_values"], "the spectra did not change"
PY
}
check "--head changes the spectra, not the network" other_head

rezero() {
    runs rezero -T 32 -d 64 -L 4 --heads 4 --mlp relu -k plain --branch-gain 0 || return 1
    "$PY" -c 'import json,sys; sr=json.load(open(sys.argv[1]))["stable_rank"]; assert len(set(sr)) == 1, sr' \
        "$tmp/rezero.json"
}
check "ReZero (--branch-gain 0 with a skip): every layer is the input" rezero
finish
