#include "constrint/constraint.hpp"
#include "constrint/error.hpp"
#include "constrint/expr.hpp"
#include "model/term_walk.hpp"

namespace constrint {

namespace {

struct DivisionByZero {};

Integer eval(const TermNode& root, const std::vector<Integer>& values) {
    return detail::fold_term<Integer>(
        root,
        [&](const TermNode& n) -> std::optional<Integer> {
            if (n.kind == TermKind::Constant) return n.constant;
            if (n.kind != TermKind::Variable) return std::nullopt;
            if (n.variable < 0 || static_cast<std::size_t>(n.variable) >= values.size()) {
                throw ModelError("no value for variable '" + n.name + "'");
            }
            return values[n.variable];
        },
        [](const TermNode& n, std::span<Integer> v) -> Integer {
            switch (n.kind) {
            case TermKind::Neg:
                return -v[0];
            case TermKind::Abs:
                return abs(v[0]);
            case TermKind::Pow:
                return power(v[0], n.exponent);
            default:
                break;
            }
            const Integer &a = v[0], &b = v[1];
            switch (n.kind) {
            case TermKind::Add:
                return a + b;
            case TermKind::Sub:
                return a - b;
            case TermKind::Mul:
                return a * b;
            case TermKind::Div:
                if (b == 0) throw DivisionByZero{};
                return floor_div(a, b);
            case TermKind::Mod:
                if (b == 0) throw DivisionByZero{};
                return floor_mod(a, b);
            case TermKind::Min:
                return std::min(a, b);
            case TermKind::Max:
                return std::max(a, b);
            default:
                throw ModelError(std::string("cannot evaluate term kind ") + to_string(n.kind));
            }
        });
}

// Evaluates every part (no short cut) so that a division by zero anywhere is seen.
bool holds(const ConstraintNode& n, const std::vector<Integer>& values) {
    if (n.relation == Relation::Or || n.relation == Relation::And) {
        bool any = false, all = true;
        for (const Constraint& part : n.parts) {
            const bool h = holds(part.node(), values);
            any = any || h;
            all = all && h;
        }
        return n.relation == Relation::Or ? any : all;
    }
    const Integer a = eval(n.lhs->node(), values);
    if (n.relation == Relation::In) return n.set.contains(a);
    const Integer b = eval(n.rhs->node(), values);
    switch (n.relation) {
    case Relation::Eq:
        return a == b;
    case Relation::Ne:
        return a != b;
    case Relation::Le:
        return a <= b;
    case Relation::Lt:
        return a < b;
    case Relation::Ge:
        return a >= b;
    case Relation::Gt:
        return a > b;
    case Relation::Divides:
        if (a == 0) throw DivisionByZero{}; // false for the whole constraint, as a term a / 0
        return b % a == 0;
    default:
        return false;
    }
}

} // namespace

Integer evaluate(const Expr& term, const std::vector<Integer>& values) {
    try {
        return eval(term.node(), values);
    } catch (const DivisionByZero&) {
        throw ModelError("division by zero while evaluating a term");
    }
}

bool satisfied(const Constraint& constraint, const std::vector<Integer>& values) {
    try {
        return holds(constraint.node(), values);
    } catch (const DivisionByZero&) {
        return false;
    }
}

} // namespace constrint
