#include "propagators/relations.hpp"

#include <algorithm>

namespace constrint::engine {

namespace {

// Whether x and y share a value, for views of variables with scale 1 over domains held in words:
// one walk over both interval lists, no domain copied. Nothing when a view is scaled or constant, a
// domain is held in Integers (a congruence, a bound beyond a word), or a bound plus its offset does
// not fit.
std::optional<bool> offset_views_meet(const Store& s, const View& x, const View& y) {
    if (x.constant() || y.constant() || x.scale != 1 || y.scale != 1) return std::nullopt;
    const Domain &x_domain = s.dom(x.var), &y_domain = s.dom(y.var);
    if (!x_domain.in_words() || !y_domain.in_words()) return std::nullopt;
    Word x_offset = 0, y_offset = 0;
    if (!read_word(x.offset, x_offset) || !read_word(y.offset, y_offset)) return std::nullopt;
    const std::vector<WordInterval>&a = x_domain.word_intervals(), &b = y_domain.word_intervals();
    for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
        Word a_lo = 0, a_hi = 0, b_lo = 0, b_hi = 0;
        if (!add_word(a[i].lo, x_offset, a_lo) || !add_word(a[i].hi, x_offset, a_hi) ||
            !add_word(b[j].lo, y_offset, b_lo) || !add_word(b[j].hi, y_offset, b_hi))
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

// The values of a + a_offset outside b + b_offset (interval lists), as ranges in those shifted
// values; false when a bound plus its offset does not fit a word.
bool uncovered(const std::vector<WordInterval>& a, Word a_offset, const std::vector<WordInterval>& b,
               Word b_offset, std::vector<std::pair<Word, Word>>& gaps) {
    gaps.clear();
    std::size_t j = 0;
    Word b_lo = 0, b_hi = 0; // b[j], shifted
    if (!b.empty() && (!add_word(b[0].lo, b_offset, b_lo) || !add_word(b[0].hi, b_offset, b_hi)))
        return false;
    for (const WordInterval& range : a) {
        Word lo = 0, hi = 0;
        if (!add_word(range.lo, a_offset, lo) || !add_word(range.hi, a_offset, hi)) return false;
        while (lo <= hi) {
            while (j < b.size() && b_hi < lo) {
                if (++j < b.size() &&
                    (!add_word(b[j].lo, b_offset, b_lo) || !add_word(b[j].hi, b_offset, b_hi)))
                    return false;
            }
            if (j == b.size() || b_lo > hi) {
                gaps.emplace_back(lo, hi);
                break;
            }
            if (b_lo > lo) gaps.emplace_back(lo, b_lo - 1);
            if (b_hi >= hi) break;
            lo = b_hi + 1;
        }
    }
    return true;
}

// x + a == y + b for two variables held in words, with holes: each side loses its values
// that have no partner on the other, gap by gap (most often one value, removed in place), where
// the general path builds shifted copies of both domains and intersects them (langford: 30% of all
// instructions). Nothing when a view is scaled or constant, or a value does not fit a word.
std::optional<PropStatus> narrow_offset_views(Store& s, const View& x, const View& y,
                                              std::vector<std::pair<Word, Word>>& x_gaps,
                                              std::vector<std::pair<Word, Word>>& y_gaps) {
    if (x.constant() || y.constant() || x.scale != 1 || y.scale != 1 || x.var == y.var) return std::nullopt;
    const Domain &x_domain = s.dom(x.var), &y_domain = s.dom(y.var);
    if (!x_domain.in_words() || !y_domain.in_words()) return std::nullopt;
    Word x_offset = 0, y_offset = 0;
    if (!read_word(x.offset, x_offset) || !read_word(y.offset, y_offset)) return std::nullopt;
    const std::vector<WordInterval>&x_words = x_domain.word_intervals(), &y_words = y_domain.word_intervals();
    if (!uncovered(x_words, x_offset, y_words, y_offset, x_gaps) ||
        !uncovered(y_words, y_offset, x_words, x_offset, y_gaps))
        return std::nullopt;
    // The gaps are shifted values of the variable's own, so taking the offset back off fits a word.
    const auto remove = [&s](VarId var, Word offset, const std::vector<std::pair<Word, Word>>& gaps) {
        for (const auto& [lo, hi] : gaps) {
            if (!(lo == hi ? s.remove(var, Integer(lo - offset))
                           : s.remove_range(var, Integer(lo - offset), Integer(hi - offset))))
                return false;
        }
        return true;
    };
    if (!remove(x.var, x_offset, x_gaps) || !remove(y.var, y_offset, y_gaps)) return PropStatus::Fail;
    // Each side is now the other shifted: fixed together, and then equal.
    return s.fixed(x.var) ? PropStatus::Subsumed : PropStatus::Ok;
}

// A view x + c of a variable whose domain is one range without a congruence.
bool offset_view_of_range(const Store& s, const View& v) {
    if (v.constant() || v.scale != 1) return false;
    const Domain& d = s.dom(v.var);
    return d.interval_count() == 1 && d.modulus() == 1;
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
    } else if (const std::optional<PropStatus> narrowed = narrow_offset_views(s, x_, y_, x_gaps_, y_gaps_)) {
        return *narrowed;
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
