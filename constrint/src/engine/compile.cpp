#include "engine/compile.hpp"

#include "constrint/error.hpp"
#include "model/term_walk.hpp"
#include "propagators/arithmetic.hpp"
#include "propagators/logic.hpp"
#include "propagators/relations.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace constrint::engine {

namespace {

struct Bounds {
    Integer lo, hi;
};

Bounds hull(std::initializer_list<Integer> values) {
    return {std::min(values), std::max(values)};
}

// The hull of floor(a / b) over a in [a.lo, a.hi] and b in [b_lo, b_hi] of one sign.
Bounds quotient_hull(const Bounds& a, const Integer& b_lo, const Integer& b_hi) {
    return hull({floor_div(a.lo, b_lo), floor_div(a.lo, b_hi), floor_div(a.hi, b_lo), floor_div(a.hi, b_hi)});
}

// A term that cannot be posted, with the term (its position when read from a file).
struct TermError {
    const TermNode* term;
    std::string message;
};

// A term divided by (or taken modulo) a term whose only value is 0: the constraint holding it is
// false for every assignment (docs/model-format.md, "Division by zero"), so it is not posted and
// the model is unsatisfiable. A message remains for an objective, which has no constraint to fail.
struct DivisorOnlyZero {
    const TermNode* term;
    std::string message;
};

std::uint64_t bits_of(const Integer& v) {
    return v == 0 ? 1 : boost::multiprecision::msb(abs(v)) + 1;
}

// Refuses a term whose values could need more bits than the budget (kMaxTermBits, or
// kMaxConstantBits for a term without variables).
void check_size(const TermNode& n, std::uint64_t bits) {
    const std::uint64_t limit = n.model == 0 ? kMaxConstantBits : kMaxTermBits;
    if (bits > limit) {
        throw TermError{&n, "term too large: its values could need " + std::to_string(bits) +
                                " bits, more than the limit of " + std::to_string(limit) + " bits"};
    }
}

Bounds join(const std::optional<Bounds>& x, const Bounds& y) {
    if (!x) return y;
    return {std::min(x->lo, y.lo), std::max(x->hi, y.hi)};
}

class Compiler {
  public:
    Compiler(const Model& model, Compiled& out) : model_(model), out_(out), s_(out.store) {}

    VarId var_of(const Expr& term);
    // The auxiliary variable of a compound term whose operands are x and y (-1 for unary terms).
    VarId compound(const TermNode& n, VarId x, VarId y);
    View view_of(const Expr& term);
    // top_level: not inside a disjunction, where a part may be false without failing the model.
    std::unique_ptr<Propagator> relation(const Constraint& c, bool top_level);
    void post(const Constraint& c);

  private:
    void note_order(const Constraint& c);
    VarId constant(const Integer& value);
    VarId aux(const Integer& lo, const Integer& hi) { return s_.new_var(Domain::range(lo, hi)); }
    Bounds bounds(VarId x) const { return {s_.min(x), s_.max(x)}; }
    bool empty(VarId x) const { return s_.dom(x).empty(); }
    VarId division(const TermNode& n, VarId x, VarId y, bool want_quotient);
    void check_divisor(const TermNode* n, VarId y, const char* what) const;
    void check_variable(const TermNode& n) const;

    const Model& model_;
    Compiled& out_;
    Store& s_;
    std::map<const TermNode*, VarId> terms_;
    std::map<Integer, VarId> constants_;
};

VarId Compiler::constant(const Integer& value) {
    auto it = constants_.find(value);
    if (it != constants_.end()) return it->second;
    const VarId x = s_.new_var(Domain::single(value));
    constants_.emplace(value, x);
    return x;
}

void Compiler::check_divisor(const TermNode* n, VarId y, const char* what) const {
    if (s_.dom(y).fixed() && s_.value(y) == 0)
        throw DivisorOnlyZero{n, std::string(what) + " by a term whose only value is 0"};
}

void Compiler::check_variable(const TermNode& n) const {
    if (n.model != model_.id()) throw ModelError("the term uses variables of another model");
    if (n.variable < 0 || n.variable >= static_cast<int>(model_.variables().size())) {
        throw ModelError("variable '" + n.name + "' does not belong to this model");
    }
}

// x = y * q + r with the remainder r of floor division; returns q or r.
VarId Compiler::division(const TermNode& n, VarId x, VarId y, bool want_quotient) {
    check_divisor(&n, y, want_quotient ? "division" : "modulo");
    const Bounds a = bounds(x);
    const Integer y_lo = s_.min(y); // copies: aux() below adds a variable, which may move the store's
    const Integer y_hi = s_.max(y); // variables (and the bounds they hold inline)
    std::optional<Bounds> q;        // the quotient's bounds over the non-zero parts of y
    if (y_lo < 0) q = join(q, quotient_hull(a, y_lo, std::min(y_hi, Integer(-1))));
    if (y_hi > 0) q = join(q, quotient_hull(a, std::max(y_lo, Integer(1)), y_hi));
    const VarId quotient = aux(q->lo, q->hi);
    const VarId remainder =
        aux(y_lo < 0 ? Integer(y_lo + 1) : Integer(0), y_hi > 0 ? Integer(y_hi - 1) : Integer(0));
    post_division(s_, x, y, quotient, remainder, Rounding::Floor);
    return want_quotient ? quotient : remainder;
}

VarId Compiler::var_of(const Expr& term) {
    return detail::fold_term<VarId>(
        term.node(),
        [&](const TermNode& n) -> std::optional<VarId> {
            if (n.kind == TermKind::Constant) return constant(n.constant);
            if (n.kind == TermKind::Variable) {
                check_variable(n);
                return n.variable;
            }
            if (auto it = terms_.find(&n); it != terms_.end()) return it->second;
            return std::nullopt;
        },
        [&](const TermNode& n, std::span<VarId> operands) {
            const VarId z = compound(n, operands[0], operands.size() > 1 ? operands[1] : -1);
            terms_.emplace(&n, z);
            return z;
        });
}

VarId Compiler::compound(const TermNode& n, VarId x, VarId y) {
    VarId z;
    if (empty(x) || (y >= 0 && empty(y))) {
        z = s_.new_var(Domain()); // an operand has no value: so has the term
        out_.failed = true;
    } else {
        const Bounds a = bounds(x);
        switch (n.kind) {
        case TermKind::Add: {
            const Bounds b = bounds(y);
            z = aux(a.lo + b.lo, a.hi + b.hi);
            s_.add_propagator(std::make_unique<Plus>(z, x, y));
            break;
        }
        case TermKind::Sub: { // z = x - y  <=>  x = z + y
            const Bounds b = bounds(y);
            z = aux(a.lo - b.hi, a.hi - b.lo);
            s_.add_propagator(std::make_unique<Plus>(x, z, y));
            break;
        }
        case TermKind::Neg: { // z = -x  <=>  0 = z + x
            z = aux(-a.hi, -a.lo);
            s_.add_propagator(std::make_unique<Plus>(constant(0), z, x));
            break;
        }
        case TermKind::Mul: {
            const Bounds b = bounds(y);
            check_size(n, std::max(bits_of(a.lo), bits_of(a.hi)) + std::max(bits_of(b.lo), bits_of(b.hi)));
            const Bounds p = hull({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi});
            z = aux(p.lo, p.hi);
            if (x == y) { // x * x is x^2: integer roots instead of creeping quotients (issue 24)
                s_.add_propagator(std::make_unique<Power>(z, x, 2));
                break;
            }
            s_.add_propagator(std::make_unique<Times>(z, x, y));
            break;
        }
        case TermKind::Pow: {
            const unsigned k = n.exponent;
            if (k == 0) return constant(1);
            if (k == 1) return x;
            const Integer abs_max = std::max(Integer(-a.lo), a.hi);
            const Integer abs_min = a.lo > 0 ? a.lo : a.hi < 0 ? Integer(-a.hi) : Integer(0);
            if (abs_max > 1) check_size(n, bits_of(abs_max) * k);
            z = k % 2 == 1 ? aux(power(a.lo, k), power(a.hi, k)) : aux(power(abs_min, k), power(abs_max, k));
            s_.add_propagator(std::make_unique<Power>(z, x, k));
            break;
        }
        case TermKind::Div:
            z = division(n, x, y, true);
            break;
        case TermKind::Mod:
            z = division(n, x, y, false);
            break;
        case TermKind::Abs: {
            const Integer abs_max = std::max(Integer(-a.lo), a.hi);
            z = aux(a.lo > 0 ? a.lo : a.hi < 0 ? Integer(-a.hi) : Integer(0), abs_max);
            s_.add_propagator(std::make_unique<Absolute>(z, x));
            break;
        }
        case TermKind::Min:
        case TermKind::Max: {
            const Bounds b = bounds(y);
            const bool is_max = n.kind == TermKind::Max;
            z = is_max ? aux(std::max(a.lo, b.lo), std::max(a.hi, b.hi))
                       : aux(std::min(a.lo, b.lo), std::min(a.hi, b.hi));
            s_.add_propagator(std::make_unique<MinMax>(z, x, y, is_max));
            break;
        }
        default:
            throw ModelError(std::string("unsupported term kind ") + to_string(n.kind));
        }
    }
    if (!empty(z)) check_size(n, std::max(bits_of(s_.min(z)), bits_of(s_.max(z))));
    return z;
}

// scale * x + offset when the term is affine in one variable (or constant), so relations need no
// auxiliary variable for it; otherwise the term's variable.
std::optional<View> affine(const Expr& term) {
    using Affine = std::optional<View>;
    return detail::fold_term<Affine>(
        term.node(),
        [](const TermNode& n) -> std::optional<Affine> {
            switch (n.kind) {
            case TermKind::Constant:
                return Affine(View{-1, 0, n.constant});
            case TermKind::Variable:
                return Affine(View{n.variable, 1, 0});
            case TermKind::Neg:
            case TermKind::Add:
            case TermKind::Sub:
            case TermKind::Mul:
                return std::nullopt; // from its operands
            default:
                return Affine(std::nullopt);
            }
        },
        [](const TermNode& n, std::span<Affine> operands) -> Affine {
            Affine a = operands[0];
            if (n.kind == TermKind::Neg) {
                if (a) a->scale = -a->scale, a->offset = -a->offset;
                return a;
            }
            Affine b = operands[1];
            if (!a || !b || (!a->constant() && !b->constant())) return std::nullopt;
            if (n.kind == TermKind::Mul) {
                View& v = a->constant() ? *b : *a;
                const Integer c = a->constant() ? a->offset : b->offset;
                if (c == 0) return View{-1, 0, 0};
                v.scale *= c;
                v.offset *= c;
                return v;
            }
            if (n.kind == TermKind::Sub) b->scale = -b->scale, b->offset = -b->offset;
            View& v = a->constant() ? *b : *a;
            v.offset += a->constant() ? a->offset : b->offset;
            return v;
        });
}

View Compiler::view_of(const Expr& term) {
    model_.check_owned(term);
    if (auto v = affine(term)) {
        if (v->constant()) v->scale = 0;
        return *v;
    }
    return View{var_of(term), 1, 0};
}

std::unique_ptr<Propagator> Compiler::relation(const Constraint& c, bool top_level) {
    const ConstraintNode& n = c.node();
    if (n.relation == Relation::Or || n.relation == Relation::And) {
        std::vector<std::unique_ptr<Propagator>> parts;
        for (const Constraint& part : n.parts)
            parts.push_back(relation(part, false));
        if (n.relation == Relation::Or) return std::make_unique<Or>(std::move(parts));
        return std::make_unique<And>(std::move(parts));
    }
    switch (n.relation) {
    case Relation::Eq:
        return std::make_unique<Equal>(view_of(*n.lhs), view_of(*n.rhs));
    case Relation::Ne:
        return std::make_unique<NotEqual>(view_of(*n.lhs), view_of(*n.rhs));
    case Relation::Le:
        return std::make_unique<LessEqual>(view_of(*n.lhs), view_of(*n.rhs), 0);
    case Relation::Lt:
        return std::make_unique<LessEqual>(view_of(*n.lhs), view_of(*n.rhs), 1);
    case Relation::Ge:
        return std::make_unique<LessEqual>(view_of(*n.rhs), view_of(*n.lhs), 0);
    case Relation::Gt:
        return std::make_unique<LessEqual>(view_of(*n.rhs), view_of(*n.lhs), 1);
    default:
        break;
    }
    const VarId x = var_of(*n.lhs);
    if (n.relation == Relation::In) return std::make_unique<Member>(x, n.set);
    const VarId y = var_of(*n.rhs);
    switch (n.relation) {
    case Relation::Divides:
        // Like a term a / b or mod(a, b), divisibility requires a non-zero divisor of the whole
        // constraint, inside a disjunction too (docs/model-format.md, "Division by zero"): so
        // `mod(x, y) == 0`, rewritten into divides(y, x), means what `mod(x, y) == 1 - 1` does.
        check_divisor(&n.lhs->node(), x, "divisibility");
        if (!top_level) s_.add_propagator(std::make_unique<NotEqual>(View{x, 1, 0}, View{-1, 0, 0}));
        return std::make_unique<Divides>(x, y);
    default:
        throw ModelError(std::string("unsupported relation ") + to_string(n.relation));
    }
}

void Compiler::post(const Constraint& c) {
    if (c.relation() == Relation::And) {
        for (const Constraint& part : c.node().parts)
            post(part);
        return;
    }
    note_order(c);
    s_.add_propagator(relation(c, true));
}

// A top-level x + a <= y + b (or <, >=, >) with a >= b between two variables says x <= y at every
// node, which lets the product x * y narrow by integer roots (Times).
void Compiler::note_order(const Constraint& c) {
    const ConstraintNode& n = c.node();
    const bool less = n.relation == Relation::Le || n.relation == Relation::Lt;
    if (!less && n.relation != Relation::Ge && n.relation != Relation::Gt) return;
    const View low = view_of(less ? *n.lhs : *n.rhs), high = view_of(less ? *n.rhs : *n.lhs);
    const bool strict = n.relation == Relation::Lt || n.relation == Relation::Gt;
    if (low.constant() || high.constant() || low.scale != 1 || high.scale != 1) return;
    if (low.offset + (strict ? 1 : 0) >= high.offset) s_.note_order(low.var, high.var);
}

void collect_variables(const Expr& term, std::set<int>& into) {
    detail::for_each_node(term.node(), [&](const TermNode& n) {
        if (n.kind == TermKind::Variable) into.insert(n.variable);
    });
}

// A ModelError at the term (or, without its position, the constraint) where it arose, when the
// model was read from a file.
[[noreturn]] void fail_at(const Origin& origin, const TermNode* term, const std::string& message) {
    if (origin.file.empty()) throw ModelError(message);
    if (term && term->line > 0) throw LocatedModelError(origin.file, term->line, term->column, message);
    throw LocatedModelError(origin.file, origin.line, origin.column, message);
}

void collect_variables(const Constraint& c, std::set<int>& into) {
    const ConstraintNode& n = c.node();
    if (n.lhs) collect_variables(*n.lhs, into);
    if (n.rhs) collect_variables(*n.rhs, into);
    for (const Constraint& part : n.parts)
        collect_variables(part, into);
}

} // namespace

std::unique_ptr<Compiled> compile(const Model& model, const std::vector<bool>& active, bool with_objectives) {
    auto out = std::make_unique<Compiled>();
    for (const VariableInfo& v : model.variables()) {
        if (v.domain.empty()) out->failed = true;
        out->store.new_var(v.domain);
    }
    out->user_vars = static_cast<int>(model.variables().size());
    out->degree.assign(model.variables().size(), 0);
    Compiler compiler(model, *out);
    const auto& constraints = model.constraints();
    for (std::size_t i = 0; i < constraints.size(); ++i) {
        if (!active.empty() && !active[i]) continue;
        try {
            model.check_owned(constraints[i].constraint);
            compiler.post(constraints[i].constraint);
        } catch (const DivisorOnlyZero&) {
            out->failed = true; // the constraint is false; its parts posted before stay harmless
        } catch (const TermError& e) {
            fail_at(constraints[i].origin, e.term, e.message);
        } catch (const LocatedModelError&) {
            throw;
        } catch (const ModelError& e) {
            fail_at(constraints[i].origin, nullptr, e.what());
        }
        std::set<int> used;
        collect_variables(constraints[i].constraint, used);
        for (int v : used)
            ++out->degree[v];
    }
    if (with_objectives) {
        for (const Objective& o : model.objectives()) {
            try {
                out->objectives.push_back(compiler.var_of(o.term));
            } catch (const TermError& e) {
                fail_at(o.origin, e.term, e.message);
            } catch (const DivisorOnlyZero& e) {
                fail_at(o.origin, e.term, e.message);
            }
        }
    }
    return out;
}

} // namespace constrint::engine
