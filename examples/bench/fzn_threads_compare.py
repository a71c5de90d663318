#!/usr/bin/env python3
"""ConstrINT's parallel search: fzn-constrint -p N against -p 1 on the MiniZinc instances.

Two steps, so that the timed step needs neither minizinc nor the sources (it can run on another
machine, one with idle cores):
  fzn_threads_compare.py flatten OUT_DIR [--instances DIR]   each instance to OUT_DIR/NAME.fzn
  fzn_threads_compare.py run FZN_DIR [--fzn-constrint PATH] [--threads 2] [--runs 3] [--min-seconds 1]
The run step times every instance with one thread first; those taking at least --min-seconds (and
finishing within --time-limit) run --runs times with 1 and with N threads, alternately. It checks that
the answers agree where they must (satisfaction: the number of solutions and the final line, since
-p N returns whichever solution a thread finds first; optimisation: the last solution and the final
line), and prints the median wall times, CPU times and search nodes, the speedup per instance and the
median speedup.
"""
import argparse
import os
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def is_satisfaction(fzn):
    return re.search(r"solve\b[^;]*\bsatisfy\s*;", fzn.read_text()) is not None


def flatten(out_dir, instances, build):
    out_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MZN_SOLVER_PATH=str(build / "share" / "minizinc" / "solvers"))
    for folder in sorted(p for p in instances.iterdir() if p.is_dir()):
        models = sorted(folder.glob("*.mzn"))
        if not models:
            continue
        data = sorted(folder.glob("*.dzn")) or [None]
        for d in data:
            name = f"{folder.name}.{d.stem}" if d else folder.name
            files = [str(models[0])] + ([str(d)] if d else [])
            done = subprocess.run(["minizinc", "-c", "--solver", "constrint", *files, "--fzn",
                                   str(out_dir / f"{name}.fzn"), "--ozn", os.devnull],
                                  capture_output=True, text=True, env=env, check=False)
            print(f"{name}: {'ok' if done.returncode == 0 else 'FAILED ' + done.stderr.strip()[:200]}", flush=True)


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def solve(binary, fzn, threads, limit_s):
    """(wall seconds, stdout, CPU seconds, nodes) of one fzn-constrint run; None for the output when it
    did not finish. The CPU time says how much work the threads did, whatever else ran on the machine."""
    start, cpu = time.monotonic(), children_cpu()
    try:
        done = subprocess.run([binary, "-s", "-p", str(threads), "-t", str(int(limit_s * 1000)), str(fzn)],
                              capture_output=True, text=True, timeout=limit_s + 30, check=False)
    except subprocess.TimeoutExpired:
        return limit_s, None, children_cpu() - cpu, 0
    wall = time.monotonic() - start
    nodes = re.search(r"%%%mzn-stat: nodes=(\d+)", done.stdout)
    finished = done.returncode == 0 and ("==========" in done.stdout or "UNSATISFIABLE" in done.stdout
                                         or ("----------" in done.stdout and is_satisfaction(fzn)))
    return wall, done.stdout if finished else None, children_cpu() - cpu, int(nodes.group(1)) if nodes else 0


def answer(stdout, optimisation):
    """What must agree between thread counts: the number of solutions and the final line, or the last
    solution and the final line. Statistics (%%%mzn-stat) are left out."""
    stdout = "".join(line for line in stdout.splitlines(keepends=True) if not line.startswith("%%%"))
    if not optimisation:
        return stdout.count("----------\n"), stdout.rstrip().rsplit("\n", 1)[-1]
    blocks = stdout.split("----------\n")
    return (blocks[-2], blocks[-1]) if len(blocks) >= 2 else stdout


def run(fzn_dir, binary, threads, runs, min_seconds, limit_s, csv_path):
    rows = []
    print(f"{'instance':<26} {'1 thread s':>10} {f'{threads} threads s':>12} {'speedup':>8} {'CPU 1 s':>8} "
          f"{f'CPU {threads} s':>8} {'nodes 1':>9} {f'nodes {threads}':>9}  agree", flush=True)
    for fzn in sorted(fzn_dir.glob("*.fzn")):
        optimisation = not is_satisfaction(fzn)
        first, out1, cpu1, nodes1 = solve(binary, fzn, 1, limit_s)
        if out1 is None or first < min_seconds:
            continue
        times = {1: [first], threads: []}
        cpus = {1: [cpu1], threads: []}
        nodes = {1: [nodes1], threads: []}
        outputs = {1: [answer(out1, optimisation)], threads: []}
        for i in range(runs):
            for t in ((threads, 1) if i % 2 == 0 else (1, threads)):
                if t == 1 and len(times[1]) >= runs:
                    continue
                wall, out, cpu, n = solve(binary, fzn, t, limit_s)
                times[t].append(wall)
                cpus[t].append(cpu)
                nodes[t].append(n)
                outputs[t].append(answer(out, optimisation) if out is not None else None)
        one, many = statistics.median(times[1]), statistics.median(times[threads])
        cpu_one, cpu_many = statistics.median(cpus[1]), statistics.median(cpus[threads])
        nodes_one, nodes_many = statistics.median(nodes[1]), statistics.median(nodes[threads])
        agree = all(o == outputs[1][0] for o in outputs[1] + outputs[threads])
        rows.append((fzn.stem, one, many, one / many, agree, cpu_one, cpu_many, nodes_one, nodes_many))
        print(f"{fzn.stem:<26} {one:>10.2f} {many:>12.2f} {one / many:>7.2f}x {cpu_one:>8.2f} {cpu_many:>8.2f} "
              f"{nodes_one:>9.0f} {nodes_many:>9.0f}  {'yes' if agree else 'NO'}", flush=True)
    if rows:
        print(f"\nmedian speedup of {threads} threads over 1 on {len(rows)} instances taking >= {min_seconds:g} s "
              f"with one thread: {statistics.median(r[3] for r in rows):.2f}x; answers agree on "
              f"{sum(r[4] for r in rows)} of {len(rows)}")
    with open(csv_path, "w") as f:
        f.write(f"instance,seconds_1_thread,seconds_{threads}_threads,speedup,answers_agree,cpu_seconds_1_thread,"
                f"cpu_seconds_{threads}_threads,nodes_1_thread,nodes_{threads}_threads\n")
        for name, one, many, speedup, agree, cpu_one, cpu_many, nodes_one, nodes_many in rows:
            f.write(f"{name},{one:.3f},{many:.3f},{speedup:.3f},{int(agree)},{cpu_one:.3f},{cpu_many:.3f},"
                    f"{nodes_one:.0f},{nodes_many:.0f}\n")
    print(f"written: {csv_path}")
    return 0 if all(r[4] for r in rows) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="step", required=True)
    f = sub.add_parser("flatten")
    f.add_argument("out_dir", type=pathlib.Path)
    f.add_argument("--instances", type=pathlib.Path, default=ROOT.parent / "shared" / "minizinc")
    f.add_argument("--build", type=pathlib.Path, default=ROOT / "build")
    r = sub.add_parser("run")
    r.add_argument("fzn_dir", type=pathlib.Path)
    r.add_argument("--fzn-constrint", default=str(ROOT / "build" / "constrint" / "fzn-constrint"))
    r.add_argument("--threads", type=int, default=2)
    r.add_argument("--runs", type=int, default=3)
    r.add_argument("--min-seconds", type=float, default=1.0)
    r.add_argument("--time-limit", type=float, default=60.0)
    r.add_argument("--csv", default="fzn_threads_compare.csv")
    args = parser.parse_args()
    if args.step == "flatten":
        flatten(args.out_dir, args.instances, args.build)
        return 0
    return run(args.fzn_dir, args.fzn_constrint, args.threads, args.runs, args.min_seconds, args.time_limit,
               args.csv)


if __name__ == "__main__":
    sys.exit(main())
