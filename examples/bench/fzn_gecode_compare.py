#!/usr/bin/env python3
"""ConstrINT against Gecode on every MiniZinc instance of a folder (default ../shared/minizinc).

Each instance is flattened once per solver, outside the timing, with that solver's own library:
ConstrINT's mznlib for fzn-constrint, Gecode's native globals (/usr/share/minizinc/gecode_presolver)
for fzn-gecode. The solver processes then run on their .fzn files, alternately, --runs times each,
with the same time limit; an instance that reaches the limit once is not run again. Measured per run:
the process's wall time and its CPU time (user + system, from wait4), which depends much less than
the wall time on what else runs on the machine; the table shows the medians, the search nodes, and the
ratio constrint/gecode of both. Writes the table as CSV.

usage: fzn_gecode_compare.py [--instances DIR] [--build DIR] [--time-limit S] [--runs N]
                             [--fzn-dir DIR] [--csv FILE] [--only NAME...]
"""
import argparse
import json
import os
import pathlib
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
GECODE_LIBRARY = "/usr/share/minizinc/gecode_presolver"


def instances(folder, only):
    """(name, model, data or None) for every model and data file under folder, sorted by name."""
    found = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        models = sorted(sub.glob("*.mzn"))
        if not models:
            continue
        for data in sorted(sub.glob("*.dzn")) or [None]:
            name = f"{sub.name}.{data.stem}" if data else sub.name
            if not only or name in only:
                found.append((name, models[0], data))
    return found


def flatten(solver, model, data, fzn, env):
    """Flattens model (+ data) for solver into fzn; the error text when minizinc fails."""
    done = subprocess.run(["minizinc", "-c", "--solver", solver, str(model), *([str(data)] if data else []),
                           "--fzn", str(fzn), "--ozn", os.devnull], capture_output=True, text=True, env=env)
    return None if done.returncode == 0 else (done.stderr.strip() or done.stdout.strip())[:200]


def is_optimisation(fzn):
    return re.search(r"solve\b[^;]*\b(minimize|maximize)\b", fzn.read_text()) is not None


def solve_once(command, limit_s):
    """One solver process: (wall s, stdout or None when killed at limit + 10 s)."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        out, _ = process.communicate(timeout=limit_s + 10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        out = None
    return time.monotonic() - start, out


def children_cpu():
    """CPU seconds of the waited-for children so far (getrusage: finer than os.times' clock ticks)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def status_of(out, optimisation):
    if out is None:
        return "KILLED"
    if "=====UNSATISFIABLE=====" in out:
        return "UNSAT"
    if "==========" in out:
        return "OPTIMAL" if optimisation else "ALL"
    if "----------" in out:
        return "SAT"
    return "UNKNOWN"


def solved(status, optimisation):
    return status in ("UNSAT", "OPTIMAL", "ALL") or (status == "SAT" and not optimisation)


def measure(command, fzn, runs, limit_s):
    """Median wall and CPU seconds, nodes and status of up to runs runs of command on fzn."""
    optimisation = is_optimisation(fzn)
    walls, cpus, status, nodes = [], [], None, None
    for _ in range(runs):
        cpu = children_cpu()
        wall, out = solve_once([*command, str(fzn)], limit_s)
        walls.append(wall)
        cpus.append(children_cpu() - cpu)
        status = status_of(out, optimisation)
        found = re.findall(r"%%%mzn-stat: nodes=(\d+)", out or "")
        nodes = int(found[-1]) if found else None
        if not solved(status, optimisation):
            break
    return {"status": status, "solved": solved(status, optimisation), "wall": statistics.median(walls),
            "cpu": statistics.median(cpus), "nodes": nodes}


def ratio(c, g, key):
    return c[key] / g[key] if g[key] > 0 else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=pathlib.Path, default=ROOT.parent / "shared" / "minizinc",
                        help="folder of instance folders (a model .mzn and its .dzn files each)")
    parser.add_argument("--build", type=pathlib.Path, default=ROOT / "build",
                        help="build directory (holds constrint/fzn-constrint and share/minizinc/solvers)")
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per run")
    parser.add_argument("--runs", type=int, default=3, help="runs per instance and solver (median)")
    parser.add_argument("--fzn-dir", type=pathlib.Path, help="keep the flattened files here")
    parser.add_argument("--csv", default="fzn_gecode_compare.csv")
    parser.add_argument("--only", nargs="*", help="instance names (folder.data) to run")
    args = parser.parse_args()
    for tool in ("minizinc", "fzn-gecode"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found: apt-get install -y minizinc flatzinc")
    solvers_dir = args.build / "share" / "minizinc" / "solvers"
    fzn_constrint = args.build / "constrint" / "fzn-constrint"
    if not (solvers_dir / "constrint.msc").exists() or not fzn_constrint.exists():
        sys.exit(f"{solvers_dir}/constrint.msc or {fzn_constrint} not found: build the project first (--build)")
    if not args.instances.is_dir():
        sys.exit(f"{args.instances}: no such folder (--instances)")
    if args.runs < 1 or args.time_limit <= 0:
        sys.exit("--runs must be at least 1 and --time-limit positive")
    limit_ms = str(int(args.time_limit * 1000))
    commands = {"constrint": [str(fzn_constrint), "-s", "-t", limit_ms],
                "gecode": [shutil.which("fzn-gecode"), "-s", "-time", limit_ms]}

    with tempfile.TemporaryDirectory() as tmp:
        fzn_dir = args.fzn_dir or pathlib.Path(tmp)
        fzn_dir.mkdir(parents=True, exist_ok=True)
        gecode = {"id": "org.gecode.native-bench", "name": "GecodeNative", "version": "6", "mznlib": GECODE_LIBRARY,
                  "executable": shutil.which("fzn-gecode"), "tags": ["cp", "int"],
                  "stdFlags": ["-a", "-f", "-n", "-p", "-r", "-s", "-t"], "supportsFzn": True, "needsSolns2Out": True}
        pathlib.Path(tmp, "gecode-native.msc").write_text(json.dumps(gecode))
        env = dict(os.environ, MZN_SOLVER_PATH=f"{solvers_dir}{os.pathsep}{tmp}")
        library = {"constrint": "constrint", "gecode": "org.gecode.native-bench"}

        rows = []
        header = (f"{'instance':<22} {'constrint':>9} {'wall s':>7} {'CPU s':>7} {'nodes':>9}   {'gecode':>9} "
                  f"{'wall s':>7} {'CPU s':>7} {'nodes':>9}   {'CPU ratio':>9} {'wall ratio':>10}")
        print(f"{args.runs} runs per instance and solver (median), time limit {args.time_limit:g} s\n{header}")
        print("-" * len(header))
        for name, model, data in instances(args.instances, args.only):
            result = {}
            for solver in ("constrint", "gecode"):
                fzn = fzn_dir / f"{name}.{solver}.fzn"
                error = flatten(library[solver], model, data, fzn, env)
                result[solver] = (measure(commands[solver], fzn, args.runs, args.time_limit) if error is None else
                                  {"status": "FLATTEN", "solved": False, "wall": float("nan"), "cpu": float("nan"),
                                   "nodes": None, "error": error})
            c, g = result["constrint"], result["gecode"]
            rows.append((name, c, g))
            print(f"{name:<22} {c['status']:>9} {c['wall']:>7.2f} {c['cpu']:>7.2f} {c['nodes'] or '-':>9}   "
                  f"{g['status']:>9} {g['wall']:>7.2f} {g['cpu']:>7.2f} {g['nodes'] or '-':>9}   "
                  f"{ratio(c, g, 'cpu'):>9.2f} {ratio(c, g, 'wall'):>10.2f}", flush=True)
            for solver, r in result.items():
                if "error" in r:
                    print(f"  {solver} flattening failed: {r['error']}")

    both = [(name, c, g) for name, c, g in rows if c["solved"] and g["solved"]]
    missed = [name for name, c, g in rows if g["solved"] and not c["solved"]]
    disagree = [name for name, c, g in rows if c["solved"] and g["solved"] and (c["status"] == "UNSAT") != (
        g["status"] == "UNSAT")]
    print(f"\nsolved: constrint {sum(c['solved'] for _, c, _ in rows)}/{len(rows)}, "
          f"gecode {sum(g['solved'] for _, _, g in rows)}/{len(rows)} (time limit {args.time_limit:g} s)")
    if both:
        for key, label in (("cpu", "CPU time"), ("wall", "wall time")):
            ratios = sorted(((ratio(c, g, key), name) for name, c, g in both), reverse=True)
            worst = ", ".join(f"{name} {r:.2f}" for r, name in ratios[:5])
            print(f"{label}: median ratio constrint/gecode over the {len(both)} instances both solved "
                  f"{statistics.median(r for r, _ in ratios):.2f}; over 2x: {sum(r > 2 for r, _ in ratios)}; "
                  f"worst: {worst}")
    if missed:
        print(f"solved by Gecode only: {', '.join(missed)}")
    if disagree:
        print(f"SATISFIABILITY DISAGREES: {', '.join(disagree)}")
    with open(args.csv, "w") as f:
        f.write("instance,constrint_status,constrint_wall_s,constrint_cpu_s,constrint_nodes,"
                "gecode_status,gecode_wall_s,gecode_cpu_s,gecode_nodes,cpu_ratio,wall_ratio\n")
        for name, c, g in rows:
            f.write(f"{name},{c['status']},{c['wall']:.3f},{c['cpu']:.3f},{c['nodes'] or ''},{g['status']},"
                    f"{g['wall']:.3f},{g['cpu']:.3f},{g['nodes'] or ''},{ratio(c, g, 'cpu'):.3f},"
                    f"{ratio(c, g, 'wall'):.3f}\n")
    print(f"written: {args.csv}")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
