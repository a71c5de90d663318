#!/usr/bin/env python3
"""ConstrINT against Gecode on MiniZinc instances, end to end through Debian's `minizinc`.

Each instance runs through `minizinc --solver constrint` (fzn-constrint with ConstrINT's mznlib) and
through fzn-gecode with Gecode's native globals (a solver configuration whose mznlib is
/usr/share/minizinc/gecode_presolver), with the same time limit. Prints a table (solved, wall time,
search nodes for both, and the time ratio) and writes it as CSV.

usage: fzn_gecode_compare.py [--build DIR] [--time-limit S] [--csv FILE] [--only NAME...]
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
INSTANCES = ROOT / "tests" / "flatzinc" / "instances"
# (folder, data file or None): the instances with Gecode reference times in the shared README, and more.
BENCHMARK = [
    ("queens", "008"), ("queens", "050"), ("queens", "200"),
    ("golomb", "08"), ("golomb", "09"), ("golomb", "10"),
    ("magicseq", "020"), ("magicseq", "100"),
    ("market_split", "s3-01"), ("market_split", "u3-01"),
    ("langford", "l_2_08"), ("langford", "l_2_09"),
    ("schur_numbers", "10-3"), ("alpha", None), ("eq", None),
]


def instance_files(folder, data):
    mzn = next((INSTANCES / folder).glob("*.mzn"))
    return [str(mzn)] + ([str(INSTANCES / folder / f"{data}.dzn")] if data else [])


def run(solver, files, limit_s, env):
    """One minizinc run: (solved, wall seconds, nodes, status)."""
    start = time.monotonic()
    try:
        result = subprocess.run(["minizinc", "--solver", solver, "-s", "--time-limit", str(int(limit_s * 1000)), *files],
                                capture_output=True, text=True, timeout=limit_s + 30, env=env)
        out = result.stdout
    except subprocess.TimeoutExpired:
        return False, limit_s, None, "killed"
    wall = time.monotonic() - start
    nodes = re.findall(r"%%%mzn-stat: nodes=(\d+)", out)
    optimisation = "minimize" in pathlib.Path(files[0]).read_text() or "maximize" in pathlib.Path(files[0]).read_text()
    if "=====UNSATISFIABLE=====" in out:
        status = "UNSAT"
    elif "==========" in out:
        status = "OPTIMAL" if optimisation else "ALL"
    elif "----------" in out:
        status = "SAT"
    else:
        status = "UNKNOWN" if result.returncode == 0 else f"ERROR {result.returncode}"
    solved = status in ("UNSAT", "OPTIMAL", "ALL") or (status == "SAT" and not optimisation)
    return solved, wall, int(nodes[-1]) if nodes else None, status


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"), help="build directory (holds share/minizinc/solvers)")
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per instance and solver")
    parser.add_argument("--csv", default="fzn_gecode_compare.csv")
    parser.add_argument("--only", nargs="*", help="instance names (folder.data) to run")
    args = parser.parse_args()
    for tool in ("minizinc", "fzn-gecode"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found: apt-get install -y minizinc flatzinc")
    constrint_dir = pathlib.Path(args.build) / "share" / "minizinc" / "solvers"
    if not (constrint_dir / "constrint.msc").exists():
        sys.exit(f"{constrint_dir}/constrint.msc not found: build the project first (--build)")

    with tempfile.TemporaryDirectory() as tmp:
        gecode = {"id": "org.gecode.native-bench", "name": "GecodeNative", "version": "6",
                  "mznlib": "/usr/share/minizinc/gecode_presolver", "executable": shutil.which("fzn-gecode"),
                  "tags": ["cp", "int"], "stdFlags": ["-a", "-f", "-n", "-p", "-r", "-s", "-t"],
                  "supportsFzn": True, "needsSolns2Out": True}
        pathlib.Path(tmp, "gecode-native.msc").write_text(json.dumps(gecode))
        env = dict(os.environ, MZN_SOLVER_PATH=f"{constrint_dir}{os.pathsep}{tmp}")

        rows = []
        header = f"{'instance':<22} {'constrint':>9} {'time s':>8} {'nodes':>9}   {'gecode':>9} {'time s':>8} {'nodes':>9}   {'ratio':>6}"
        print(header)
        print("-" * len(header))
        for folder, data in BENCHMARK:
            name = f"{folder}.{data}" if data else folder
            if args.only and name not in args.only:
                continue
            files = instance_files(folder, data)
            c = run("constrint", files, args.time_limit, env)
            g = run("org.gecode.native-bench", files, args.time_limit, env)
            ratio = c[1] / g[1] if g[1] > 0 else float("nan")
            rows.append((name, c, g, ratio))
            print(f"{name:<22} {c[3]:>9} {c[1]:>8.2f} {c[2] if c[2] is not None else '-':>9}   "
                  f"{g[3]:>9} {g[1]:>8.2f} {g[2] if g[2] is not None else '-':>9}   {ratio:>6.2f}", flush=True)

    both = [r[3] for r in rows if r[1][0] and r[2][0]]
    missed = [r[0] for r in rows if r[2][0] and not r[1][0]]
    print(f"\nsolved: constrint {sum(r[1][0] for r in rows)}/{len(rows)}, gecode {sum(r[2][0] for r in rows)}/{len(rows)}"
          f" (time limit {args.time_limit:g} s)")
    if both:
        print(f"median time ratio constrint/gecode over instances both solved: {statistics.median(both):.2f}")
    if missed:
        print(f"solved by Gecode only: {', '.join(missed)}")
    with open(args.csv, "w") as f:
        f.write("instance,constrint_status,constrint_seconds,constrint_nodes,gecode_status,gecode_seconds,gecode_nodes,ratio\n")
        for name, c, g, ratio in rows:
            f.write(f"{name},{c[3]},{c[1]:.3f},{c[2] if c[2] is not None else ''},{g[3]},{g[1]:.3f},"
                    f"{g[2] if g[2] is not None else ''},{ratio:.3f}\n")
    print(f"written: {args.csv}")


if __name__ == "__main__":
    main()
