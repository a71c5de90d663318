#include "engine/store.hpp"

#include <algorithm>

namespace constrint::engine {

namespace {
// Divisor lists longer than this are not turned into domains (bounds reasoning takes over).
constexpr std::size_t kMaxDivisors = 1 << 14;
} // namespace

VarId Store::new_var(Domain domain) {
    VarState v;
    v.dom = std::move(domain);
    refresh_bounds(v);
    vars_.push_back(std::move(v));
    return static_cast<VarId>(vars_.size() - 1);
}

int Store::add_propagator(std::unique_ptr<Propagator> propagator) {
    const int id = static_cast<int>(props_.size());
    subscriptions_.push_back(propagator->subscriptions());
    for (const Subscription& s : subscriptions_.back()) {
        VarState& v = vars_[s.var];
        const int e = static_cast<int>(s.event);
        // Inserted before the subsumed ones (those subsumed at the root stay out for good).
        if (v.awake[e] == 0 || v.wake[e][v.awake[e] - 1] != id) {
            v.wake[e].insert(v.wake[e].begin() + static_cast<std::ptrdiff_t>(v.awake[e]), id);
            ++v.awake[e];
        }
        auto& all = v.propagators;
        if (all.empty() || all.back() != id) all.push_back(id);
    }
    idempotent_.push_back(propagator->idempotent());
    afc_.push_back(afc_increment_); // as if it had existed from the start with a count of 1
    props_.push_back(std::move(propagator));
    active_.push_back(true);
    queued_.push_back(false);
    schedule(id);
    return id;
}

void Store::save(VarId x) {
    VarState& v = vars_[x];
    if (levels_.empty() || v.saved_epoch == epoch_) return; // nothing to restore at the root
    if (trail_size_ == trail_.size()) trail_.emplace_back();
    TrailEntry& entry = trail_[trail_size_++]; // a used entry: a copy into it reuses its buffers
    entry.var = x;
    entry.old_epoch = v.saved_epoch;
    entry.as_words = v.dom.in_words();
    if (entry.as_words)
        entry.words = v.dom.word_intervals(); // reuses the entry's buffer when it is large enough
    else
        entry.old = v.dom;
    v.saved_epoch = epoch_;
}

void Store::changed(VarId x, Event event) {
    const VarState& v = vars_[x];
    for (int e = 0; e <= static_cast<int>(event); ++e) {
        const int* active = v.wake[e].data();
        for (std::size_t i = 0; i < v.awake[e]; ++i) {
            const int p = active[i];
            if (p == current_ && idempotent_[p]) continue;
            schedule(p);
        }
    }
}

void Store::unsubscribe(int p) {
    for (const Subscription& s : subscriptions_[p]) {
        VarState& v = vars_[s.var];
        const int e = static_cast<int>(s.event);
        std::vector<int>& list = v.wake[e];
        const auto end = list.begin() + static_cast<std::ptrdiff_t>(v.awake[e]);
        const auto at = std::find(list.begin(), end, p);
        if (at == end) continue; // subscribed twice with this event: already out
        // Moved to the end of the active part, the others keeping their order: the order in which
        // propagators run decides the failure counts that dom/wdeg branching reads (swapping it with
        // the last active one instead: queens 200 took 93,052 nodes instead of 53,581).
        std::rotate(at, at + 1, end);
        --v.awake[e];
        if (!levels_.empty())
            unsubscribed_.push_back({s.var, s.event, static_cast<std::size_t>(at - list.begin())});
    }
}

void Store::resubscribe(const Unsubscribed& entry) {
    VarState& v = vars_[entry.var];
    const int e = static_cast<int>(entry.event);
    std::vector<int>& list = v.wake[e];
    // Later unsubscriptions are undone already: the list is as this one left it, with the
    // propagator first after the active part; it goes back to its index.
    const auto first_out = list.begin() + static_cast<std::ptrdiff_t>(v.awake[e]);
    std::rotate(list.begin() + static_cast<std::ptrdiff_t>(entry.index), first_out, first_out + 1);
    ++v.awake[e];
}

bool Store::set_min(VarId x, const Integer& lo) {
    VarState& v = vars_[x];
    if (Word w = 0; v.bounds_fit && read_word(lo, w)) return set_min_word(x, w);
    Domain& d = v.dom;
    if (compare(lo, d.min()) <= 0) return true;
    if (compare(lo, d.max()) > 0) return false;
    save(x);
    d.restrict_min(lo);
    refresh_bounds(v);
    changed(x, d.fixed() ? Event::Fixed : Event::Bounds);
    return true;
}

bool Store::set_max(VarId x, const Integer& hi) {
    VarState& v = vars_[x];
    if (Word w = 0; v.bounds_fit && read_word(hi, w)) return set_max_word(x, w);
    Domain& d = v.dom;
    if (compare(hi, d.max()) >= 0) return true;
    if (compare(hi, d.min()) < 0) return false;
    save(x);
    d.restrict_max(hi);
    refresh_bounds(v);
    changed(x, d.fixed() ? Event::Fixed : Event::Bounds);
    return true;
}

// The bounds compared as words: no Integer is read unless the domain changes.
bool Store::set_min_word(VarId x, Word lo) {
    VarState& v = vars_[x];
    if (!v.bounds_fit) return set_min(x, Integer(lo));
    if (lo <= v.min_word) return true;
    if (lo > v.max_word) return false;
    save(x);
    v.dom.restrict_min_inside(lo);
    refresh_bounds(v); // the new bounds lie within the old ones: they fit
    changed(x, v.min_word == v.max_word ? Event::Fixed : Event::Bounds);
    return true;
}

bool Store::set_max_word(VarId x, Word hi) {
    VarState& v = vars_[x];
    if (!v.bounds_fit) return set_max(x, Integer(hi));
    if (hi >= v.max_word) return true;
    if (hi < v.min_word) return false;
    save(x);
    v.dom.restrict_max_inside(hi);
    refresh_bounds(v);
    changed(x, v.min_word == v.max_word ? Event::Fixed : Event::Bounds);
    return true;
}

bool Store::assign(VarId x, const Integer& value) {
    VarState& v = vars_[x];
    Domain& d = v.dom;
    if (Word w = 0; v.bounds_fit && read_word(value, w)) {
        if (w < v.min_word || w > v.max_word) return false;
        if (v.min_word == v.max_word) return true; // fixed to value already
    }
    if (!d.contains(value)) return false;
    if (d.fixed()) return true;
    save(x);
    d.assign(value);
    refresh_bounds(v);
    changed(x, Event::Fixed);
    return true;
}

bool Store::remove(VarId x, const Integer& value) {
    VarState& v = vars_[x];
    if (Word w = 0; v.bounds_fit && read_word(value, w)) return remove_word(x, w);
    Domain& d = v.dom;
    if (!d.contains(value)) return true;
    if (d.fixed()) return false;
    const bool at_bound = compare(value, d.min()) == 0 || compare(value, d.max()) == 0;
    save(x);
    d.remove(value);
    refresh_bounds(v);
    changed(x, fixed(x) ? Event::Fixed : at_bound ? Event::Bounds : Event::Domain);
    return true;
}

bool Store::remove_word(VarId x, Word w) {
    VarState& v = vars_[x];
    if (!v.bounds_fit) return remove(x, Integer(w));
    // Bounds are members (canonical form), so most answers need no search of the intervals
    // (all_different removes each fixed value from every other variable).
    if (w < v.min_word || w > v.max_word) return true;
    if (v.min_word == v.max_word) return false; // value is the only one left
    const bool at_bound = w == v.min_word || w == v.max_word;
    if (!at_bound && !v.dom.contains_inside(w)) return true;
    save(x);
    v.dom.remove_inside(w);
    refresh_bounds(v);
    changed(x, fixed(x) ? Event::Fixed : at_bound ? Event::Bounds : Event::Domain);
    return true;
}

bool Store::replace(VarId x, Domain&& narrowed, const Domain& before) {
    if (narrowed.empty()) return false;
    const Event event = narrowed.fixed()                                                   ? Event::Fixed
                        : narrowed.min() != before.min() || narrowed.max() != before.max() ? Event::Bounds
                                                                                           : Event::Domain;
    save(x);
    vars_[x].dom = std::move(narrowed);
    refresh_bounds(vars_[x]);
    changed(x, event);
    return true;
}

bool Store::remove_range(VarId x, const Integer& lo, const Integer& hi) {
    const Domain& before = vars_[x].dom;
    if (lo > hi || hi < before.min() || lo > before.max()) return true;
    Domain d = before;
    if (!d.remove_range(lo, hi)) return true;
    return replace(x, std::move(d), before);
}

bool Store::intersect(VarId x, const Domain& other) {
    const Domain& before = vars_[x].dom;
    Domain d = before;
    if (!d.intersect(other)) return true;
    return replace(x, std::move(d), before);
}

bool Store::restrict_congruence(VarId x, const Integer& modulus, const Integer& residue) {
    const Domain& before = vars_[x].dom;
    if (modulus == 1 || before.fixed())
        return modulus == 1 || floor_mod(before.value() - residue, modulus) == 0;
    Domain d = before;
    if (!d.restrict_congruence(modulus, residue)) return true;
    return replace(x, std::move(d), before);
}

void Store::interrupt() {
    for (std::size_t i = queue_head_; i < queue_.size(); ++i)
        queued_[queue_[i]] = false;
    queue_.clear();
    queue_head_ = 0;
    current_ = -1;
    throw Interrupted{};
}

bool Store::propagate() {
    bool ok = true;
    while (queue_head_ < queue_.size()) {
        const int p = queue_[queue_head_++];
        queued_[p] = false;
        if (!active_[p]) continue;
        // Every 16 runs: a run takes at most a few milliseconds (values are bounded by kMaxTermBits),
        // so limits are seen within a fraction of a second.
        if ((++propagations_ & 15) == 0 && stop_check_ && stop_check_()) interrupt();
        current_ = p;
        const PropStatus status = props_[p]->propagate(*this);
        current_ = -1;
        if (status == PropStatus::Fail) {
            count_failure(p);
            ok = false;
            break;
        }
        if (status == PropStatus::Subsumed) {
            active_[p] = false;
            unsubscribe(p);
            if (!levels_.empty()) subsumed_.push_back(p);
        }
    }
    if (!ok) {
        for (std::size_t i = queue_head_; i < queue_.size(); ++i)
            queued_[queue_[i]] = false;
    }
    queue_.clear();
    queue_head_ = 0;
    return ok;
}

void Store::count_failure(int p) {
    afc_[p] += afc_increment_;
    afc_increment_ /= kAfcDecay;
    if (afc_increment_ > 1e100) {
        for (double& count : afc_)
            count *= 1e-100;
        afc_increment_ *= 1e-100;
    }
}

double Store::afc(VarId x) const {
    double sum = 0;
    for (int p : vars_[x].propagators) {
        if (active_[p]) sum += afc_[p];
    }
    return sum / afc_increment_; // in units of the current increment: a fresh propagator counts 1
}

void Store::push_level() {
    levels_.push_back({trail_size_, subsumed_.size(), unsubscribed_.size(), epoch_});
    epoch_ = ++epoch_counter_;
}

void Store::pop_level() {
    const Level level = levels_.back();
    levels_.pop_back();
    while (trail_size_ > level.trail_size) {
        TrailEntry& entry = trail_[--trail_size_];
        VarState& v = vars_[entry.var];
        if (entry.as_words) {
            v.dom.assign_word_intervals(entry.words);
            v.min_word = entry.words.front().lo;
            v.max_word = entry.words.back().hi;
            v.bounds_fit = true;
        } else {
            std::swap(v.dom, entry.old); // the entry keeps the undone domain's buffers for its next use
            refresh_bounds(v);
        }
        v.saved_epoch = entry.old_epoch;
    }
    while (unsubscribed_.size() > level.unsubscribed_size) {
        resubscribe(unsubscribed_.back());
        unsubscribed_.pop_back();
    }
    while (subsumed_.size() > level.subsumed_size) {
        active_[subsumed_.back()] = true;
        subsumed_.pop_back();
    }
    epoch_ = level.epoch;
}

const Domain* Store::divisors(const Integer& n) {
    const Integer key = n < 0 ? Integer(-n) : n;
    auto it = divisor_cache_.find(key);
    if (it == divisor_cache_.end()) {
        std::unique_ptr<Domain> domain;
        bool stopped = false; // a limit ended the factoring: no answer to keep for later calls
        const std::function<bool()> stop = [&] { return stopped = stop_check_ && stop_check_(); };
        if (auto positive = positive_divisors(key, kMaxDivisors, stop)) {
            std::vector<Integer> values;
            values.reserve(2 * positive->size());
            for (const Integer& d : *positive) {
                values.push_back(d);
                values.push_back(-d);
            }
            domain = std::make_unique<Domain>(Domain::values(std::move(values)));
        }
        // A limit ended the factoring: the propagation ends too, or the next call would factor again.
        if (stopped) interrupt();
        it = divisor_cache_.emplace(key, std::move(domain)).first;
    }
    return it->second.get();
}

} // namespace constrint::engine
