"""ConstrINT: an integer constraint solver with exact integers of any size.

    import constrint as ci
    m = ci.Model()
    x = m.int_var("x", 1, 2**70)
    m += x % 16 == 0
    result = ci.solve(m)
"""
from ._core import (  # noqa: F401
    Constraint, CountResult, Error, Expr, FileError, Model, ModelError, ParseError, Result, Solution, SolutionIterator,
    Stats, Var, count, divides, explain, load, max, member, min, parse, solve, solve_all,
)
