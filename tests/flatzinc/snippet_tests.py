#!/usr/bin/env python3
"""FlatZinc snippets through fzn-constrint (as Gecode's test/flatzinc): each snippets/NAME.fzn runs
with the flags of its `% flags:` line; its stdout must equal snippets/NAME.out when that file exists
and contain every `% stdout-contains:` line; its exit status must be `% exit:` (default 0) and its
stderr contain every `% stderr-contains:` line. `% model: PATH` runs on PATH (relative to the snippet
directory) instead of the snippet itself; `% memory-limit-mib: N` limits the address space to N MiB.

usage: snippet_tests.py FZN_CONSTRINT SNIPPET_DIR NAME   (or SNIPPET_DIR --list)
"""
import pathlib
import resource
import subprocess
import sys


def headers(text, key):
    prefix = f"% {key}:"
    return [line[len(prefix):].strip() for line in text.splitlines() if line.startswith(prefix)]


def run(program, directory, name):
    source = directory / f"{name}.fzn"
    text = source.read_text()
    flags = " ".join(headers(text, "flags")).split()
    exit_code = int((headers(text, "exit") or ["0"])[0])
    model = (headers(text, "model") or [source.name])[0]
    memory_limit = headers(text, "memory-limit-mib")

    def limit_memory():
        if memory_limit:
            limit = int(memory_limit[0]) << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    result = subprocess.run([program, *flags, model], cwd=directory, capture_output=True, text=True, timeout=60,
                            preexec_fn=limit_memory)
    problems = []
    if result.returncode != exit_code:
        problems.append(f"exit status {result.returncode}, expected {exit_code}")
    expected_file = directory / f"{name}.out"
    if expected_file.exists() and result.stdout != expected_file.read_text():
        problems.append(f"stdout differs from {expected_file.name}:\n--- got\n{result.stdout}--- expected\n{expected_file.read_text()}")
    for wanted in headers(text, "stdout-contains"):
        if wanted not in result.stdout:
            problems.append(f"stdout lacks {wanted!r}:\n{result.stdout}")
    for wanted in headers(text, "stderr-contains"):
        if wanted not in result.stderr:
            problems.append(f"stderr lacks {wanted!r}:\n{result.stderr}")
    if exit_code == 0 and result.stderr:
        problems.append(f"unexpected stderr:\n{result.stderr}")
    for p in problems:
        print(f"{name}: {p}")
    return 1 if problems else 0


def main():
    if len(sys.argv) == 3 and sys.argv[2] == "--list":
        for f in sorted(pathlib.Path(sys.argv[1]).glob("*.fzn")):
            print(f.stem)
        return 0
    program, directory, name = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    return run(program, directory, name)


if __name__ == "__main__":
    sys.exit(main())
