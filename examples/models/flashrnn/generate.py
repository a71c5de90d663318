#!/usr/bin/env python3
"""Writes the original FlashRNN fused-kernel tiling models as .cint files, one per pass and variant.

The model (constraints, search order and value directions) is the one the original FlashRNN library
solved with its Python ConstrINT; the variants are the GPU/size cases with known answers. Run this
script to regenerate the files after changing it; tests/constrint/test_tiling_models.cpp checks
the answers.
"""
from pathlib import Path

# name: (cell gates G, dtype, hidden size (all heads), heads NH, batch, SMs, opt-in shared memory bytes, registers per SM)
VARIANTS = {
    "slstm_bf16_hidden1024_nh4_b8_h100": (4, "bf16", 1024, 4, 8, 132, 232448, 65536),
    "lstm_fp32_hidden512_nh1_b16_h100": (4, "fp32", 512, 1, 16, 132, 232448, 65536),
    "lstm_bf16_hidden1024_nh1_b8_a100": (4, "bf16", 1024, 1, 8, 108, 166912, 65536),
    "elman_bf16_hidden2048_nh1_b32_h100": (1, "bf16", 2048, 1, 32, 132, 232448, 65536),
    "lstm_bf16_hidden768_nh12_b16_h100": (4, "bf16", 768, 12, 16, 132, 232448, 65536),
    "lstm_bf16_hidden4096_nh1_b16_h100": (4, "bf16", 4096, 1, 16, 132, 232448, 65536),
}

FORWARD = """\
# Forward pass.
FB == FBTCB * FWTCB * FWLCB;
FWLCB <= 4;
FWTCH * FWTCB * HD * G == FNW * FRTCG * FWLCG * FWTDG;
32 * FNW <= TMAX;
HD % FRTCH * FWTCH * FWTDH == 0;
G * HD % FWLCG * FRTCG * FWTDG == 0;
BATCH % FB * FWTDB == 0;
FNB == FRTCG * FRTCH * FBTCB * FMTC;
FNB <= SM;
NH % FMTC == 0;
FWTDH * FWTDG * FWRCH * FNW == FRRM * FWTCB;
FRTCH * FWRCH * FWTCH * FWTDH <= HD;
FRRM + R * FNW * FWTDB * FWTDG * FWLCB + FNW * FWTDB * FWTDH <= REG;
DS * G * FBTCB * HD^2 + DS * HD * G * PAD * FBTCB + 64 == FRSM + DS * FRRM * FBTCB * FRTCG * FRTCH;
FSSM == 4 * FWTCH * FRTCH * G * FB * FWTDB * HD + 4 * FWTCH * FRTCG * FRTCH * FB * FWTDB * PAD;
FMTC * (FRSM + FSSM) <= SMEM * FNB;

# Decision order and value directions: the answer is the lexicographically first solution.
search PAD, FWTDH, FWTDB, FWTDG, FMTC, FRTCG, FRTCH, FBTCB, FWLCB, FWLCG, FWTCH, FWTCB, FWRCH;
prefer PAD min;
prefer FWTDH max;
prefer FWTDB max;
prefer FWTDG max;
prefer FMTC max;
prefer FRTCG max;
prefer FRTCH min;
prefer FBTCB max;
prefer FWLCB max;
prefer FWLCG min;
prefer FWTCH max;
prefer FWTCB max;
prefer FWRCH max;
"""

BACKWARD = """\
# Backward pass: the forward's shape with hidden and gate dimensions exchanged.
BB == BBTCB * BWTCB * BWLCB;
BWLCB <= 4;
BWTCG * BWTCB * HD == BNW * BRTCH * BWLCH * BWTDH;
32 * BNW <= TMAX;
HD % BRTCH * BWTDH * BWLCH == 0;
G * HD % BRTCG * BWTCG * BWTDG == 0;
BATCH % BB * BWTDB == 0;
BNB == BRTCG * BRTCH * BBTCB * BMTC;
BNB <= SM;
NH % BMTC == 0;
BWTDH * BWTDG * BWRCG * BNW == BRRM * BWTCB;
BRTCG * BWRCG * BWTCG * BWTDG <= G * HD;
BRRM + R * BNW * BWTDB * BWTDH * BWLCB + BNW * BWTDB * BWTDG <= REG;
DS * G * BBTCB * HD^2 + DS * HD * PAD * BBTCB + 64 == BRSM + DS * BRRM * BBTCB * BRTCH * BRTCG;
BGSM == 4 * BWTCG * BB * BWTDB * HD * BRTCG + 4 * BWTCG * BRTCH * BRTCG * BB * BWTDB * PAD;
BMTC * (BRSM + BGSM) <= SMEM * BNB;

# Decision order and value directions: the answer is the lexicographically first solution.
search PAD, BWTDG, BWTDB, BWTDH, BMTC, BRTCH, BRTCG, BBTCB, BWLCB, BWLCH, BWTCG, BWTCB, BWRCG;
prefer PAD min;
prefer BWTDG max;
prefer BWTDB max;
prefer BWTDH max;
prefer BMTC max;
prefer BRTCH max;
prefer BRTCG min;
prefer BBTCB max;
prefer BWLCB max;
prefer BWLCH min;
prefer BWTCG max;
prefer BWTCB max;
prefer BWRCG max;
"""


def constants(gates, dtype, hidden, nh, batch, sms, smem_optin, regs):
    half = dtype in ("bf16", "fp16")
    ds = 2 if half else 4
    multiple = 8 if half else 16
    lines = [
        ("TMAX == 256;", "a quarter of 1024 threads per block"),
        (f"REG == {regs * (2 if half else 1)};", "registers per SM" + (" x 2 (16-bit halves)" if half else "")),
        (f"SM == {sms};", "streaming multiprocessors"),
        (f"SMEM == {min(smem_optin - 1024, 227000)};", "min(opt-in shared memory per block - 1024, 227000)"),
        ("PAD == 8;", "padding elements"),
        (f"G == {gates};", "recurrent gates"),
        (f"HD == {hidden // nh};", f"head dimension: hidden size {hidden} / {nh} heads"),
        (f"NH == {nh};", "heads"),
        (f"BATCH == {-(-batch // multiple) * multiple};", f"batch {batch} rounded up to a multiple of {multiple}"),
        (f"DS == {ds};", f"bytes per element ({dtype})"),
        (f"R == {4 // ds};", "4 / DS"),
    ]
    return "# Hardware and problem constants.\n" + "".join(f"{stmt:<18} # {why}\n" for stmt, why in lines)


def tiles(dtype, passname):
    if dtype == "fp32":
        if passname == "forward":
            return "FWTDB == 16;\nFWTDG == 16;\nFWTDH == 8;\n"
        return "BWTDB == 16;\nBWTDH == 16;\nBWTDG == 8;\n"
    if passname == "forward":
        return "FWTDB == [8, 16, 32];\nFWTDG == [8, 16, 32];\nFWTDH == 16;\nFWTDB * FWTDG == 256;\n"
    return "BWTDB == [8, 16, 32];\nBWTDH == [8, 16, 32];\nBWTDG == 16;\nBWTDB * BWTDH == 256;\n"


def main():
    here = Path(__file__).resolve().parent
    for name, (gates, dtype, hidden, nh, batch, sms, smem, regs) in VARIANTS.items():
        for passname, body in (("forward", FORWARD), ("backward", BACKWARD)):
            text = (f"# FlashRNN fused-kernel tiling, {passname} pass: {name} (generated by generate.py).\n"
                    "# All variables not listed are positive integers (the format's default).\n\n"
                    + constants(gates, dtype, hidden, nh, batch, sms, smem, regs)
                    + "\n# Warp tile sizes (tensor-core fragments).\n" + tiles(dtype, passname) + "\n" + body)
            (here / f"{name}.{passname}.cint").write_text(text)


if __name__ == "__main__":
    main()
