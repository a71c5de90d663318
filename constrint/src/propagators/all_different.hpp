// all_different(x_1, ..., x_n) as one propagator (Gecode's distinct with value propagation), not
// n(n-1)/2 disequalities: a fixed variable's value leaves every other variable, and a pigeonhole
// check fails when fewer values than variables are left.
#pragma once

#include "engine/store.hpp"

namespace constrint::engine {

class AllDifferent final : public Propagator {
  public:
    explicit AllDifferent(std::vector<VarId> vars) : vars_(std::move(vars)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override { return subscribe(vars_, Event::Fixed); }
    bool idempotent() const override { return true; }
    const char* name() const override { return "all_different"; }

  private:
    // Removes the values of the variables fixed in this pass (fixed_) from the open ones; fixed_more
    // tells that a removal fixed a variable. In words, each open variable visited once (values in
    // fixed_words_), or with Integers when a value does not fit a word.
    PropStatus remove_fixed_words(Store& s, bool& fixed_more);
    PropStatus remove_fixed(Store& s, bool& fixed_more);

    std::vector<VarId> vars_;
    // Per variable: where its value was removed from the others (while that node is on the branch,
    // the removal holds and is not repeated: each run handles only the newly fixed variables).
    std::vector<Store::Stamp> removed_at_;
    // Per run (kept to avoid an allocation per run), per variable: open, fixed in the current pass, or
    // its value removed from the others; bytes, not vector<bool>, whose bit masking showed in profiles.
    enum : std::uint8_t { kOpen, kFixedNow, kRemoved };
    std::vector<std::uint8_t> done_;
    std::vector<std::size_t> fixed_; // the variables fixed in the current pass
    std::vector<Word> fixed_words_;  // their values, when all fit words
};

} // namespace constrint::engine
