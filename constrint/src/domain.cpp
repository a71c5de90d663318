#include "constrint/domain.hpp"
#include "machine_word.hpp"

#include <algorithm>

namespace constrint {

namespace {

// The congruence tested without an out-of-line cpp_int comparison (it showed in golomb's profile).
[[gnu::always_inline]] inline bool is_one(const Integer& v) {
    Word w = 0;
    return read_word(v, w) && w == 1;
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
    if (lo <= hi) {
        d.in_words_ = false;
        d.intervals_.push_back({lo, hi});
        d.settle();
    }
    return d;
}

Domain Domain::values(std::vector<Integer> values) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    Domain d;
    d.in_words_ = false;
    for (auto& v : values) {
        if (!d.intervals_.empty() && d.intervals_.back().hi + 1 == v) {
            d.intervals_.back().hi = std::move(v);
        } else {
            d.intervals_.push_back({v, v});
        }
    }
    d.settle();
    return d;
}

void Domain::sync_word_bounds() {
    if (words_.empty()) return;
    write_word(min_, words_.front().lo);
    write_word(max_, words_.back().hi);
}

void Domain::to_integers() {
    if (!in_words_) return;
    intervals_.resize(words_.size());
    for (std::size_t i = 0; i < words_.size(); ++i) {
        intervals_[i].lo = words_[i].lo;
        intervals_[i].hi = words_[i].hi;
    }
    words_.clear();
    in_words_ = false;
}

void Domain::settle() {
    if (!in_words_) {
        Word lo = 0, hi = 0;
        // Sorted intervals: when the outer bounds fit a word, every bound does.
        if (intervals_.empty() || (is_one(modulus_) && read_word(intervals_.front().lo, lo) &&
                                   read_word(intervals_.back().hi, hi))) {
            words_.resize(intervals_.size());
            for (std::size_t i = 0; i < intervals_.size(); ++i) {
                read_word(intervals_[i].lo, words_[i].lo);
                read_word(intervals_[i].hi, words_[i].hi);
            }
            intervals_.clear();
            in_words_ = true;
            modulus_ = 1;
            residue_ = 0;
        }
    }
    if (in_words_) sync_word_bounds();
}

void Domain::clear() {
    words_.clear();
    intervals_.clear();
    in_words_ = true;
    if (!is_one(modulus_)) modulus_ = 1, residue_ = 0;
}

template <class Operation> auto Domain::through_integers(Operation operation) {
    to_integers();
    const auto result = operation();
    settle();
    return result;
}

std::vector<Interval> Domain::intervals() const {
    if (!in_words_) return intervals_;
    std::vector<Interval> out;
    out.reserve(words_.size());
    for (const WordInterval& w : words_)
        out.push_back({Integer(w.lo), Integer(w.hi)});
    return out;
}

Integer Domain::size() const {
    // Words first: first-fail branching asks every open variable's size at every node. False when
    // a bound, a difference or the total does not fit.
    const auto count_in_words = [this](Word& total) {
        total = 0;
        if (in_words_) {
            for (const WordInterval& iv : words_) {
                Word span = 0;
                if (!subtract_word(iv.hi, iv.lo, span) || !add_word(total, span, total) ||
                    !add_word(total, 1, total))
                    return false;
            }
            return true;
        }
        Word modulus = 0;
        if (!read_word(modulus_, modulus)) return false;
        for (const Interval& iv : intervals_) {
            Word lo = 0, hi = 0, span = 0;
            if (!read_word(iv.lo, lo) || !read_word(iv.hi, hi) || !subtract_word(hi, lo, span) ||
                !add_word(total, span / modulus, total) || !add_word(total, 1, total))
                return false;
        }
        return true;
    };
    if (Word words = 0; count_in_words(words)) return words;
    Integer total = 0;
    if (in_words_) {
        for (const WordInterval& iv : words_)
            total += Integer(iv.hi) - iv.lo + 1;
        return total;
    }
    if (modulus_ == 1) {
        for (const auto& iv : intervals_)
            total += iv.hi - iv.lo + 1;
    } else {
        for (const auto& iv : intervals_)
            total += (iv.hi - iv.lo) / modulus_ + 1;
    }
    return total;
}

bool Domain::contains_word(Word v) const {
    if (words_.empty() || v < words_.front().lo || v > words_.back().hi) return false;
    if (words_.size() == 1) return true;
    const auto after = std::upper_bound(words_.begin(), words_.end(), v,
                                        [](Word x, const WordInterval& iv) { return x < iv.lo; });
    return std::prev(after)->hi >= v;
}

bool Domain::contains(const Integer& v) const {
    if (in_words_) {
        Word w = 0;
        return read_word(v, w) && contains_word(w);
    }
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
    if (!is_one(modulus_)) modulus_ = 1, residue_ = 0;
    if (Word w = 0; read_word(v, w)) {
        intervals_.clear();
        in_words_ = true;
        words_.resize(1);
        words_[0] = {w, w};
        sync_word_bounds();
        return;
    }
    words_.clear();
    in_words_ = false;
    intervals_.resize(1);
    intervals_[0].lo = v;
    intervals_[0].hi = v;
}

void Domain::assign_word_intervals(const std::vector<WordInterval>& intervals) {
    if (!in_words_ || words_.empty() || intervals.empty()) {
        words_ = intervals;
        intervals_.clear();
        in_words_ = true;
        if (!is_one(modulus_)) modulus_ = 1, residue_ = 0;
        sync_word_bounds();
        return;
    }
    // Most restores undo one narrowing: a bound Integer is written only when its word changed.
    const Word old_min = words_.front().lo, old_max = words_.back().hi;
    words_ = intervals; // reuses the buffer when it is large enough
    if (words_.front().lo != old_min) write_word(min_, words_.front().lo);
    if (words_.back().hi != old_max) write_word(max_, words_.back().hi);
}

bool Domain::restrict_min(const Integer& lo) {
    if (empty() || compare(lo, min()) <= 0) return false;
    if (compare(lo, max()) > 0) {
        clear();
        return true;
    }
    if (in_words_) { // min() < lo <= max(): lo is a word
        Word w = 0;
        read_word(lo, w);
        restrict_min_inside(w);
        return true;
    }
    auto first = std::find_if(intervals_.begin(), intervals_.end(),
                              [&](const Interval& iv) { return compare(iv.hi, lo) >= 0; });
    intervals_.erase(intervals_.begin(), first);
    // Without a congruence the new bound is lo itself: assigned in place, no temporary.
    if (compare(intervals_.front().lo, lo) < 0) {
        if (is_one(modulus_)) {
            intervals_.front().lo = lo;
        } else {
            intervals_.front().lo = round_up(lo, modulus_, residue_);
        }
    }
    if (fixed()) modulus_ = 1, residue_ = 0;
    settle(); // the bounds may fit words now
    return true;
}

void Domain::restrict_min_inside(std::int64_t lo) {
    if (!in_words_) {
        restrict_min(Integer(lo));
        return;
    }
    auto first = words_.begin(); // intervals ending below lo go; one ends at max() >= lo
    while (first->hi < lo)
        ++first;
    words_.erase(words_.begin(), first);
    if (words_.front().lo < lo) words_.front().lo = lo;
    write_word(min_, words_.front().lo);
}

void Domain::restrict_max_inside(std::int64_t hi) {
    if (!in_words_) {
        restrict_max(Integer(hi));
        return;
    }
    auto last = words_.end(); // intervals starting above hi go; one starts at min() <= hi
    while (std::prev(last)->lo > hi)
        --last;
    words_.erase(last, words_.end());
    if (words_.back().hi > hi) words_.back().hi = hi;
    write_word(max_, words_.back().hi);
}

bool Domain::contains_inside(std::int64_t v) const {
    return in_words_ ? contains_word(v) : contains(Integer(v));
}

void Domain::remove_inside(std::int64_t v) {
    if (in_words_)
        remove_word(v);
    else
        remove(Integer(v));
}

bool Domain::remove_word(Word v) {
    if (words_.empty() || v < words_.front().lo || v > words_.back().hi) return false;
    auto it = std::prev(std::upper_bound(words_.begin(), words_.end(), v,
                                         [](Word x, const WordInterval& iv) { return x < iv.lo; }));
    if (it->hi < v) return false;
    const bool at_min = v == words_.front().lo, at_max = v == words_.back().hi;
    // v + 1 is computed only when v < it->hi, v - 1 only when v > it->lo: both are words then.
    if (it->lo == v && it->hi == v) {
        words_.erase(it);
    } else if (it->lo == v) {
        it->lo = v + 1;
    } else if (it->hi == v) {
        it->hi = v - 1;
    } else {
        const WordInterval upper{v + 1, it->hi};
        it->hi = v - 1;
        words_.insert(std::next(it), upper);
    }
    if (at_min && !words_.empty()) write_word(min_, words_.front().lo);
    if (at_max && !words_.empty()) write_word(max_, words_.back().hi);
    return true;
}

bool Domain::restrict_max(const Integer& hi) {
    if (empty() || compare(hi, max()) >= 0) return false;
    if (compare(hi, min()) < 0) {
        clear();
        return true;
    }
    if (in_words_) { // min() <= hi < max(): hi is a word
        Word w = 0;
        read_word(hi, w);
        restrict_max_inside(w);
        return true;
    }
    auto last = std::find_if(intervals_.rbegin(), intervals_.rend(),
                             [&](const Interval& iv) { return compare(iv.lo, hi) <= 0; });
    intervals_.erase(last.base(), intervals_.end());
    if (compare(intervals_.back().hi, hi) > 0) {
        if (is_one(modulus_)) {
            intervals_.back().hi = hi;
        } else {
            intervals_.back().hi = round_down(hi, modulus_, residue_);
        }
    }
    if (fixed()) modulus_ = 1, residue_ = 0;
    settle(); // the bounds may fit words now
    return true;
}

bool Domain::remove(const Integer& v) {
    if (in_words_) {
        Word w = 0;
        return read_word(v, w) && remove_word(w);
    }
    // contains(v), keeping the interval it finds.
    if (intervals_.empty() || compare(v, min()) < 0 || compare(v, max()) > 0) return false;
    if (!is_one(modulus_) && floor_mod(v - residue_, modulus_) != 0) return false;
    auto it = std::upper_bound(intervals_.begin(), intervals_.end(), v,
                               [](const Integer& x, const Interval& iv) { return compare(x, iv.lo) < 0; });
    if (it == intervals_.begin() || compare(std::prev(it)->hi, v) < 0) return false;
    --it;
    const bool at_lo = compare(it->lo, v) == 0, at_hi = compare(it->hi, v) == 0;
    if (at_lo && at_hi) {
        intervals_.erase(it);
    } else if (at_lo) {
        it->lo += modulus_;
    } else if (at_hi) {
        it->hi -= modulus_;
    } else {
        Interval upper{v + modulus_, std::move(it->hi)};
        it->hi = v - modulus_;
        intervals_.insert(std::next(it), std::move(upper));
    }
    if (intervals_.empty() || fixed()) modulus_ = 1, residue_ = 0;
    settle(); // the bounds may fit words now
    return true;
}

bool Domain::remove_range(const Integer& lo, const Integer& hi) {
    if (empty() || lo > hi || hi < min() || lo > max()) return false;
    return through_integers([&] { return remove_range_of_integers(lo, hi); });
}

bool Domain::remove_range_of_integers(const Integer& lo, const Integer& hi) {
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
    if (empty() || modulus == 1) return false;
    return through_integers([&] { return restrict_congruence_of_integers(modulus, residue); });
}

bool Domain::restrict_congruence_of_integers(const Integer& modulus, const Integer& residue) {
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
    if (empty()) return false;
    if (other.empty()) {
        clear();
        return true;
    }
    if (in_words_ && other.in_words_) {
        // The pairwise overlaps of two canonical lists are canonical: changed when they differ.
        std::vector<WordInterval> result;
        const auto& b = other.words_;
        for (std::size_t i = 0, j = 0; i < words_.size() && j < b.size();) {
            const Word lo = std::max(words_[i].lo, b[j].lo), hi = std::min(words_[i].hi, b[j].hi);
            if (lo <= hi) result.push_back({lo, hi});
            if (words_[i].hi < b[j].hi) {
                ++i;
            } else {
                ++j;
            }
        }
        if (result == words_) return false;
        words_ = std::move(result);
        sync_word_bounds();
        return true;
    }
    const Integer before = size();
    if (!is_one(other.modulus_)) restrict_congruence(other.modulus_, other.residue_);
    const std::vector<Interval> b = other.intervals();
    through_integers([&] {
        std::vector<Interval> result;
        std::size_t i = 0, j = 0;
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
        return true;
    });
    return empty() || size() != before;
}

Domain Domain::shifted(const Integer& offset) const {
    Domain d = *this;
    d.to_integers();
    for (auto& iv : d.intervals_) {
        iv.lo += offset;
        iv.hi += offset;
    }
    d.residue_ = floor_mod(residue_ + offset, modulus_);
    d.settle();
    return d;
}

Domain Domain::negated() const {
    Domain d;
    d.in_words_ = false;
    const std::vector<Interval> source = intervals();
    d.intervals_.reserve(source.size());
    for (auto it = source.rbegin(); it != source.rend(); ++it)
        d.intervals_.push_back({-it->hi, -it->lo});
    d.modulus_ = modulus_;
    d.residue_ = floor_mod(-residue_, modulus_);
    d.settle();
    return d;
}

Domain Domain::scaled(const Integer& factor) const {
    if (factor < 0) return negated().scaled(-factor);
    if (factor == 0) return empty() ? Domain() : single(0);
    if (factor == 1 || empty()) return *this;
    Domain d = *this;
    d.to_integers();
    for (auto& iv : d.intervals_) {
        iv.lo *= factor;
        iv.hi *= factor;
    }
    if (!d.fixed()) {
        d.modulus_ = modulus_ * factor;
        d.residue_ = residue_ * factor;
    }
    d.settle();
    return d;
}

Domain Domain::divided_exactly(const Integer& divisor) const {
    if (divisor < 0) return negated().divided_exactly(-divisor);
    if (divisor == 1 || empty()) return *this;
    Domain d = *this;
    d.restrict_congruence(divisor, 0);
    if (d.empty()) return d;
    d.to_integers();
    for (auto& iv : d.intervals_) {
        iv.lo /= divisor;
        iv.hi /= divisor;
    }
    if (d.modulus_ != 1) {
        d.modulus_ /= divisor;
        d.residue_ /= divisor;
    }
    d.settle();
    return d;
}

std::optional<Integer> Domain::next_at_least(const Integer& v) const {
    if (in_words_) {
        if (words_.empty() || compare(v, max_) > 0) return std::nullopt;
        if (compare(v, min_) <= 0) return min_;
        Word w = 0;
        read_word(v, w); // between the bounds
        auto it =
            std::find_if(words_.begin(), words_.end(), [&](const WordInterval& iv) { return iv.hi >= w; });
        return Integer(std::max(it->lo, w));
    }
    auto it =
        std::find_if(intervals_.begin(), intervals_.end(), [&](const Interval& iv) { return iv.hi >= v; });
    if (it == intervals_.end()) return std::nullopt;
    return it->lo >= v ? it->lo : round_up(v, modulus_, residue_);
}

std::optional<Integer> Domain::prev_at_most(const Integer& v) const {
    if (in_words_) {
        if (words_.empty() || compare(v, min_) < 0) return std::nullopt;
        if (compare(v, max_) >= 0) return max_;
        Word w = 0;
        read_word(v, w);
        auto it =
            std::find_if(words_.rbegin(), words_.rend(), [&](const WordInterval& iv) { return iv.lo <= w; });
        return Integer(std::min(it->hi, w));
    }
    auto it =
        std::find_if(intervals_.rbegin(), intervals_.rend(), [&](const Interval& iv) { return iv.lo <= v; });
    if (it == intervals_.rend()) return std::nullopt;
    return it->hi <= v ? it->hi : round_down(v, modulus_, residue_);
}

bool Domain::operator==(const Domain& other) const {
    if (in_words_ && other.in_words_) return words_ == other.words_;
    if (!in_words_ && !other.in_words_ && modulus_ == other.modulus_ && residue_ == other.residue_)
        return intervals_ == other.intervals_;
    const Integer n = size();
    if (n != other.size()) return false;
    Domain common = *this;
    common.intersect(other);
    return common.size() == n;
}

std::string Domain::to_string() const {
    std::string s = "{";
    const std::vector<Interval> all = intervals();
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (i > 0) s += ", ";
        s += all[i].lo.str();
        if (all[i].hi != all[i].lo) s += ".." + all[i].hi.str();
    }
    s += "}";
    if (modulus_ != 1) s += " mod " + modulus_.str() + " = " + residue_.str();
    return s;
}

} // namespace constrint
