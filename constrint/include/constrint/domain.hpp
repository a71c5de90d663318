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

// A domain is {v : v in one of the intervals and v = residue (mod modulus)}.
// The congruence makes divisibility exact on huge ranges: `x % 16 == 0` on [1, 2^40] is the
// interval [16, 2^40] under 0 mod 16, no value enumerated.
// Canonical form (so that equal sets compare equal): every interval's bounds satisfy the
// congruence, intervals are sorted, and consecutive intervals are separated by at least one
// missing congruent value. A fixed domain has modulus 1.
class Domain {
  public:
    Domain() = default; // the empty domain
    static Domain range(const Integer& lo, const Integer& hi);
    static Domain values(std::vector<Integer> values);
    static Domain single(const Integer& value) { return range(value, value); }

    bool empty() const { return intervals_.empty(); }
    [[gnu::always_inline]] bool fixed() const {
        return intervals_.size() == 1 && compare(intervals_[0].lo, intervals_[0].hi) == 0;
    }
    const Integer& min() const { return intervals_.front().lo; }
    const Integer& max() const { return intervals_.back().hi; }
    const Integer& value() const { return intervals_.front().lo; } // when fixed()
    Integer size() const;
    bool contains(const Integer& v) const;
    const std::vector<Interval>& intervals() const { return intervals_; }
    const Integer& modulus() const { return modulus_; }
    const Integer& residue() const { return residue_; }

    // Only v is left (v must be a member): equal to single(v), but reuses the storage (the search
    // fixes variables at every node, where allocating a fresh domain showed in profiles).
    void assign(const Integer& v);
    // Becomes the union of the intervals [bounds[2k], bounds[2k + 1]] (canonical: sorted, separated by
    // gaps; modulus 1), reusing the storage: the store's trail saves a domain of words as its interval
    // bounds, which costs less than copying its Integers and back (golomb: a tenth of the run).
    void assign_word_intervals(const std::int64_t* bounds, std::size_t count);
    // Narrowing operations; each returns true when the domain changed.
    bool restrict_min(const Integer& lo);
    bool restrict_max(const Integer& hi);
    bool remove(const Integer& v);
    // restrict_min(lo) with min() < lo <= max(), restrict_max(hi) with min() <= hi < max(), for a domain
    // whose bounds are words (then so is every interval bound): compares words and builds no Integer
    // without a congruence (the store's word paths, golomb's most frequent narrowing).
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
    void normalize();
    std::vector<Interval> intervals_;
    Integer modulus_ = 1;
    Integer residue_ = 0;
};

} // namespace constrint
