#include "propagators/relations.hpp"

#include <algorithm>

namespace constrint::engine {

namespace {

// Whether x and y share a value, for views of variables with scale 1 over domains without a
// congruence: one walk over both interval lists in machine words, no domain copied. Nothing when a
// view is scaled or constant, a domain has a congruence, or a bound plus its offset does not fit.
std::optional<bool> offset_views_meet(const Store& s, const View& x, const View& y) {
    if (x.constant() || y.constant() || x.scale != 1 || y.scale != 1) return std::nullopt;
    const Domain &x_domain = s.dom(x.var), &y_domain = s.dom(y.var);
    if (x_domain.modulus() != 1 || y_domain.modulus() != 1) return std::nullopt;
    Word x_offset = 0, y_offset = 0;
    if (!read_word(x.offset, x_offset) || !read_word(y.offset, y_offset)) return std::nullopt;
    const auto shifted = [](const Integer& bound, Word offset, Word& out) {
        Word w = 0;
        return read_word(bound, w) && add_word(w, offset, out);
    };
    const std::vector<Interval>&a = x_domain.intervals(), &b = y_domain.intervals();
    for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
        Word a_lo = 0, a_hi = 0, b_lo = 0, b_hi = 0;
        if (!shifted(a[i].lo, x_offset, a_lo) || !shifted(a[i].hi, x_offset, a_hi) ||
            !shifted(b[j].lo, y_offset, b_lo) || !shifted(b[j].hi, y_offset, b_hi))
            return std::nullopt;
        if (std::max(a_lo, b_lo) <= std::min(a_hi, b_hi)) return true;
        if (a_hi < b_hi) {
            ++i;
        } else {
            ++j;
        }
    }
    return false;
}

// A view x + c of a variable whose domain is one range without a congruence.
bool offset_view_of_range(const Store& s, const View& v) {
    if (v.constant() || v.scale != 1) return false;
    const Domain& d = s.dom(v.var);
    return d.intervals().size() == 1 && d.modulus() == 1;
}

} // namespace

PropStatus Equal::propagate(Store& s) {
    if (x_.fixed(s) && y_.fixed(s))
        return x_.value(s) == y_.value(s) ? PropStatus::Subsumed : PropStatus::Fail;
    // One side fixed (x == c, most reified equalities): the other is assigned, no domain copied.
    if (x_.fixed(s)) return y_.assign(s, x_.value(s)) ? PropStatus::Subsumed : PropStatus::Fail;
    if (y_.fixed(s)) return x_.assign(s, y_.value(s)) ? PropStatus::Subsumed : PropStatus::Fail;
    // Two ranges (x == y + c in most models) meet in a range: narrowing the bounds is the whole
    // intersection, without building the shifted domains.
    if (offset_view_of_range(s, x_) && offset_view_of_range(s, y_)) {
        if (!x_.set_min(s, y_.min(s)) || !x_.set_max(s, y_.max(s)) || !y_.set_min(s, x_.min(s)) ||
            !y_.set_max(s, x_.max(s)))
            return PropStatus::Fail;
    } else if (x_.identity() && y_.identity()) {
        if (!s.intersect(x_.var, s.dom(y_.var)) || !s.intersect(y_.var, s.dom(x_.var)))
            return PropStatus::Fail;
    } else if (!x_.intersect(s, y_.domain(s)) || !y_.intersect(s, x_.domain(s))) {
        return PropStatus::Fail;
    }
    return settle(entailment(s)); // both sides may view one variable (x + 1 == x)
}

Entailment Equal::entailment(const Store& s) const {
    if (variable_is_constant_) {
        const Domain& d = s.dom(x_.constant() ? y_.var : x_.var);
        if (!d.contains(x_.constant() ? x_.offset : y_.offset)) return Entailment::False;
        return d.fixed() ? Entailment::True : Entailment::Unknown;
    }
    if (x_.fixed(s) && y_.fixed(s)) return x_.value(s) == y_.value(s) ? Entailment::True : Entailment::False;
    if (x_.max(s) < y_.min(s) || y_.max(s) < x_.min(s)) return Entailment::False;
    if (x_.fixed(s)) return y_.contains(s, x_.value(s)) ? Entailment::Unknown : Entailment::False;
    if (y_.fixed(s)) return x_.contains(s, y_.value(s)) ? Entailment::Unknown : Entailment::False;
    if (const std::optional<bool> meet = offset_views_meet(s, x_, y_))
        return *meet ? Entailment::Unknown : Entailment::False;
    Domain common = x_.domain(s);
    common.intersect(y_.domain(s));
    return common.empty() ? Entailment::False : Entailment::Unknown;
}

} // namespace constrint::engine
