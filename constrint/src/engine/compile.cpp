#include "engine/compile.hpp"

#include "constrint/error.hpp"
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

Bounds join(const std::optional<Bounds>& x, const Bounds& y) {
    if (!x) return y;
    return {std::min(x->lo, y.lo), std::max(x->hi, y.hi)};
}

class Compiler {
  public:
    Compiler(const Model& model, Compiled& out) : model_(model), out_(out), s_(out.store) {}

    VarId var_of(const Expr& term);
    View view_of(const Expr& term);
    // top_level: not inside a disjunction, where a part may be false without failing the model.
    std::unique_ptr<Propagator> relation(const Constraint& c, bool top_level);
    void post(const Constraint& c);

  private:
    VarId constant(const Integer& value);
    VarId aux(const Integer& lo, const Integer& hi) { return s_.new_var(Domain::range(lo, hi)); }
    Bounds bounds(VarId x) const { return {s_.min(x), s_.max(x)}; }
    bool empty(VarId x) const { return s_.dom(x).empty(); }
    VarId division(VarId x, VarId y, bool want_quotient);
    void check_divisor(VarId y, const char* what) const;

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

void Compiler::check_divisor(VarId y, const char* what) const {
    if (s_.dom(y).fixed() && s_.value(y) == 0) {
        throw ModelError(std::string(what) + " by a term whose only value is 0");
    }
}

// x = y * q + r with the remainder r of floor division; returns q or r.
VarId Compiler::division(VarId x, VarId y, bool want_quotient) {
    check_divisor(y, want_quotient ? "division" : "modulo");
    const Bounds a = bounds(x);
    const Integer& y_lo = s_.min(y);
    const Integer& y_hi = s_.max(y);
    std::optional<Bounds> q; // the quotient's bounds over the non-zero parts of y
    if (y_lo < 0) q = join(q, quotient_hull(a, y_lo, std::min(y_hi, Integer(-1))));
    if (y_hi > 0) q = join(q, quotient_hull(a, std::max(y_lo, Integer(1)), y_hi));
    const VarId quotient = aux(q->lo, q->hi);
    const VarId remainder =
        aux(y_lo < 0 ? Integer(y_lo + 1) : Integer(0), y_hi > 0 ? Integer(y_hi - 1) : Integer(0));
    post_division(s_, x, y, quotient, remainder, Rounding::Floor);
    return want_quotient ? quotient : remainder;
}

VarId Compiler::var_of(const Expr& term) {
    const TermNode& n = term.node();
    switch (n.kind) {
    case TermKind::Constant:
        return constant(n.constant);
    case TermKind::Variable:
        model_.check_owned(term);
        return n.variable;
    default:
        break;
    }
    if (auto it = terms_.find(&n); it != terms_.end()) return it->second;

    const VarId x = var_of(Expr(n.a));
    const VarId y = n.b ? var_of(Expr(n.b)) : -1; // -1: unary term
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
            const Bounds p = hull({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi});
            z = aux(p.lo, p.hi);
            s_.add_propagator(std::make_unique<Times>(z, x, y));
            break;
        }
        case TermKind::Pow: {
            const unsigned k = n.exponent;
            if (k == 0) return terms_[&n] = constant(1);
            if (k == 1) return terms_[&n] = x;
            const Integer abs_max = std::max(Integer(-a.lo), a.hi);
            const Integer abs_min = a.lo > 0 ? a.lo : a.hi < 0 ? Integer(-a.hi) : Integer(0);
            z = k % 2 == 1 ? aux(power(a.lo, k), power(a.hi, k)) : aux(power(abs_min, k), power(abs_max, k));
            s_.add_propagator(std::make_unique<Power>(z, x, k));
            break;
        }
        case TermKind::Div:
            z = division(x, y, true);
            break;
        case TermKind::Mod:
            z = division(x, y, false);
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
    terms_.emplace(&n, z);
    return z;
}

// scale * x + offset when the term is affine in one variable (or constant), so relations need no
// auxiliary variable for it; otherwise the term's variable.
std::optional<View> affine(const Expr& term) {
    const TermNode& n = term.node();
    switch (n.kind) {
    case TermKind::Constant:
        return View{-1, 0, n.constant};
    case TermKind::Variable:
        return View{n.variable, 1, 0};
    case TermKind::Neg: {
        auto a = affine(Expr(n.a));
        if (a) a->scale = -a->scale, a->offset = -a->offset;
        return a;
    }
    case TermKind::Add:
    case TermKind::Sub:
    case TermKind::Mul:
        break;
    default:
        return std::nullopt;
    }
    auto a = affine(Expr(n.a)), b = affine(Expr(n.b));
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
        if (top_level) check_divisor(x, "divisibility");
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
    s_.add_propagator(relation(c, true));
}

void collect_variables(const Expr& term, std::set<int>& into) {
    const TermNode& n = term.node();
    if (n.kind == TermKind::Variable) into.insert(n.variable);
    if (n.a) collect_variables(Expr(n.a), into);
    if (n.b) collect_variables(Expr(n.b), into);
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
        model.check_owned(constraints[i].constraint);
        compiler.post(constraints[i].constraint);
        std::set<int> used;
        collect_variables(constraints[i].constraint, used);
        for (int v : used)
            ++out->degree[v];
    }
    if (with_objectives) {
        for (const Objective& o : model.objectives())
            out->objectives.push_back(compiler.var_of(o.term));
    }
    return out;
}

} // namespace constrint::engine
