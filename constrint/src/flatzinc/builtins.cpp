// The FlatZinc builtins of integer and Boolean models, each as ConstrINT propagators.
#include "flatzinc/builder.hpp"

#include "propagators/all_different.hpp"
#include "propagators/arithmetic.hpp"
#include "propagators/clause.hpp"
#include "propagators/count.hpp"
#include "propagators/element.hpp"
#include "propagators/linear.hpp"
#include "propagators/reified.hpp"
#include "propagators/relations.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

namespace constrint::flatzinc {

namespace {

using engine::VarId;
using PropagatorPtr = std::unique_ptr<engine::Propagator>;
// A constraint and its negation, for the plain, _reif and _imp forms.
using Relation = std::pair<PropagatorPtr, PropagatorPtr>;
using Args = std::vector<Node>;

void expect_args(Builder& b, const ConstraintItem& c, std::size_t count, std::size_t offset = 0) {
    if (c.args.size() != count + offset) {
        b.fail(c.pos, c.name + " expects " + std::to_string(count + offset) + " arguments, found " +
                          std::to_string(c.args.size()));
    }
}

engine::View view(Builder& b, const Node& n) {
    const Ref r = b.ref(n);
    if (!r.var) return engine::View{-1, 0, r.constant};
    return engine::View{*r.var, 1, 0};
}

template <class P, class... A> PropagatorPtr make(A&&... args) {
    return std::make_unique<P>(std::forward<A>(args)...);
}

Relation equal(Builder& b, const Args& a) {
    return {make<engine::Equal>(view(b, a[0]), view(b, a[1])),
            make<engine::NotEqual>(view(b, a[0]), view(b, a[1]))};
}
Relation not_equal(Builder& b, const Args& a) {
    Relation r = equal(b, a);
    return {std::move(r.second), std::move(r.first)};
}
Relation less_equal(Builder& b, const Args& a) {
    return {make<engine::LessEqual>(view(b, a[0]), view(b, a[1]), Integer(0)),
            make<engine::LessEqual>(view(b, a[1]), view(b, a[0]), Integer(1))};
}
Relation less(Builder& b, const Args& a) {
    return {make<engine::LessEqual>(view(b, a[0]), view(b, a[1]), Integer(1)),
            make<engine::LessEqual>(view(b, a[1]), view(b, a[0]), Integer(0))};
}

// sum(coefficients[i] * vars[i]) relation rhs, with constants folded into the right-hand side and
// a variable right-hand side (bool_lin_eq) moved to the left.
struct LinearSum {
    std::vector<engine::LinearTerm> terms;
    Integer rhs;
};

LinearSum linear_sum(Builder& b, const Node& coefficients, const Node& vars, const Node& rhs) {
    const std::vector<Integer> as = b.constants(coefficients);
    const std::vector<Ref> xs = b.refs(vars);
    if (as.size() != xs.size()) {
        b.fail(coefficients.pos, "linear constraint with " + std::to_string(as.size()) +
                                     " coefficients but " + std::to_string(xs.size()) + " variables");
    }
    LinearSum sum;
    std::map<VarId, Integer> merged; // a variable listed twice gets one term
    std::vector<VarId> order;
    for (std::size_t i = 0; i < as.size(); ++i) {
        if (as[i] == 0) continue;
        if (!xs[i].var) {
            sum.rhs -= as[i] * xs[i].constant;
            continue;
        }
        auto [it, inserted] = merged.emplace(*xs[i].var, as[i]);
        if (inserted)
            order.push_back(*xs[i].var);
        else
            it->second += as[i];
    }
    const Ref r = b.ref(rhs);
    if (r.var) {
        auto [it, inserted] = merged.emplace(*r.var, Integer(-1));
        if (inserted)
            order.push_back(*r.var);
        else
            it->second -= 1;
    } else {
        sum.rhs += r.constant;
    }
    for (VarId x : order) {
        if (merged[x] != 0) sum.terms.push_back({merged[x], x});
    }
    return sum;
}

LinearSum negated(LinearSum sum) {
    for (auto& t : sum.terms)
        t.coefficient = -t.coefficient;
    sum.rhs = -sum.rhs;
    return sum;
}

PropagatorPtr linear(const LinearSum& sum, engine::LinearRelation relation) {
    return make<engine::Linear>(sum.terms, relation, sum.rhs);
}

// A sum of at most two terms, one with coefficient +-1, as two views: a*x + b*y (rel) c becomes
// x (rel) (c - b*y) / a, so that ==, != and <= on views serve (no Linear, no auxiliary variable).
// `lhs` is x's view, `rhs` the other side; with a == -1 the sides swap for <=.
struct ViewPair {
    engine::View lhs, rhs;
    bool swapped = false; // a == -1: the relation reads rhs (rel) lhs for <=
};

std::optional<ViewPair> as_views(const LinearSum& sum) {
    const auto& t = sum.terms;
    if (t.empty() || t.size() > 2) return std::nullopt;
    std::size_t unit = t.size();
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i].coefficient == 1 || t[i].coefficient == -1) unit = i;
    }
    if (unit == t.size()) return std::nullopt;
    const bool positive = t[unit].coefficient == 1;
    // x = (c - b*y) / a: for a = 1 that is -b*y + c, for a = -1 it is b*y - c.
    engine::View other{-1, 0, positive ? sum.rhs : Integer(-sum.rhs)};
    if (t.size() == 2) {
        const engine::LinearTerm& y = t[1 - unit];
        other.var = y.var;
        other.scale = positive ? Integer(-y.coefficient) : y.coefficient;
    }
    return ViewPair{engine::View{t[unit].var, 1, 0}, std::move(other), !positive};
}

Relation linear_eq(Builder& b, const Args& a) {
    const LinearSum sum = linear_sum(b, a[0], a[1], a[2]);
    if (const auto views = as_views(sum)) {
        return {make<engine::Equal>(views->lhs, views->rhs), make<engine::NotEqual>(views->lhs, views->rhs)};
    }
    return {linear(sum, engine::LinearRelation::Eq), linear(sum, engine::LinearRelation::Ne)};
}
Relation linear_ne(Builder& b, const Args& a) {
    Relation r = linear_eq(b, a);
    return {std::move(r.second), std::move(r.first)};
}
// not (sum <= c)  <=>  -sum <= -c - 1.
Relation linear_le(Builder& b, const Args& a) {
    const LinearSum sum = linear_sum(b, a[0], a[1], a[2]);
    if (const auto views = as_views(sum)) {
        // x <= rhs (or rhs <= x when a == -1), and its negation with the sides exchanged.
        const engine::View& low = views->swapped ? views->rhs : views->lhs;
        const engine::View& high = views->swapped ? views->lhs : views->rhs;
        return {make<engine::LessEqual>(low, high, Integer(0)),
                make<engine::LessEqual>(high, low, Integer(1))};
    }
    LinearSum above = negated(sum);
    above.rhs -= 1;
    return {linear(sum, engine::LinearRelation::Le), linear(above, engine::LinearRelation::Le)};
}

// The values of x's current hull outside `set`.
Domain complement(Builder& b, VarId x, const Domain& set) {
    const engine::Store& s = b.store();
    if (s.dom(x).empty()) return {}; // `var 5..3: x`: the model has no solution, nothing is outside
    Domain outside = Domain::range(s.min(x), s.max(x));
    if (set.modulus() == 1) {
        for (const Interval& i : set.intervals())
            outside.remove_range(i.lo, i.hi);
        return outside;
    }
    for (const Interval& i : set.intervals()) {
        for (Integer v = i.lo; v <= i.hi; v += set.modulus())
            outside.remove(v);
    }
    return outside;
}

Relation set_in(Builder& b, const Args& a) {
    const VarId x = b.var(a[0]);
    const Domain set = b.set(a[1]);
    if (set.modulus() != 1 && set.size() > 100000)
        b.fail(a[1].pos, "set_in_reif over a set with more than 100000 gaps");
    return {make<engine::Member>(x, set), make<engine::Member>(x, complement(b, x, set))};
}

// The relations with plain, _reif and _imp forms, and their arity without the Boolean.
struct Reifiable {
    std::size_t arity;
    std::function<Relation(Builder&, const Args&)> make;
};

const std::map<std::string, Reifiable, std::less<>>& reifiable() {
    static const std::map<std::string, Reifiable, std::less<>> table{
        {"int_eq", {2, equal}},         {"int_ne", {2, not_equal}},      {"int_le", {2, less_equal}},
        {"int_lt", {2, less}},          {"bool_eq", {2, equal}},         {"bool_le", {2, less_equal}},
        {"bool_lt", {2, less}},         {"int_lin_eq", {3, linear_eq}},  {"int_lin_ne", {3, linear_ne}},
        {"int_lin_le", {3, linear_le}}, {"bool_lin_eq", {3, linear_eq}}, {"bool_lin_le", {3, linear_le}},
        {"set_in", {2, set_in}},
    };
    return table;
}

Integer magnitude_bound(const engine::Store& s, VarId x) {
    if (s.dom(x).empty()) return 0;
    return std::max(Integer(-s.min(x)), s.max(x));
}

// int_div(x, y, q) and int_mod(x, y, r): x = y * q + r with truncated division.
void truncated_division(Builder& b, const ConstraintItem& c, bool want_quotient) {
    expect_args(b, c, 3);
    const VarId x = b.var(c.args[0]), y = b.var(c.args[1]), result = b.var(c.args[2]);
    const Integer x_bound = magnitude_bound(b.store(), x), y_bound = magnitude_bound(b.store(), y);
    const VarId q = want_quotient ? result : b.new_var(-x_bound, x_bound);
    const VarId r = want_quotient ? b.new_var(-(y_bound - 1), y_bound - 1) : result;
    engine::post_division(b.store(), x, y, q, r, engine::Rounding::Truncate);
}

void int_pow(Builder& b, const ConstraintItem& c) {
    expect_args(b, c, 3);
    const VarId base = b.var(c.args[0]), result = b.var(c.args[2]);
    const Ref exponent = b.ref(c.args[1]);
    if (exponent.var) return b.post(make<engine::PowerVariable>(result, base, *exponent.var));
    if (exponent.constant < 0) b.fail(c.args[1].pos, "int_pow with a negative exponent is not supported");
    if (exponent.constant > 1 << 16) b.fail(c.args[1].pos, "int_pow exponent above 65536");
    const unsigned k = static_cast<unsigned>(exponent.constant);
    if (k == 0) return b.post(make<engine::Equal>(engine::View{result, 1, 0}, engine::View{-1, 0, 1}));
    if (k == 1) return b.post(make<engine::Equal>(engine::View{result, 1, 0}, engine::View{base, 1, 0}));
    b.post(make<engine::Power>(result, base, k));
}

void clause(Builder& b, std::vector<VarId> positive, std::vector<VarId> negative) {
    b.post(make<engine::Clause>(std::move(positive), std::move(negative)));
}

// r <-> (a_1 and ... and a_n), or with `conjunction` false r <-> (a_1 or ... or a_n).
void bool_array(Builder& b, const std::vector<VarId>& as, VarId r, bool conjunction) {
    const engine::Store& s = b.store();
    const bool fixed = s.fixed(r);
    if (conjunction) {
        if (!fixed || s.value(r) == 1) {
            for (VarId a : as)
                clause(b, {a}, {r}); // r -> a
        }
        if (!fixed || s.value(r) == 0) {
            clause(b, {r}, as); // (all a) -> r
        }
    } else {
        if (!fixed || s.value(r) == 1) clause(b, as, {r}); // r -> some a
        if (!fixed || s.value(r) == 0) {
            for (VarId a : as)
                clause(b, {r}, {a}); // a -> r
        }
    }
}

// bool_and(a, b, r) / bool_or(a, b, r) and array_bool_and(as, r) / array_bool_or(as, r).
void bool_pair(Builder& b, const ConstraintItem& c, bool conjunction) {
    expect_args(b, c, 3);
    bool_array(b, {b.var(c.args[0]), b.var(c.args[1])}, b.var(c.args[2]), conjunction);
}
void bool_list(Builder& b, const ConstraintItem& c, bool conjunction) {
    expect_args(b, c, 2);
    bool_array(b, b.vars(c.args[0]), b.var(c.args[1]), conjunction);
}

// int_min / int_max (a, b, result).
void min_max(Builder& b, const ConstraintItem& c, bool is_max) {
    expect_args(b, c, 3);
    b.post(make<engine::MinMax>(b.var(c.args[2]), b.var(c.args[0]), b.var(c.args[1]), is_max));
}

// array_{int,bool}_element and array_var_{int,bool}_element (index, array, result), 1-based.
void element_constant(Builder& b, const ConstraintItem& c) {
    expect_args(b, c, 3);
    b.post(make<engine::ElementConstant>(b.var(c.args[0]), b.constants(c.args[1]), b.var(c.args[2]),
                                         Integer(1)));
}
void element_variable(Builder& b, const ConstraintItem& c) {
    expect_args(b, c, 3);
    b.post(make<engine::ElementVariable>(b.var(c.args[0]), b.vars(c.args[1]), b.var(c.args[2]), Integer(1)));
}

using Poster = std::function<void(Builder&, const ConstraintItem&)>;

const std::map<std::string, Poster, std::less<>>& posters() {
    static const std::map<std::string, Poster, std::less<>> table{
        {"int_plus",
         [](Builder& b, const ConstraintItem& c) {
             expect_args(b, c, 3);
             b.post(make<engine::Plus>(b.var(c.args[2]), b.var(c.args[0]), b.var(c.args[1])));
         }},
        {"int_times",
         [](Builder& b, const ConstraintItem& c) {
             expect_args(b, c, 3);
             b.post(make<engine::Times>(b.var(c.args[2]), b.var(c.args[0]), b.var(c.args[1])));
         }},
        {"int_div", [](Builder& b, const ConstraintItem& c) { truncated_division(b, c, true); }},
        {"int_mod", [](Builder& b, const ConstraintItem& c) { truncated_division(b, c, false); }},
        {"int_abs",
         [](Builder& b, const ConstraintItem& c) {
             expect_args(b, c, 2);
             b.post(make<engine::Absolute>(b.var(c.args[1]), b.var(c.args[0])));
         }},
        {"int_min", [](Builder& b, const ConstraintItem& c) { min_max(b, c, false); }},
        {"int_max", [](Builder& b, const ConstraintItem& c) { min_max(b, c, true); }},
        {"int_pow", int_pow},
        {"array_int_element", element_constant},
        {"array_var_int_element", element_variable},
        {"bool2int",
         [](Builder& b, const ConstraintItem& c) {
             expect_args(b, c, 2);
             b.post(make<engine::Equal>(view(b, c.args[0]), view(b, c.args[1])));
         }},
        {"bool_not",
         [](Builder& b, const ConstraintItem& c) {
             expect_args(b, c, 2);
             b.post(make<engine::NotEqual>(view(b, c.args[0]), view(b, c.args[1])));
         }},
        {"bool_and", [](Builder& b, const ConstraintItem& c) { bool_pair(b, c, true); }},
        {"bool_or", [](Builder& b, const ConstraintItem& c) { bool_pair(b, c, false); }},
        {"bool_xor",
         [](Builder& b, const ConstraintItem& c) {
             if (c.args.size() == 2)
                 return b.post(make<engine::NotEqual>(view(b, c.args[0]), view(b, c.args[1])));
             expect_args(b, c, 3); // r <-> a != b
             b.post(make<engine::Reified>(b.var(c.args[2]),
                                          make<engine::NotEqual>(view(b, c.args[0]), view(b, c.args[1])),
                                          make<engine::Equal>(view(b, c.args[0]), view(b, c.args[1])),
                                          engine::Reified::Mode::Equivalence));
         }},
        {"bool_clause",
         [](Builder& b, const ConstraintItem& c) {
             expect_args(b, c, 2);
             clause(b, b.vars(c.args[0]), b.vars(c.args[1]));
         }},
        {"array_bool_and", [](Builder& b, const ConstraintItem& c) { bool_list(b, c, true); }},
        {"array_bool_or", [](Builder& b, const ConstraintItem& c) { bool_list(b, c, false); }},
        {"array_bool_xor",
         [](Builder& b, const ConstraintItem& c) {
             expect_args(b, c, 1);
             b.post(make<engine::OddParity>(b.vars(c.args[0])));
         }},
        {"array_bool_element", element_constant},
        {"array_var_bool_element", element_variable},
        {"constrint_all_different_int",
         [](Builder& b, const ConstraintItem& c) {
             expect_args(b, c, 1);
             b.post(make<engine::AllDifferent>(b.vars(c.args[0])));
         }},
        {"constrint_count_eq",
         [](Builder& b, const ConstraintItem& c) {
             expect_args(b, c, 3);
             std::vector<VarId> vars = b.vars(c.args[0]);
             const Ref value = b.ref(c.args[1]);
             const VarId count = b.var(c.args[2]);
             if (!value.var) b.note_count(vars, value.constant, count);
             b.post(make<engine::Count>(std::move(vars), b.var(c.args[1]), count));
         }},
    };
    return table;
}

} // namespace

bool is_builtin(std::string_view name) {
    if (posters().count(name) || reifiable().count(name)) return true;
    for (const std::string_view suffix : {std::string_view("_reif"), std::string_view("_imp")}) {
        if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix &&
            reifiable().count(name.substr(0, name.size() - suffix.size())))
            return true;
    }
    return false;
}

// A top-level int_le(x, y) or int_lt(x, y) says x <= y at every node: the product x * y narrows by
// integer roots then (Times, issue 24).
void note_order(Builder& b, const ConstraintItem& c) {
    if (c.name != "int_le" && c.name != "int_lt") return;
    const Ref x = b.ref(c.args[0]), y = b.ref(c.args[1]);
    if (x.var && y.var) b.store().note_order(*x.var, *y.var);
}

void post_builtin(Builder& b, const ConstraintItem& c) {
    if (auto it = posters().find(c.name); it != posters().end()) return it->second(b, c);
    if (auto it = reifiable().find(c.name); it != reifiable().end()) {
        expect_args(b, c, it->second.arity);
        note_order(b, c);
        return b.post(std::move(it->second.make(b, c.args).first));
    }
    for (const auto& [suffix, mode] :
         {std::pair{std::string_view("_reif"), engine::Reified::Mode::Equivalence},
          std::pair{std::string_view("_imp"), engine::Reified::Mode::Implication}}) {
        const std::string_view name = c.name;
        if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) continue;
        auto it = reifiable().find(name.substr(0, name.size() - suffix.size()));
        if (it == reifiable().end()) break;
        expect_args(b, c, it->second.arity, 1);
        const VarId r = b.var(c.args.back());
        Relation relation = it->second.make(b, c.args);
        return b.post(make<engine::Reified>(r, std::move(relation.first), std::move(relation.second), mode));
    }
    if (c.name.rfind("float_", 0) == 0 || c.name.rfind("set_", 0) == 0 ||
        c.name.rfind("array_float", 0) == 0 || c.name.rfind("array_set", 0) == 0) {
        b.fail(c.pos, "'" + c.name + "': float and set constraints are not supported by ConstrINT");
    }
    b.fail(c.pos, "unknown constraint '" + c.name + "'");
}

} // namespace constrint::flatzinc
