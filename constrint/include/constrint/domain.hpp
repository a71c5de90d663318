// The set of values a variable may still take: sorted disjoint intervals under one congruence.
#pragma once

#include "constrint/integer.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace constrint {

struct Interval {
    Integer lo;
    Integer hi;
    bool operator==(const Interval&) const = default;
};

// An interval whose bounds fit a machine word (-2^63 to 2^63 - 1).
struct WordInterval {
    std::int64_t lo;
    std::int64_t hi;
    bool operator==(const WordInterval&) const = default;
};

// A domain is {v : v in one of the intervals and v = residue (mod modulus)}.
// The congruence makes divisibility exact on huge ranges: `x % 16 == 0` on [1, 2^40] is the
// interval [16, 2^40] under 0 mod 16, no value enumerated.
// Canonical form (so that equal sets compare equal): every interval's bounds satisfy the
// congruence, intervals are sorted, and consecutive intervals are separated by at least one
// missing congruent value. A fixed domain has modulus 1.
// Representation, chosen per domain after every change: without a congruence and with every bound
// within a machine word (almost every domain of a model), the intervals are WordIntervals, so that
// narrowing, trailing and restoring move plain words, no cpp_int element constructed, moved or
// resized (golomb 9: 14% fewer instructions); otherwise they are Integers. Both represent the same
// set the same way, so the choice is never visible through the Integer accessors.
class Domain {
  public:
    Domain() = default; // the empty domain
    static Domain range(const Integer& lo, const Integer& hi);
    static Domain values(std::vector<Integer> values);
    static Domain single(const Integer& value) { return range(value, value); }

    bool empty() const { return in_words_ ? words_.empty() : intervals_.empty(); }
    [[gnu::always_inline]] bool fixed() const {
        if (in_words_) return words_.size() == 1 && words_[0].lo == words_[0].hi;
        return intervals_.size() == 1 && compare(intervals_[0].lo, intervals_[0].hi) == 0;
    }
    const Integer& min() const { return in_words_ ? min_ : intervals_.front().lo; }
    const Integer& max() const { return in_words_ ? max_ : intervals_.back().hi; }
    const Integer& value() const { return min(); } // when fixed()
    Integer size() const;
    bool contains(const Integer& v) const;
    // The intervals as Integers (built from the words when the domain is held in words).
    std::vector<Interval> intervals() const;
    std::size_t interval_count() const { return in_words_ ? words_.size() : intervals_.size(); }
    // Whether the domain is held as word intervals (then its modulus is 1), and those intervals.
    bool in_words() const { return in_words_; }
    const std::vector<WordInterval>& word_intervals() const { return words_; } // when in_words()
    const Integer& modulus() const { return modulus_; }
    const Integer& residue() const { return residue_; }

    // Only v is left (v must be a member): equal to single(v), but reuses the storage (the search
    // fixes variables at every node, where allocating a fresh domain showed in profiles).
    void assign(const Integer& v);
    // Becomes the union of these intervals (canonical: sorted, separated by gaps; modulus 1), reusing
    // the storage: the store's trail saves a domain held in words as its word intervals.
    void assign_word_intervals(const std::vector<WordInterval>& intervals);
    // Narrowing operations; each returns true when the domain changed.
    bool restrict_min(const Integer& lo);
    bool restrict_max(const Integer& hi);
    bool remove(const Integer& v);
    // restrict_min(lo) with min() < lo <= max(), restrict_max(hi) with min() <= hi < max(), for a domain
    // whose bounds are words: in words when the domain is held in words (the store's word paths,
    // golomb's most frequent narrowing), through the Integer operations otherwise.
    void restrict_min_inside(std::int64_t lo);
    void restrict_max_inside(std::int64_t hi);
    // contains(v) and remove(v) for a domain whose bounds are words, v between them; remove_inside
    // wants a member and a domain not fixed. The same, in words (all_different's removals).
    bool contains_inside(std::int64_t v) const;
    void remove_inside(std::int64_t v);
    bool remove_range(const Integer& lo, const Integer& hi);
    bool intersect(const Domain& other);
    bool restrict_congruence(const Integer& modulus, const Integer& residue);

    // Images of the domain under exact maps (no value lost, none gained).
    Domain shifted(const Integer& offset) const; // {v + offset}
    Domain negated() const;                      // {-v}
    Domain scaled(const Integer& factor) const;  // {v * factor}, factor != 0
    // {v / divisor : v in domain, divisor divides v}, divisor != 0.
    Domain divided_exactly(const Integer& divisor) const;

    // The smallest value >= v in the domain (nothing when none), and the largest <= v.
    std::optional<Integer> next_at_least(const Integer& v) const;
    std::optional<Integer> prev_at_most(const Integer& v) const;

    bool operator==(const Domain& other) const; // the same set of values
    std::string to_string() const;              // "{1..5, 9} mod 2 = 1" style, for messages and tests

  private:
    void normalize();        // canonical form of intervals_ (held in Integers)
    void to_integers();      // holds the intervals in Integers (for the operations written on them)
    void settle();           // back to words where the domain allows it; refreshes min_, max_
    void clear();            // the empty domain, keeping the buffers
    void sync_word_bounds(); // min_, max_ from words_
    bool remove_word(std::int64_t v);
    bool remove_range_of_integers(const Integer& lo, const Integer& hi);
    bool restrict_congruence_of_integers(const Integer& modulus, const Integer& residue);
    bool contains_word(std::int64_t v) const;
    // Runs an operation written on Integer intervals, then settles the representation.
    template <class Operation> auto through_integers(Operation operation);

    bool in_words_ = true;
    std::vector<WordInterval> words_; // the intervals while in_words_
    std::vector<Interval> intervals_; // the intervals otherwise (empty while in_words_)
    Integer min_ = 0, max_ = 0;       // while in_words_ and not empty: the bounds, for min() and max()
    Integer modulus_ = 1;
    Integer residue_ = 0;
};

} // namespace constrint
