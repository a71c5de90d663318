// sum(coefficient_i * x_i) relation constant over many variables: one propagator, O(n) per run,
// instead of a tree of n - 1 auxiliary sums (FlatZinc's int_lin_* and bool_lin_*).
#pragma once

#include "engine/store.hpp"
#include "machine_word.hpp"

#include <cstdint>
#include <optional>

namespace constrint::engine {

struct LinearTerm {
    Integer coefficient; // never 0
    VarId var;
};

enum class LinearRelation : std::uint8_t { Eq, Le, Ne };

// Bounds-consistent for Eq and Le (Le reaches its fixpoint in one pass, Eq repeats until nothing
// changes); Ne removes the one value left to the last unfixed variable. Idempotent when no variable
// occurs in two terms (the FlatZinc builder merges them): a run ends at its own fixpoint, so the
// store need not wake it again for the bounds it moved itself.
class Linear final : public Propagator {
  public:
    Linear(std::vector<LinearTerm> terms, LinearRelation relation, Integer constant);
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    bool idempotent() const override { return distinct_vars_; }
    const char* name() const override { return "linear"; }

  private:
    // The same reasoning in 64-bit machine words with overflow checks; nothing when a bound, a
    // product or a sum does not fit (the run then starts over on the Integer path).
    std::optional<PropStatus> propagate_words(Store& s);
    template <std::size_t kTerms, bool kUnit> std::optional<PropStatus> propagate_words_of(Store& s);
    PropStatus propagate_le(Store& s, bool& changed);
    PropStatus propagate_ge(Store& s, bool& changed);
    PropStatus propagate_ne(Store& s);
    std::vector<LinearTerm> terms_;
    LinearRelation relation_;
    Integer constant_;
    bool distinct_vars_ = true; // no variable in two terms (a term's narrowing would leave the other stale)
    // An equality whose constant the gcd of the coefficients does not divide has no solution (checked
    // first: bounds reasoning alone would creep towards that failure one unit at a time). Decided once:
    // the cpp_int test at every run showed in golomb's profile.
    bool no_solution_by_gcd_ = false;
    // The coefficients and the constant as machine words, when all of them fit (decided once, in the
    // constructor); otherwise empty and nothing.
    std::vector<Word> word_coefficients_;
    std::optional<Word> word_constant_;
    bool unit_coefficients_ = false; // every word coefficient is 1 or -1 (no rounding in a narrowing)
    // Per-run buffers of propagate_words, one entry per term (sized once, in the constructor).
    std::vector<Word> scratch_lo_, scratch_hi_;
};

} // namespace constrint::engine
