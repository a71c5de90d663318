#!/usr/bin/env python3
"""Turns a newton_bench CSV into kH200Grid's rows, or into the cost model's measured constants.

tests/flashrnn/test_newton_measured_grid.cpp checks the automatic backends' choices (forward and
backward) against times measured on the device; after a kernel changes, the grid is measured again
(`newton_bench --runs 5 --csv FILE` on the device) and its rows replaced by this script's output:

    python3 examples/bench/newton_measured_grid.py newton_bench.csv          # the test's rows
    python3 examples/bench/newton_measured_grid.py --fit newton_bench.csv    # backend.cpp's constants

--fit prints what src/newton/backend.cpp takes from the measurements: the sequential kernels' step
latencies (one warp per SM: B 1 x 256 units, T 65536), their issue counts where most sequences run
(B 512 x 2048, T 256) and the fused backward's issue count (B 32 x 2048, T 2048), each count in
thread instructions per step of one sequence at the model's issue rate for the h200 preset.
"""
import argparse
import csv
import sys

CELLS = {"flash_gru": "newton::Cell::flash_gru", "flash_lstm": "newton::Cell::flash_lstm"}
DTYPES = {"fp32": "DType::fp32", "bf16": "DType::bf16", "fp16": "DType::fp16"}
BACKENDS = ("newton", "fused", "sequential")
# The h200 preset's issue rate as backend.cpp counts it: 132 SMs x 4 schedulers x 1.98 GHz x 0.82
# achieved x 32 threads per warp instruction.
H200_THREAD_INSTRUCTIONS_PER_SECOND = 132 * 4 * 1.98e9 * 0.82 * 32


def significant(value: float, digits: int = 4) -> str:
    """The value to `digits` significant digits, as the test's literals are written."""
    return f"{float(f'{value:.{digits}g}'):g}" if value < 10**digits else f"{value:.0f}"


def times(row: dict) -> tuple[list[float], list[float]]:
    """Forward and backward (forward+backward less forward) ms per backend."""
    forward = [float(row[f"{b}_forward_ms"]) for b in BACKENDS]
    both = [float(row[f"{b}_forward_backward_ms"]) for b in BACKENDS]
    return forward, [t - f for f, t in zip(forward, both)]


def find(rows: list[dict], cell: str, dtype: str, batch: int, units: int, steps: int) -> dict:
    for r in rows:
        if (r["cell"], r["dtype"], int(r["batch"]), int(r["units"]), int(r["steps"])) == (
                cell, dtype, batch, units, steps):
            return r
    raise SystemExit(f"no row {cell} {dtype} B {batch} x {units}, T {steps} in the CSV")


def fit(rows: list[dict]) -> None:
    for cell in CELLS:
        for dtype in ("fp32", "bf16"):
            one = find(rows, cell, dtype, 1, 256, 65536)
            many = find(rows, cell, dtype, 512, 2048, 256)
            wide = find(rows, cell, dtype, 32, 2048, 2048)
            (_, _, seq_fw), (_, _, seq_bw) = times(one)
            (_, _, many_fw), (_, _, many_bw) = times(many)
            _, (_, fused_bw, _) = times(wide)

            def count(ms: float, row: dict) -> float:
                elements = int(row["batch"]) * int(row["units"]) * int(row["steps"])
                return ms * 1e-3 * H200_THREAD_INSTRUCTIONS_PER_SECOND / elements

            print(f"{cell} {dtype}: sequential step {significant(seq_fw / 65536 * 1e3, 3)} / "
                  f"{significant(seq_bw / 65536 * 1e3, 3)} us (forward / backward); sequential issue "
                  f"{count(many_fw, many):.0f} / {count(many_bw, many):.0f} per step; fused backward "
                  f"issue {count(fused_bw, wide):.0f} per step")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="newton_bench --csv output")
    parser.add_argument("--fit", action="store_true", help="print the cost model's measured constants")
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"{args.csv}: no rows", file=sys.stderr)
        return 1
    for r in rows:
        if r["cell"] not in CELLS or r["dtype"] not in DTYPES:
            print(f"{args.csv}: unknown cell or dtype in {r}", file=sys.stderr)
            return 1
    if args.fit:
        fit(rows)
        return 0
    for r in rows:
        forward, backward = times(r)
        values = ", ".join(significant(t) for t in forward + backward)
        print(f"    {{{CELLS[r['cell']]}, {DTYPES[r['dtype']]}, {r['batch']}, {r['units']}, {r['steps']}, "
              f"{values}}},")
    return 0


if __name__ == "__main__":
    sys.exit(main())
