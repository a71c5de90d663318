// The propagation store: variable domains, the trail that restores them on backtracking, and the
// queue that runs propagators to a fixpoint (the paper's Global ARC-Reduce, AC-3 style).
#pragma once

#include "constrint/domain.hpp"
#include "engine/propagator.hpp"
#include "machine_word.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace constrint::engine {

// Thrown out of propagate() when the stop check (time limit, cancellation) says so.
struct Interrupted {};

class Store {
  public:
    VarId new_var(Domain domain);
    int add_propagator(std::unique_ptr<Propagator> propagator); // subscribes and schedules it
    int num_vars() const { return static_cast<int>(vars_.size()); }
    int num_propagators() const { return static_cast<int>(props_.size()); }
    Propagator& propagator(int id) { return *props_[id]; }

    const Domain& dom(VarId x) const { return vars_[x].dom; }
    bool fixed(VarId x) const {
        const VarState& v = vars_[x];
        return v.bounds_fit ? v.min_word == v.max_word : v.dom.fixed();
    }
    const Integer& min(VarId x) const { return vars_[x].dom.min(); }
    const Integer& max(VarId x) const { return vars_[x].dom.max(); }
    const Integer& value(VarId x) const { return vars_[x].dom.value(); }
    // x's bounds as machine words; false when one of them does not fit a word (then read min/max).
    bool word_bounds(VarId x, Word& lo, Word& hi) const {
        const VarState& v = vars_[x];
        lo = v.min_word;
        hi = v.max_word;
        return v.bounds_fit;
    }

    // Narrowing; each returns false when the domain would become empty (the node fails; the
    // domain is then left as it was).
    bool set_min(VarId x, const Integer& lo);
    bool set_max(VarId x, const Integer& hi);
    // The same for a bound given as a machine word (the word paths of the propagators).
    bool set_min_word(VarId x, Word lo);
    bool set_max_word(VarId x, Word hi);
    bool set_bounds(VarId x, const Integer& lo, const Integer& hi) {
        return set_min(x, lo) && set_max(x, hi);
    }
    bool assign(VarId x, const Integer& v);
    bool remove(VarId x, const Integer& v);
    bool remove_word(VarId x, Word v); // the same for a value given as a machine word
    bool remove_range(VarId x, const Integer& lo, const Integer& hi);
    bool intersect(VarId x, const Domain& d);
    bool restrict_congruence(VarId x, const Integer& modulus, const Integer& residue);

    // Runs scheduled propagators until none is left (true) or a domain is empty (false).
    bool propagate();
    void schedule(int p) {
        if (queued_[p] || !active_[p]) return;
        queued_[p] = true;
        queue_.push_back(p);
    }
    // The running propagator stopped short of its own fixpoint (a bound that creeps by small steps
    // over a huge domain): it runs again later, and the limits are checked between its runs.
    void reschedule_running() {
        if (current_ >= 0) schedule(current_);
    }
    // Called every few hundred propagations; returning true interrupts propagate().
    void set_stop_check(std::function<bool()> check) { stop_check_ = std::move(check); }

    // Choice points: push_level() before a decision, pop_level() undoes everything since.
    void push_level();
    void pop_level();
    std::size_t depth() const { return levels_.size(); }

    // A point of the search: on_branch(stamp) holds while the search is at that node or below it, so
    // that what was done there still holds. Propagators use it to skip work an ancestor already did
    // (the store restores domains on backtracking, not a propagator's own memory).
    struct Stamp {
        std::size_t depth = SIZE_MAX; // default: never on the branch
        std::uint64_t epoch = 0;
    };
    Stamp stamp() const { return {levels_.size(), epoch_}; }
    bool on_branch(const Stamp& t) const {
        return t.depth <= levels_.size() &&
               (t.depth == levels_.size() ? epoch_ : levels_[t.depth].epoch) == t.epoch;
    }

    // The positive and negative divisors of n != 0 as a domain, or nullptr when there are too many
    // or n cannot be factored quickly. Cached. Throws Interrupted when the stop check ends it.
    const Domain* divisors(const Integer& n);

    // x <= y holds at every node (a top-level constraint says so): products of x and y use it.
    void note_order(VarId x, VarId y) { orders_.emplace(x, y); }
    bool known_order(VarId x, VarId y) const { return orders_.count({x, y}) > 0; }

    std::uint64_t propagations() const { return propagations_; }

    // Accumulated failure count (AFC, Gecode's name; the "weighted degree" of dom/wdeg with decay):
    // every propagator starts at 1, and each failure adds 1 to the failing propagator's count after
    // all counts have decayed by kAfcDecay. A variable's AFC sums the counts of the active
    // propagators that depend on it: constraints that fail often make their variables branch first.
    static constexpr double kAfcDecay = 0.99;
    double afc(VarId x) const;

  private:
    struct VarState {
        Domain dom;
        // The domain's bounds as words when both fit, refreshed at every change: the word paths and
        // the bound tests read them without reaching the Integers held on the domain's heap buffer
        // (golomb: loading bounds through that pointer was most of the linear propagator's time).
        Word min_word = 0, max_word = 0;
        bool bounds_fit = false;
        std::uint64_t saved_epoch = 0;
        std::vector<int> wake[3];     // by Event: subscribers woken by that event or a stronger one
        std::size_t awake[3] = {};    // wake[e][0, awake[e]): the active ones; then the subsumed ones
        std::vector<int> propagators; // every subscriber once, whatever its event
    };
    // A subsumed propagator moved out of the active part of a wake list, from this index.
    struct Unsubscribed {
        VarId var;
        Event event;
        std::size_t index;
    };
    // The domain before a change: a domain held in words is saved as its word intervals (golomb:
    // copying whole domains' Integers into the trail and back was a seventh of the run), any other
    // domain as a copy.
    struct TrailEntry {
        VarId var;
        Domain old;
        std::uint64_t old_epoch;
        bool as_words = false;           // old is unused: the domain was these word intervals
        std::vector<WordInterval> words; // kept allocated for the entry's next use
    };
    struct Level {
        std::size_t trail_size;
        std::size_t subsumed_size;
        std::size_t unsubscribed_size;
        std::uint64_t epoch;
    };

    [[noreturn]] void interrupt(); // empties the queue and throws Interrupted
    void save(VarId x);
    static void refresh_bounds(VarState& v) {
        if (v.dom.in_words()) {
            const std::vector<WordInterval>& words = v.dom.word_intervals();
            v.bounds_fit = !words.empty();
            if (v.bounds_fit) v.min_word = words.front().lo, v.max_word = words.back().hi;
            return;
        }
        v.bounds_fit =
            !v.dom.empty() && read_word(v.dom.min(), v.min_word) && read_word(v.dom.max(), v.max_word);
    }
    void changed(VarId x, Event event);
    bool replace(VarId x, Domain&& narrowed, const Domain& before);
    void count_failure(int propagator);
    // A subsumed propagator leaves the active part of its wake lists, so that changes of its
    // variables no longer visit it (langford: 84% of wake-ups were of subsumed reifications);
    // resubscribe() undoes the latest unsubscription, on backtracking.
    void unsubscribe(int propagator);
    void resubscribe(const Unsubscribed& entry);

    std::vector<VarState> vars_;
    std::vector<std::unique_ptr<Propagator>> props_;
    // Flags per propagator as bytes, not std::vector<bool>: read on every wake-up, where the bit
    // masking of vector<bool> showed in profiles (langford: schedule() was 11% of the run).
    std::vector<std::uint8_t> idempotent_;
    std::vector<std::uint8_t> active_;
    std::vector<std::uint8_t> queued_;
    std::vector<int> queue_;
    std::size_t queue_head_ = 0;
    int current_ = -1;

    // Entries [0, trail_size_) are in use; those beyond keep their allocations for reuse (a domain
    // copied into a used entry allocates nothing when it fits the old one's buffers).
    std::vector<TrailEntry> trail_;
    std::size_t trail_size_ = 0;
    std::vector<int> subsumed_;              // propagators deactivated, in order, to reactivate on backtrack
    std::vector<Unsubscribed> unsubscribed_; // in order, to undo on backtrack
    std::vector<std::vector<Subscription>> subscriptions_; // per propagator, as it subscribed
    std::vector<Level> levels_;
    std::uint64_t epoch_ = 0, epoch_counter_ = 0;

    std::uint64_t propagations_ = 0;
    // Decay without touching every count: each failure adds afc_increment_, which grows by
    // 1 / kAfcDecay per failure; all counts are rescaled when it gets large.
    std::vector<double> afc_;
    double afc_increment_ = 1;
    std::function<bool()> stop_check_;
    std::map<Integer, std::unique_ptr<Domain>> divisor_cache_;
    std::set<std::pair<VarId, VarId>> orders_;
};

} // namespace constrint::engine
