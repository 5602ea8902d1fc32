#!/usr/bin/python3
"""Prints tests/rope_scaling_table.h: the rotary inverse frequencies of a few configurations,
computed by a numpy transcription of Hugging Face's modeling_rope_utils.py
(_compute_default_rope_parameters, then _compute_linear_scaling_rope_parameters or
_compute_llama3_parameters) in float64, which tests/test_rope_scaling.c compares with
attnscope's Qk_frequency (tests/cli/hf_forward.py's Llama 3.2 forward imports the same
transcription).  Run once; the header is committed beside this script:

    /usr/bin/python3 tests/data/rope-scaling/frequencies.py >tests/rope_scaling_table.h
"""
import math

import numpy as np

# name, theta, head width d_h, rotated fraction, scaling, factor, low, high, original context
CASES = [
    ("llama32_1b", 500000.0, 64, 1.0, "llama3", 32.0, 1.0, 4.0, 8192),
    ("llama31_8b", 500000.0, 128, 1.0, "llama3", 8.0, 1.0, 4.0, 8192),
    ("linear", 10000.0, 16, 1.0, "linear", 4.0, 1.0, 4.0, 8192),
    ("llama3_partial", 10000.0, 32, 0.75, "llama3", 2.5, 2.0, 8.0, 64),
    ("none", 10000.0, 16, 1.0, "none", 8.0, 1.0, 4.0, 8192),
]


def inverse_frequencies(theta, dh, fraction, scaling, factor, low, high, context):
    dim = int(dh * fraction)
    dim -= dim % 2  # attnscope's rotated width: HF's int(d_h·F), made even
    inv_freq = 1.0 / (theta ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float64) / dim))
    if scaling == "linear":
        return inv_freq / factor, None
    if scaling == "none":
        return inv_freq, None
    low_freq_wavelen, high_freq_wavelen = context / low, context / high
    wavelen = 2 * math.pi / inv_freq
    scaled = np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (context / wavelen - low) / (high - low)
    smoothed = (1 - smooth_factor) * scaled / factor + smooth_factor * scaled
    medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    regions = (int(np.sum(wavelen < high_freq_wavelen)), int(np.sum(medium)),
               int(np.sum(wavelen > low_freq_wavelen)))
    return np.where(medium, smoothed, scaled), regions


def main():
    print("/* Written by tests/data/rope-scaling/frequencies.py (numpy's transcription of HF's")
    print("   rope_scaling formulas); do not edit by hand, nor let make format reflow it. */")
    print("/* clang-format off */")
    print("typedef struct {")
    print("    const char *name;")
    print("    double theta;")
    print("    int head_width;")
    print("    double fraction;")
    print("    const char *scaling;")
    print("    double factor, low, high;")
    print("    int context, pairs;")
    print("    double frequency[64];")
    print("} RopeScalingCase;")
    print("static const RopeScalingCase ROPE_SCALING_CASES[] = {")
    for name, theta, dh, fraction, scaling, factor, low, high, context in CASES:
        f, regions = inverse_frequencies(theta, dh, fraction, scaling, factor, low, high, context)
        if regions:
            assert min(regions) > 0, f"{name}: every region of the llama3 formula, got {regions}"
            print("    /* %s: %d pairs kept, %d blended, %d divided by the factor */" %
                  ((name,) + regions))
        values = ",\n      ".join("%.17g" % x for x in f)
        print('    {"%s", %.17g, %d, %.17g, "%s", %.17g, %.17g, %.17g, %d, %d,\n     {%s}},' %
              (name, theta, dh, fraction, scaling, factor, low, high, context, len(f), values))
    print("};")
    print("/* clang-format on */")


if __name__ == "__main__":
    main()
