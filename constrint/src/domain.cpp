#include "constrint/domain.hpp"
#include "machine_word.hpp"

#include <algorithm>

namespace constrint {

namespace {

// The hot narrowings test the congruence and store bounds through these: a cpp_int compared with 1 or
// copied is an out-of-line call (the copy a memcpy as well), which showed in golomb's profile.
// Inlined: called once or twice in every narrowing, where the calls themselves showed (golomb: 2.6%).
[[gnu::always_inline]] inline bool is_one(const Integer& v) {
    Word w = 0;
    return read_word(v, w) && w == 1;
}
[[gnu::always_inline]] inline void assign_bound(Integer& bound, const Integer& v) {
    if (Word w = 0; read_word(v, w)) {
        write_word(bound, w); // a word is stored in place, no limbs copied
    } else {
        bound = v;
    }
}

// The smallest value >= v with value = residue (mod modulus).
Integer round_up(const Integer& v, const Integer& modulus, const Integer& residue) {
    if (modulus == 1) return v;
    return v + floor_mod(residue - v, modulus);
}

// The largest value <= v with value = residue (mod modulus).
Integer round_down(const Integer& v, const Integer& modulus, const Integer& residue) {
    if (modulus == 1) return v;
    return v - floor_mod(v - residue, modulus);
}

} // namespace

Domain Domain::range(const Integer& lo, const Integer& hi) {
    Domain d;
    if (lo <= hi) d.intervals_.push_back({lo, hi});
    return d;
}

Domain Domain::values(std::vector<Integer> values) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    Domain d;
    for (auto& v : values) {
        if (!d.intervals_.empty() && d.intervals_.back().hi + 1 == v) {
            d.intervals_.back().hi = std::move(v);
        } else {
            d.intervals_.push_back({v, v});
        }
    }
    return d;
}

namespace {
// The number of values of d in machine words; false when a bound, a difference or the total does not fit.
bool size_in_words(const Domain& d, Word& total) {
    Word modulus = 0;
    if (!read_word(d.modulus(), modulus)) return false;
    total = 0;
    for (const Interval& iv : d.intervals()) {
        Word lo = 0, hi = 0, span = 0;
        if (!read_word(iv.lo, lo) || !read_word(iv.hi, hi) || !subtract_word(hi, lo, span) ||
            !add_word(total, span / modulus, total) || !add_word(total, 1, total))
            return false;
    }
    return true;
}
} // namespace

Integer Domain::size() const {
    // Words first: first-fail branching asks every open variable's size at every node.
    if (Word words = 0; size_in_words(*this, words)) return words;
    Integer total = 0;
    if (modulus_ == 1) {
        for (const auto& iv : intervals_)
            total += iv.hi - iv.lo + 1;
    } else {
        for (const auto& iv : intervals_)
            total += (iv.hi - iv.lo) / modulus_ + 1;
    }
    return total;
}

bool Domain::contains(const Integer& v) const {
    if (intervals_.empty() || compare(v, min()) < 0 || compare(v, max()) > 0) return false;
    if (!is_one(modulus_) && floor_mod(v - residue_, modulus_) != 0) return false;
    if (intervals_.size() == 1) return true;
    auto it = std::upper_bound(intervals_.begin(), intervals_.end(), v,
                               [](const Integer& x, const Interval& iv) { return compare(x, iv.lo) < 0; });
    return it != intervals_.begin() && compare(std::prev(it)->hi, v) >= 0;
}

void Domain::normalize() {
    std::size_t out = 0;
    for (std::size_t i = 0; i < intervals_.size(); ++i) {
        Interval iv = std::move(intervals_[i]);
        if (modulus_ != 1) {
            iv.lo = round_up(iv.lo, modulus_, residue_);
            iv.hi = round_down(iv.hi, modulus_, residue_);
        }
        if (iv.lo > iv.hi) continue;
        if (out > 0 && iv.lo - intervals_[out - 1].hi <= modulus_) {
            if (iv.hi > intervals_[out - 1].hi) intervals_[out - 1].hi = std::move(iv.hi);
        } else {
            intervals_[out++] = std::move(iv);
        }
    }
    intervals_.resize(out);
    if (intervals_.empty() || fixed()) {
        modulus_ = 1;
        residue_ = 0;
    }
}

void Domain::assign(const Integer& v) {
    intervals_.resize(1);
    intervals_[0].lo = v;
    intervals_[0].hi = v;
    modulus_ = 1;
    residue_ = 0;
}

void Domain::assign_word_intervals(const std::int64_t* bounds, std::size_t count) {
    intervals_.resize(count);
    // A bound that holds its value already is left alone: most restores undo one changed interval,
    // and a word assigned to an Integer is an out-of-line resize of its limbs.
    const auto restore = [](Integer& bound, std::int64_t value) {
        if (Word now = 0; !read_word(bound, now) || now != value) write_word(bound, value);
    };
    for (std::size_t i = 0; i < count; ++i) {
        restore(intervals_[i].lo, bounds[2 * i]);
        restore(intervals_[i].hi, bounds[2 * i + 1]);
    }
    modulus_ = 1;
    residue_ = 0;
}

bool Domain::restrict_min(const Integer& lo) {
    if (intervals_.empty() || compare(lo, min()) <= 0) return false;
    if (compare(lo, max()) > 0) {
        *this = Domain();
        return true;
    }
    auto first = std::find_if(intervals_.begin(), intervals_.end(),
                              [&](const Interval& iv) { return compare(iv.hi, lo) >= 0; });
    intervals_.erase(intervals_.begin(), first);
    // Without a congruence the new bound is lo itself: assigned in place, no temporary.
    if (compare(intervals_.front().lo, lo) < 0) {
        if (is_one(modulus_)) {
            assign_bound(intervals_.front().lo, lo);
        } else {
            intervals_.front().lo = round_up(lo, modulus_, residue_);
        }
    }
    if (fixed()) modulus_ = 1, residue_ = 0;
    return true;
}

void Domain::restrict_min_inside(std::int64_t lo) {
    // Every interval bound is a word here, so read_word succeeds; intervals ending below lo go.
    std::size_t first = 0;
    for (Word end = 0; read_word(intervals_[first].hi, end) && end < lo;)
        ++first;
    intervals_.erase(intervals_.begin(), intervals_.begin() + static_cast<std::ptrdiff_t>(first));
    Integer& front = intervals_.front().lo;
    if (Word start = 0; read_word(front, start) && start < lo) {
        if (is_one(modulus_))
            write_word(front, lo);
        else
            front = round_up(Integer(lo), modulus_, residue_);
    }
    if (fixed()) modulus_ = 1, residue_ = 0;
}

namespace {
// The interval that may hold v (the last one starting at or below v), for a domain of word bounds
// with min() <= v.
std::vector<Interval>::const_iterator interval_at_most(const std::vector<Interval>& intervals, Word v) {
    const auto after =
        std::upper_bound(intervals.begin(), intervals.end(), v, [](Word x, const Interval& iv) {
            Word start = 0;
            return read_word(iv.lo, start) && x < start;
        });
    return std::prev(after);
}
} // namespace

bool Domain::contains_inside(std::int64_t v) const {
    if (!is_one(modulus_)) return contains(Integer(v));
    Word end = 0;
    return read_word(interval_at_most(intervals_, v)->hi, end) && v <= end;
}

void Domain::remove_inside(std::int64_t v) {
    if (!is_one(modulus_)) {
        remove(Integer(v));
        return;
    }
    const auto it = intervals_.begin() + (interval_at_most(intervals_, v) - intervals_.begin());
    Word start = 0, end = 0;
    read_word(it->lo, start);
    read_word(it->hi, end);
    // v lies strictly inside a word range here, so v - 1 and v + 1 are words where they are stored.
    if (start == v && end == v) {
        intervals_.erase(it);
    } else if (start == v) {
        write_word(it->lo, v + 1);
    } else if (end == v) {
        write_word(it->hi, v - 1);
    } else {
        Interval upper{Integer(v + 1), std::move(it->hi)};
        write_word(it->hi, v - 1);
        intervals_.insert(std::next(it), std::move(upper));
    }
    if (fixed()) modulus_ = 1, residue_ = 0;
}

void Domain::restrict_max_inside(std::int64_t hi) {
    std::size_t last = intervals_.size();
    for (Word start = 0; read_word(intervals_[last - 1].lo, start) && start > hi;)
        --last;
    intervals_.resize(last);
    Integer& back = intervals_.back().hi;
    if (Word end = 0; read_word(back, end) && end > hi) {
        if (is_one(modulus_))
            write_word(back, hi);
        else
            back = round_down(Integer(hi), modulus_, residue_);
    }
    if (fixed()) modulus_ = 1, residue_ = 0;
}

bool Domain::restrict_max(const Integer& hi) {
    if (intervals_.empty() || compare(hi, max()) >= 0) return false;
    if (compare(hi, min()) < 0) {
        *this = Domain();
        return true;
    }
    auto last = std::find_if(intervals_.rbegin(), intervals_.rend(),
                             [&](const Interval& iv) { return compare(iv.lo, hi) <= 0; });
    intervals_.erase(last.base(), intervals_.end());
    if (compare(intervals_.back().hi, hi) > 0) {
        if (is_one(modulus_)) {
            assign_bound(intervals_.back().hi, hi);
        } else {
            intervals_.back().hi = round_down(hi, modulus_, residue_);
        }
    }
    if (fixed()) modulus_ = 1, residue_ = 0;
    return true;
}

bool Domain::remove(const Integer& v) {
    // contains(v), keeping the interval it finds.
    if (intervals_.empty() || compare(v, min()) < 0 || compare(v, max()) > 0) return false;
    if (!is_one(modulus_) && floor_mod(v - residue_, modulus_) != 0) return false;
    auto it = std::upper_bound(intervals_.begin(), intervals_.end(), v,
                               [](const Integer& x, const Interval& iv) { return compare(x, iv.lo) < 0; });
    if (it == intervals_.begin() || compare(std::prev(it)->hi, v) < 0) return false;
    --it;
    const bool at_lo = compare(it->lo, v) == 0, at_hi = compare(it->hi, v) == 0;
    // Without a congruence, v's neighbours v - 1 and v + 1 are stored as words when they are words
    // (checked: next to 2^63 - 1 or -2^63 they are not).
    Word w = 0, below = 0, above = 0;
    const bool unit_word = is_one(modulus_) && read_word(v, w);
    const bool below_word = unit_word && subtract_word(w, 1, below);
    const bool above_word = unit_word && add_word(w, 1, above);
    if (at_lo && at_hi) {
        intervals_.erase(it);
    } else if (at_lo) {
        if (above_word)
            it->lo = above;
        else
            it->lo += modulus_;
    } else if (at_hi) {
        if (below_word)
            it->hi = below;
        else
            it->hi -= modulus_;
    } else {
        Interval upper{above_word ? Integer(above) : Integer(v + modulus_), std::move(it->hi)};
        if (below_word)
            it->hi = below;
        else
            it->hi = v - modulus_;
        intervals_.insert(std::next(it), std::move(upper));
    }
    if (intervals_.empty() || fixed()) modulus_ = 1, residue_ = 0;
    return true;
}

bool Domain::remove_range(const Integer& lo, const Integer& hi) {
    if (intervals_.empty() || lo > hi || hi < min() || lo > max()) return false;
    const Integer before = size();
    std::vector<Interval> kept;
    kept.reserve(intervals_.size() + 1);
    for (auto& iv : intervals_) {
        if (iv.hi < lo || iv.lo > hi) {
            kept.push_back(std::move(iv));
            continue;
        }
        if (iv.lo < lo) kept.push_back({iv.lo, lo - 1});
        if (iv.hi > hi) kept.push_back({hi + 1, iv.hi});
    }
    intervals_ = std::move(kept);
    normalize();
    return size() != before;
}

bool Domain::restrict_congruence(const Integer& modulus, const Integer& residue) {
    if (intervals_.empty() || modulus == 1) return false;
    const Integer m2 = modulus < 0 ? Integer(-modulus) : modulus;
    const Integer r2 = floor_mod(residue, m2);
    if (fixed()) {
        if (floor_mod(value() - r2, m2) == 0) return false;
        *this = Domain();
        return true;
    }
    // Chinese remaindering of (modulus_, residue_) and (m2, r2).
    const Integer g = gcd(modulus_, m2);
    if ((r2 - residue_) % g != 0) {
        *this = Domain();
        return true;
    }
    const Integer combined = modulus_ / g * m2;
    if (combined == modulus_) return false; // the new congruence is implied
    const Integer before = size();
    const Integer step = m2 / g;
    const Integer k = floor_mod((r2 - residue_) / g * mod_inverse(modulus_ / g, step), step);
    residue_ = floor_mod(residue_ + modulus_ * k, combined);
    modulus_ = combined;
    normalize();
    return intervals_.empty() || size() != before; // a finer congruence may remove no value
}

bool Domain::intersect(const Domain& other) {
    if (intervals_.empty()) return false;
    if (other.intervals_.empty()) {
        *this = Domain();
        return true;
    }
    const Integer before = size();
    if (other.modulus_ != 1) restrict_congruence(other.modulus_, other.residue_);
    std::vector<Interval> result;
    std::size_t i = 0, j = 0;
    const auto& b = other.intervals_;
    while (i < intervals_.size() && j < b.size()) {
        const Integer& lo = std::max(intervals_[i].lo, b[j].lo);
        const Integer& hi = std::min(intervals_[i].hi, b[j].hi);
        if (lo <= hi) result.push_back({lo, hi});
        if (intervals_[i].hi < b[j].hi) {
            ++i;
        } else {
            ++j;
        }
    }
    intervals_ = std::move(result);
    normalize();
    return intervals_.empty() || size() != before;
}

Domain Domain::shifted(const Integer& offset) const {
    Domain d = *this;
    for (auto& iv : d.intervals_) {
        iv.lo += offset;
        iv.hi += offset;
    }
    d.residue_ = floor_mod(residue_ + offset, modulus_);
    return d;
}

Domain Domain::negated() const {
    Domain d;
    d.intervals_.reserve(intervals_.size());
    for (auto it = intervals_.rbegin(); it != intervals_.rend(); ++it)
        d.intervals_.push_back({-it->hi, -it->lo});
    d.modulus_ = modulus_;
    d.residue_ = floor_mod(-residue_, modulus_);
    return d;
}

Domain Domain::scaled(const Integer& factor) const {
    if (factor < 0) return negated().scaled(-factor);
    if (factor == 0) return intervals_.empty() ? Domain() : single(0);
    if (factor == 1 || intervals_.empty()) return *this;
    Domain d = *this;
    for (auto& iv : d.intervals_) {
        iv.lo *= factor;
        iv.hi *= factor;
    }
    if (!d.fixed()) {
        d.modulus_ = modulus_ * factor;
        d.residue_ = residue_ * factor;
    }
    return d;
}

Domain Domain::divided_exactly(const Integer& divisor) const {
    if (divisor < 0) return negated().divided_exactly(-divisor);
    if (divisor == 1 || intervals_.empty()) return *this;
    Domain d = *this;
    d.restrict_congruence(divisor, 0);
    if (d.empty()) return d;
    for (auto& iv : d.intervals_) {
        iv.lo /= divisor;
        iv.hi /= divisor;
    }
    if (d.modulus_ != 1) {
        d.modulus_ /= divisor;
        d.residue_ /= divisor;
    }
    return d;
}

std::optional<Integer> Domain::next_at_least(const Integer& v) const {
    auto it =
        std::find_if(intervals_.begin(), intervals_.end(), [&](const Interval& iv) { return iv.hi >= v; });
    if (it == intervals_.end()) return std::nullopt;
    return it->lo >= v ? it->lo : round_up(v, modulus_, residue_);
}

std::optional<Integer> Domain::prev_at_most(const Integer& v) const {
    auto it =
        std::find_if(intervals_.rbegin(), intervals_.rend(), [&](const Interval& iv) { return iv.lo <= v; });
    if (it == intervals_.rend()) return std::nullopt;
    return it->hi <= v ? it->hi : round_down(v, modulus_, residue_);
}

bool Domain::operator==(const Domain& other) const {
    if (modulus_ == other.modulus_ && residue_ == other.residue_) return intervals_ == other.intervals_;
    const Integer n = size();
    if (n != other.size()) return false;
    Domain common = *this;
    common.intersect(other);
    return common.size() == n;
}

std::string Domain::to_string() const {
    std::string s = "{";
    for (std::size_t i = 0; i < intervals_.size(); ++i) {
        if (i > 0) s += ", ";
        s += intervals_[i].lo.str();
        if (intervals_[i].hi != intervals_[i].lo) s += ".." + intervals_[i].hi.str();
    }
    s += "}";
    if (modulus_ != 1) s += " mod " + modulus_.str() + " = " + residue_.str();
    return s;
}

} // namespace constrint
