"""The Python package: operators, big integers both ways, solving, errors, the .cint format."""
import itertools
import os
from pathlib import Path

import pytest

import constrint as ci

MODELS = Path(os.environ.get("CONSTRINT_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "examples" / "models"


def test_the_issue_example():
    m = ci.Model()
    x = m.int_var("x", 1, 2**70)
    y = m.int_var("y", [16, 32, 64, 128])
    m += x * y <= 2**20
    m += x % 16 == 0
    m += (x == 64) | (y == 128)
    m.maximize(x * y)
    result = ci.solve(m, timeout=10.0)
    assert result.status == "OPTIMAL"
    best = result.solutions[-1]
    assert best[x] * best[y] == 2**20
    assert best[x] % 16 == 0
    assert best[x] == 64 or best["y"] == 128


def test_optimisation_over_a_huge_range_is_proven_in_few_nodes():
    m = ci.Model()
    x = m.int_var("x", 0, 2**200)
    y = m.int_var("y", 0, 2**200)
    m += 3 * x + 5 * y <= 2**200
    m.maximize(2 * x + 3 * y)
    result = ci.solve(m, nodes=100)
    assert result.status == "OPTIMAL"
    best = result.solutions[-1]
    assert 2 * best[x] + 3 * best[y] == (2**201 - 2) // 3  # the LP bound, rounded down
    assert result.stats.nodes <= 10


def test_big_integers_cross_the_boundary_exactly():
    m = ci.Model()
    x = m.int_var("x", 1, 2**70)
    y = m.int_var("y", 1, 2**70)
    z = m.int_var("z", 1, 2**70)
    m += x * y * z == 2**80 * 3**7
    m.prefer(x, "max")
    s = ci.solve(m).solutions[0]
    assert s[x] == 2**70
    assert s[x] * s[y] * s[z] == 2**80 * 3**7
    assert isinstance(s[x], int)


@pytest.mark.parametrize(
    "build, check",
    [
        (lambda a, b: a + b == 3, lambda a, b: a + b == 3),
        (lambda a, b: a - b == 1, lambda a, b: a - b == 1),
        (lambda a, b: -a == b, lambda a, b: -a == b),
        (lambda a, b: a * b == -2, lambda a, b: a * b == -2),
        (lambda a, b: a // b == -1, lambda a, b: b != 0 and a // b == -1),
        (lambda a, b: ci.divides(b, a), lambda a, b: b != 0 and a % b == 0),
        (lambda a, b: a % b == 0, lambda a, b: b != 0 and a % b == 0),
        (lambda a, b: a % b == 1, lambda a, b: b != 0 and a % b == 1),
        (lambda a, b: a**2 == b + 1, lambda a, b: a**2 == b + 1),
        (lambda a, b: abs(a) == b, lambda a, b: abs(a) == b),
        (lambda a, b: ci.min(a, b) == 0, lambda a, b: min(a, b) == 0),
        (lambda a, b: ci.max(a, b) == 2, lambda a, b: max(a, b) == 2),
        (lambda a, b: a != b, lambda a, b: a != b),
        (lambda a, b: a < b, lambda a, b: a < b),
        (lambda a, b: a <= b, lambda a, b: a <= b),
        (lambda a, b: a > b, lambda a, b: a > b),
        (lambda a, b: a >= b, lambda a, b: a >= b),
        (lambda a, b: (a == 1) | (b == -2), lambda a, b: a == 1 or b == -2),
        (lambda a, b: (a >= 0) & (b >= a), lambda a, b: a >= 0 and b >= a),
        # A divisor requires b != 0 of the whole constraint, inside a disjunction too (issue 24).
        (lambda a, b: ci.divides(b, a) | (b == 0), lambda a, b: b != 0 and a % b == 0),
        (lambda a, b: (a % b == 0) | (b == 0), lambda a, b: b != 0 and a % b == 0),
        (lambda a, b: (0 == a % b) | (b == 0), lambda a, b: b != 0 and a % b == 0),
        (lambda a, b: (a // b == 2) | (b == 0), lambda a, b: b != 0 and a // b == 2),
        (lambda a, b: (a % 0 == 0) | (a == 1), lambda a, b: False),
        (lambda a, b: ci.member(a, [-3, 0, 2]), lambda a, b: a in (-3, 0, 2)),
        (lambda a, b: 7 - a * 2 == b, lambda a, b: 7 - a * 2 == b),
    ],
)
def test_every_operator_against_brute_force(build, check):
    m = ci.Model()
    a = m.int_var("a", -3, 3)
    b = m.int_var("b", -3, 3)
    m += build(a, b)
    found = sorted((s[a], s[b]) for s in ci.solve_all(m).solutions)
    expected = sorted((x, y) for x, y in itertools.product(range(-3, 4), repeat=2) if check(x, y))
    assert found == expected


def test_errors_are_python_exceptions_with_the_cpp_message():
    m = ci.Model()
    x = m.int_var("x", 1, 10)
    with pytest.raises(ci.ModelError, match="declared twice"):
        m.int_var("x", 1, 2)
    with pytest.raises(ci.ModelError, match="negative exponent"):
        x ** -1
    other = ci.Model()
    y = other.int_var("y", 1, 2)
    with pytest.raises(ci.ModelError, match="two different models"):
        x + y
    with pytest.raises(ci.ParseError, match=r"<string>:1:\d+:"):
        ci.parse("x == ;")
    with pytest.raises(ValueError, match="prefer must be"):
        m.prefer(x, "biggest")
    with pytest.raises(TypeError):
        bool(x == 1)
    with pytest.raises(TypeError):
        m.int_var("z", 1.5, 3)


def test_limits_and_unsatisfiable_models():
    m = ci.Model()
    pigeons = [m.int_var(f"p{i}", 1, 11) for i in range(12)]
    for p, q in itertools.combinations(pigeons, 2):
        m += p != q
    stopped = ci.solve(m, nodes=500)
    assert stopped.status == "UNKNOWN"
    assert "node limit 500" in stopped.stop_reason
    small = ci.Model()
    a = small.int_var("a", 1, 3)
    small.add(a >= 2, "a is large")
    small.add(a <= 1, "a is small")
    small.add(a != 3, "a is not 3")
    assert ci.solve(small).status == "UNSATISFIABLE"
    assert ci.explain(small) == ["a is large", "a is small"]


def test_cint_files_load_and_write_back():
    m = ci.load(str(MODELS / "send_more_money.cint"))
    s = ci.solve(m).solutions[0]
    assert [s[c] for c in "SENDMORY"] == [9, 5, 6, 7, 1, 0, 8, 2]
    again = ci.parse(m.to_cint())
    assert ci.solve(again).solutions[0].values == s.values


def test_model_methods_as_in_the_guide():
    m = ci.Model()
    x = m.int_var("x", 1, 20)
    y = m.int_var("y", 1, 20)
    m += x + y == 10
    sol = m.solve(timeout=5.0)
    assert (sol[x], sol["y"]) == (1, 9)
    assert sol.status == "SATISFIABLE"
    assert sol.stats.nodes >= 1
    firsts = [(s[x], s[y]) for s in m.solutions(limit=3)]
    assert firsts == [(1, 9), (2, 8), (3, 7)]
    assert len(list(m.solutions())) == 9
    m += x > 50
    assert m.solve() is None
    assert m.explain() == ["x > 50"]  # alone it contradicts x in 1..20


def test_threads_give_the_same_answers_as_one_thread():
    m = ci.Model()
    x, y, z = (m.int_var(n, 1, 9) for n in "xyz")
    m += x + y + z == 15
    m += x != y
    one = [s.values for s in ci.solve_all(m).solutions]
    assert len(one) > 20
    for threads in (2, 3):
        assert [s.values for s in ci.solve_all(m, threads=threads).solutions] == one
        assert [s.values for s in m.solutions(limit=4, threads=threads)] == one[:4]
        assert m.solve(threads=threads).values == one[0]
    m.maximize(x * y - z)
    best = ci.solve(m)
    answers = {tuple(ci.solve(m, threads=t).solutions[-1].values) for t in (2, 3, 4)}
    assert len(answers) == 1  # the same optimum's answer whatever the thread count
    (answer,) = answers
    assert answer[0] * answer[1] - answer[2] == best.solutions[-1][x] * best.solutions[-1][y] - best.solutions[-1][z]
    assert ci.solve(m, threads=2).status == "OPTIMAL"
    with pytest.raises(ValueError, match="threads must be between 1 and 1024, got 0"):
        ci.solve(m, threads=0)


def test_count_multiplies_independent_parts_and_matches_the_enumeration():
    m = ci.Model()
    for i in range(5):  # five parts of 65280 solutions each: 2^80 in all, counted without enumerating
        a, b = m.int_var(f"a{i}", 0, 255), m.int_var(f"b{i}", 0, 255)
        m += a != b
    counted = ci.count(m)
    assert counted.status == "ALL_SOLUTIONS" and counted.count == 65280 ** 5
    assert counted.stats.nodes < 1_000_000  # each part enumerated (5 x 65280), never their product
    small = ci.Model()
    x, y, z = small.int_var("x", 1, 3), small.int_var("y", 1, 3), small.int_var("z", 0, 4)
    small += x != y
    small += z % 2 == 0
    listed = len(ci.solve_all(small).solutions)
    assert listed == 18
    assert ci.count(small).count == ci.count(small, split_parts=False).count == listed
    assert ci.count(small, threads=2).count == listed
    none = ci.Model()
    p = [none.int_var(f"p{i}", 1, 6) for i in range(7)]  # seven pigeons, six holes
    for i, j in itertools.combinations(range(7), 2):
        none += p[i] != p[j]
    assert ci.count(none).count == 0 and ci.count(none).status == "UNSATISFIABLE"
    assert ci.count(none, nodes=5, split_parts=False).count is None  # a limit stopped it
    small.maximize(x)
    with pytest.raises(ci.ModelError, match="without objectives"):
        ci.count(small)


def test_split_parts_gives_the_same_answers_as_the_whole_search():
    m = ci.Model()
    x, y, z = m.int_var("x", 1, 3), m.int_var("y", 1, 3), m.int_var("z", 0, 5)
    m += x != y
    m += z % 2 == 1
    for split in (True, False):  # two parts; every entry point takes the option
        assert m.solve(split_parts=split).values == [1, 2, 1]
        assert ci.solve(m, split_parts=split).solutions[0].values == [1, 2, 1]
    whole = [s.values for s in ci.solve_all(m, split_parts=False).solutions]
    assert len(whole) == 18  # 6 pairs x != y, 3 odd z
    assert [s.values for s in ci.solve_all(m).solutions] == whole  # the same order: parts in decision order
    assert [s.values for s in m.solutions(split_parts=False)] == [s.values for s in m.solutions()] == whole
    assert [s.values for s in ci.solve_all(m, limit=4, split_parts=True, threads=2).solutions] == whole[:4]
    m.maximize(x - z)
    assert ci.solve(m).solutions[-1].values == ci.solve(m, split_parts=False).solutions[-1].values == [3, 1, 1]
    assert ci.solve(m).status == ci.solve(m, split_parts=False).status == "OPTIMAL"
    # A part without solutions behind one of many: split, it is refuted alone; whole, the search goes
    # through the first part's 90 solutions and refutes the pigeonhole part under each.
    none = ci.Model()
    a, b = none.int_var("a", 0, 9), none.int_var("b", 0, 9)
    none += a != b
    pigeons = [none.int_var(f"p{i}", 1, 4) for i in range(5)]
    for p, q in itertools.combinations(pigeons, 2):
        none += p != q
    split, whole_search = ci.solve(none), ci.solve(none, split_parts=False)
    assert split.status == whole_search.status == "UNSATISFIABLE"
    assert split.stats.nodes * 50 < whole_search.stats.nodes
    assert none.solve(split_parts=True) is None and none.solve(split_parts=False) is None
    # The explanation names the pigeonhole part's constraints only, split or not.
    pigeonhole = [repr(p != q) for p, q in itertools.combinations(pigeons, 2)]
    assert none.explain() == ci.explain(none, split_parts=False) == pigeonhole


def test_a_node_limit_is_one_budget_for_every_part_and_thread():
    def pairs(parts):
        m = ci.Model()
        for i in range(parts):
            m += m.int_var(f"a{i}", 0, 89) != m.int_var(f"b{i}", 0, 89)
        return m

    one_part = ci.count(pairs(1), threads=2)
    assert one_part.count == 90 * 89
    limit = one_part.stats.nodes * 3 // 2  # above one part's nodes, below both parts'
    stopped = ci.count(pairs(2), threads=2, nodes=limit)
    assert stopped.count is None and stopped.status == "UNKNOWN"
    assert stopped.stop_reason == f"node limit {limit} reached"
    assert limit <= stopped.stats.nodes <= limit + 2 * 32 + 2 * 64  # threads add 32 at a time; splits
    assert ci.count(pairs(2), threads=2).stats.nodes == 2 * one_part.stats.nodes  # summed over the parts


def test_ctrl_c_interrupts_a_long_solve_and_leaves_the_model_usable():
    import _thread
    import threading

    m = ci.Model()
    pigeons = [m.int_var(f"p{i}", 1, 13) for i in range(14)]
    for p, q in itertools.combinations(pigeons, 2):
        m += p != q
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        ci.solve(m, timeout=30.0)
    timer.cancel()
    assert ci.solve(m, nodes=100).status == "UNKNOWN"  # the model still works


def test_python_dash_m_runs_the_command_line_solver():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "constrint", str(MODELS / "send_more_money.cint")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "S = 9" in done.stdout and "Y = 2" in done.stdout
    unsat = subprocess.run([sys.executable, "-m", "constrint", "solve", str(MODELS / "no_solution.cint")],
                           capture_output=True, text=True, check=False)
    assert unsat.returncode == 1
    assert "UNSATISFIABLE" in unsat.stdout


def test_random_small_models_against_brute_force():
    import hypothesis  # Debian's python3-hypothesis, installed by scripts/install-deps.sh
    st = hypothesis.strategies

    ops = {
        "+": (lambda a, b: a + b), "-": (lambda a, b: a - b), "*": (lambda a, b: a * b),
    }
    relations = {
        "==": (lambda a, b: a == b), "!=": (lambda a, b: a != b), "<=": (lambda a, b: a <= b),
        "<": (lambda a, b: a < b),
    }

    @hypothesis.settings(max_examples=150, deadline=None, derandomize=True)
    @hypothesis.given(
        lo=st.integers(-4, 1), width=st.integers(0, 5), op=st.sampled_from(sorted(ops)),
        rel=st.sampled_from(sorted(relations)), constant=st.integers(-6, 6), op2=st.sampled_from(sorted(ops)),
    )
    def check(lo, width, op, rel, constant, op2):
        hi = lo + width
        m = ci.Model()
        x, y, z = (m.int_var(n, lo, hi) for n in "xyz")
        m += relations[rel](ops[op](x, y), ops[op2](z, constant))
        found = sorted(tuple(s.values) for s in m.solutions())
        rng = range(lo, hi + 1)
        expected = sorted(
            (a, b, c) for a in rng for b in rng for c in rng
            if relations[rel](ops[op](a, b), ops[op2](c, constant))
        )
        assert found == expected

    check()


def test_the_type_stubs_name_everything_the_package_exports():
    import ast

    stub = Path(ci.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text())
    declared = {node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    exported = {name for name in dir(ci) if not name.startswith("_") and name not in ("constrint",)}
    assert exported - declared == set()
    for cls in ("Model", "Solution", "Expr", "Result"):
        methods = {n.name for c in tree.body if isinstance(c, ast.ClassDef) and c.name == cls for n in c.body
                   if isinstance(n, ast.FunctionDef)}
        public = {n for n in dir(getattr(ci, cls)) if not n.startswith("_")}
        assert public - methods - {"stats", "status", "solutions", "stop_reason", "nodes"} == set(), cls


def test_public_classes_and_functions_have_docstrings():
    for name in ("Model", "Expr", "Var", "Constraint", "Solution", "Result", "Stats", "SolutionIterator"):
        assert (getattr(ci, name).__doc__ or "").strip(), name
    for name in ("solve", "solve_all", "explain", "load", "parse", "divides", "member", "min", "max"):
        assert len((getattr(ci, name).__doc__ or "").splitlines()) >= 2, name  # signature + text
    for method in ("int_var", "add", "maximize", "minimize", "prefer", "search", "solve", "solutions",
                   "explain", "to_cint"):
        assert len((getattr(ci.Model, method).__doc__ or "").strip().splitlines()) >= 2, method


def test_parse_errors_carry_file_line_and_column():
    with pytest.raises(ci.ParseError) as caught:
        ci.parse("x == 1;\ny <= ;\n", "model.cint")
    assert (caught.value.file, caught.value.line) == ("model.cint", 2)
    assert caught.value.column >= 1
    assert str(caught.value).startswith(f"model.cint:2:{caught.value.column}: ")
    assert isinstance(caught.value, ci.Error) and isinstance(caught.value, ValueError)
