#!/usr/bin/env python3
"""End to end through MiniZinc: `minizinc --solver constrint` on the instances in instances/,
checked against the expected satisfiability (langford's NO_SOLUTION list, market_split's s*/u*),
the known optimum (golomb), and an independent checker: every reported solution is given back to
MiniZinc as data and solved by Gecode (fzn-gecode with its own library), which must accept it; for
queens 8 the set of all solutions must equal Gecode's.

usage: minizinc_tests.py SOLVER_DIR INSTANCES CASE   (or - INSTANCES --list)
SOLVER_DIR holds constrint.msc (MZN_SOLVER_PATH). Exits 77 (skipped) without minizinc or fzn-gecode.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

GOLOMB_OPTIMUM = {"05": 11, "06": 17, "07": 25, "08": 34}
TIME_LIMIT_S = 120


def cases(instances):
    found = {}
    for model, data in [("queens", d) for d in ("008", "020", "050")] + \
                       [("golomb", d) for d in GOLOMB_OPTIMUM] + \
                       [("magicseq", d) for d in ("005", "010", "020", "100")] + \
                       [("langford", f"l_2_{n:02d}") for n in range(3, 11)] + \
                       [("market_split", d) for d in ("s3-01", "s3-02", "u3-01", "u3-02")] + \
                       [("schur_numbers", d) for d in ("5-3", "7-3", "10-3")] + \
                       [("alpha", None), ("eq", None)]:
        found[f"{model}.{data}" if data else model] = (model, data)
    found["queens.008.all"] = ("queens", "008")
    return found


def files(instances, model, data):
    folder = instances / model
    mzn = next(folder.glob("*.mzn"))
    return [str(mzn)] + ([str(folder / f"{data}.dzn")] if data else [])


def expected_satisfiable(instances, model, data):
    if model == "langford":
        return data not in (instances / "langford" / "NO_SOLUTION").read_text().split()
    if model == "market_split":
        return data.startswith("s")
    return True


def solutions(output):
    """The dzn blocks of each solution and the final status line."""
    blocks, current, status = [], [], None
    for line in output.splitlines():
        if line == "----------":
            blocks.append("\n".join(current) + "\n")
            current = []
        elif line.startswith("=========="):
            status = line
        elif line.startswith("=====") and line.endswith("====="):
            status = line
        else:
            current.append(line)
    return blocks, status


def minizinc(solver, args, env):
    return subprocess.run(["minizinc", "--solver", solver, *args], capture_output=True, text=True,
                          timeout=TIME_LIMIT_S, env=env)


def gecode_environment(directory):
    config = {"id": "org.gecode.native-check", "name": "GecodeNativeCheck", "version": "6",
              "mznlib": "/usr/share/minizinc/gecode_presolver", "executable": shutil.which("fzn-gecode"),
              "tags": ["cp", "int"], "stdFlags": ["-a", "-n", "-s", "-t"], "supportsFzn": True,
              "needsSolns2Out": True}
    (directory / "gecode-check.msc").write_text(json.dumps(config))
    return dict(os.environ, MZN_SOLVER_PATH=str(directory))


def check_with_gecode(model_files, solution, env, directory):
    data = directory / "solution.dzn"
    data.write_text(solution)
    result = minizinc("org.gecode.native-check", [*model_files, str(data)], env)
    return result.returncode == 0 and "----------" in result.stdout and "UNSATISFIABLE" not in result.stdout


def main():
    solver_dir, instances, name = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    all_cases = cases(instances)
    if name == "--list":
        print("\n".join(all_cases))
        return 0
    if not shutil.which("minizinc") or not shutil.which("fzn-gecode"):
        print("SKIPPED: minizinc or fzn-gecode not installed (apt-get install minizinc flatzinc)")
        return 77
    model, data = all_cases[name]
    model_files = files(instances, model, data)
    env = dict(os.environ, MZN_SOLVER_PATH=solver_dir)
    all_solutions = name.endswith(".all")
    result = minizinc("constrint", ["--output-mode", "dzn", *(["-a"] if all_solutions else []), *model_files], env)
    if result.returncode != 0:
        print(f"minizinc failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return 1
    blocks, status = solutions(result.stdout)
    problems = []
    if not expected_satisfiable(instances, model, data):
        if blocks or status != "=====UNSATISFIABLE=====":
            problems.append(f"expected UNSATISFIABLE, got {len(blocks)} solutions and status {status}")
    elif not blocks:
        problems.append(f"expected a solution, got status {status}")
    with tempfile.TemporaryDirectory() as tmp:
        directory = pathlib.Path(tmp)
        genv = gecode_environment(directory)
        if model == "golomb" and blocks:
            marks = [int(v) for v in re.search(r"mark = \[([^\]]*)\]", blocks[-1]).group(1).split(",")]
            if marks[-1] != GOLOMB_OPTIMUM[data] or status != "==========":
                problems.append(f"golomb {data}: last solution {marks[-1]} (status {status}), optimum {GOLOMB_OPTIMUM[data]}")
        if all_solutions:
            reference = minizinc("org.gecode.native-check", ["--output-mode", "dzn", "-a", *model_files], genv)
            expected, _ = solutions(reference.stdout)
            if sorted(blocks) != sorted(expected) or len(set(blocks)) != len(blocks) or status != "==========":
                problems.append(f"{len(blocks)} solutions (status {status}), Gecode finds {len(expected)}")
        else:
            for i, block in enumerate(blocks):
                if not check_with_gecode(model_files, block, genv, directory):
                    problems.append(f"solution {i + 1} rejected by the checker:\n{block}")
    for p in problems:
        print(f"{name}: {p}")
    if not problems:
        print(f"{name}: {len(blocks)} solution(s) checked, status {status}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
