#include "engine/search.hpp"

#include "engine/improving_direction.hpp"

#include <algorithm>

namespace constrint {

using engine::VarId;

namespace {
// The node budget of a probe of the objective's range (doubled after each inconclusive one): small,
// because the probes that pay are those propagation decides almost at once.
constexpr std::uint64_t kProbeNodes = 256;
// Parallel search: a thread adds its nodes and failures to the shared totals this many at a time, so
// the node and failure limits may be passed by up to this much per thread.
constexpr std::uint64_t kSharedBatch = 32;
} // namespace

Search::Search(const Model& model, SolveOptions options, const std::vector<bool>& active,
               bool with_objectives)
    : model_(std::make_shared<const Model>(model)), options_(options),
      start_(std::chrono::steady_clock::now()) {
    compiled_ = engine::compile(*model_, active, with_objectives);
    initialise();
}

Search::Search(std::shared_ptr<const Model> model, std::unique_ptr<engine::Compiled> compiled,
               SolveOptions options, std::vector<engine::Phase> phases)
    : model_(std::move(model)), options_(std::move(options)), compiled_(std::move(compiled)),
      phases_(std::move(phases)), start_(std::chrono::steady_clock::now()) {
    initialise();
}

void Search::initialise() {
    engine::Store& store = compiled_->store;
    if (!compiled_->objectives.empty()) {
        std::vector<Sense> senses;
        for (const Objective& o : model_->objectives())
            senses.push_back(o.sense);
        auto bound = std::make_unique<engine::ObjectiveBound>(compiled_->objectives, std::move(senses));
        bound_ = bound.get();
        bound_id_ = store.add_propagator(std::move(bound));
    }
    for (int v = 0; v < compiled_->user_vars; ++v)
        value_choice_.push_back(model_->variables()[v].prefer);
    if (compiled_->objectives.size() == 1) {
        probing_ = true;
        const auto improving = engine::improving_directions(*model_, model_->objectives()[0]);
        for (int v = 0; v < compiled_->user_vars; ++v) {
            if (!model_->variables()[v].prefer_given && improving[v]) value_choice_[v] = *improving[v];
        }
    }
    // Decision order: the model's search order, the other model variables, then auxiliaries
    // (fixed by propagation in almost every model; branching on them keeps the search complete).
    std::vector<bool> listed(store.num_vars(), false);
    for (int v : model_->search_order()) {
        order_.push_back(v);
        listed[v] = true;
    }
    for (VarId v = 0; v < store.num_vars(); ++v) {
        if (!listed[v]) order_.push_back(v);
    }
    store.set_stop_check([this] { return limit_reached(); });
}

double Search::elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

bool Search::limit_reached() {
    if (!stop_reason_.empty()) return true;
    // In a parallel search the node and failure limits count every thread's.
    std::uint64_t nodes = stats_.nodes, failures = stats_.failures;
    if (shared_) {
        // Added in batches: one shared counter written at every node by every thread is slow.
        if (stats_.nodes - shared_nodes_ >= kSharedBatch ||
            stats_.failures - shared_failures_ >= kSharedBatch) {
            shared_->nodes.fetch_add(stats_.nodes - shared_nodes_, std::memory_order_relaxed);
            shared_->failures.fetch_add(stats_.failures - shared_failures_, std::memory_order_relaxed);
            shared_nodes_ = stats_.nodes;
            shared_failures_ = stats_.failures;
        }
        nodes = shared_->nodes.load(std::memory_order_relaxed) + (stats_.nodes - shared_nodes_);
        failures = shared_->failures.load(std::memory_order_relaxed) + (stats_.failures - shared_failures_);
        if (shared_->stopped()) {
            stop_reason_ = shared_->stop_reason();
            return true;
        }
        if (abandon_->load(std::memory_order_relaxed)) {
            stop_reason_ = kAbandoned;
            return true;
        }
    }
    if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) {
        stop_reason_ = "cancelled";
    } else if (options_.interrupt && (++interrupt_polls_ & 31) == 0 && options_.interrupt()) {
        stop_reason_ = "interrupted";
    } else if (options_.node_limit && nodes >= *options_.node_limit) {
        stop_reason_ = "node limit " + std::to_string(*options_.node_limit) + " reached";
    } else if (options_.failure_limit && failures >= *options_.failure_limit) {
        stop_reason_ = "failure limit " + std::to_string(*options_.failure_limit) + " reached";
    } else if (options_.time_limit_seconds && elapsed() >= *options_.time_limit_seconds) {
        stop_reason_ = "time limit " + std::to_string(*options_.time_limit_seconds) + " s reached";
    }
    if (shared_ && !stop_reason_.empty()) shared_->stop(stop_reason_);
    return !stop_reason_.empty();
}

void Search::share(engine::SharedSearch& shared, const std::atomic<bool>& abandon) {
    shared_ = &shared;
    abandon_ = &abandon;
    start_ = shared.start(); // one clock for the time limit of every thread
}

bool Search::import_shared_best() {
    if (!shared_ || !bound_ || !optimise_) return false;
    std::vector<Integer> best = shared_->best_if_newer(shared_best_seen_);
    if (best.empty()) return false;
    bound_->improve_on(std::move(best));
    compiled_->store.schedule(bound_id_);
    return true;
}

void Search::restart_at(const std::vector<Decision>& path, const std::vector<Integer>* fixed_objectives) {
    engine::Store& s = compiled_->store;
    while (s.depth() > 0)
        s.pop_level();
    open_.clear();
    saved_first_open_.clear();
    first_open_ = 0;
    started_ = true;
    done_ = false;
    have_solution_ = false;
    status_ = Status::Unknown;
    if (stop_reason_ == kAbandoned) stop_reason_.clear();
    optimise_ = fixed_objectives == nullptr;
    probing_ = optimise_ && compiled_->objectives.size() == 1;
    // The subtree's first search is a probe without target or budget: a budget left from the last
    // subtree would end it at once, and a target carried over from there could let a probe that
    // exhausts this subtree, before any solution, pass for a proof that the subtree has none.
    probe_budget_ = 0;
    if (bound_) {
        // The objectives fixed: no bound (it would reject the values). Optimising: the shared best.
        bound_->improve_on({});
        shared_best_seen_ = 0;
        import_shared_best();
    }
    try {
        bool ok = !compiled_->failed && s.propagate();
        s.push_level(); // the subtree's root: undone by the next restart
        for (std::size_t i = 0; ok && fixed_objectives && i < fixed_objectives->size(); ++i)
            ok = s.assign(compiled_->objectives[i], (*fixed_objectives)[i]);
        for (std::size_t i = 0; ok && i < path.size(); ++i)
            ok = apply(path[i]);
        ok = ok && s.propagate();
        root_depth_ = s.depth();
        if (ok && probing_) s.push_level(); // the first search: a probe without a target
        if (!ok) {
            ++stats_.failures;
            finish(true);
        }
        at_subtree_root_ = ok;
    } catch (const engine::Interrupted&) {
        finish(false);
    }
}

Search::Expansion Search::expand(const std::vector<Decision>& path,
                                 const std::vector<Integer>* fixed_objectives) {
    restart_at(path, fixed_objectives);
    if (done_) return {Expansion::Kind::Failed, std::nullopt, std::nullopt};
    const std::optional<Choice> choice = next_choice();
    if (!choice) return {Expansion::Kind::Solution, std::nullopt, std::nullopt};
    ++stats_.nodes; // a choice point, searched below by the thread that takes each branch
    auto [left, right] = branches(*choice);
    return {Expansion::Kind::Split, std::move(left), std::move(right)};
}

std::optional<Search::Choice> Search::next_choice() {
    std::optional<Choice> choice = select_in_phases();
    if (!choice) {
        if (const std::optional<VarId> x = select_variable()) {
            const Prefer prefer = *x < compiled_->user_vars ? value_choice_[*x] : Prefer::Min;
            choice = Choice{*x, prefer};
        }
    }
    return choice;
}

std::optional<VarId> Search::select_variable() {
    const engine::Store& s = compiled_->store;
    if (options_.order == VarOrder::Declaration) {
        while (first_open_ < order_.size() && s.fixed(order_[first_open_]))
            ++first_open_;
        if (first_open_ < order_.size()) return order_[first_open_];
        return std::nullopt;
    }
    // Dynamic orders choose among the model's variables first, auxiliaries only after them.
    std::optional<VarId> best;
    Integer best_size;
    for (int pass = 0; pass < 2 && !best; ++pass) {
        for (VarId v : order_) {
            if (s.fixed(v) || (pass == 0) != (v < compiled_->user_vars)) continue;
            const Integer size = s.dom(v).size();
            if (!best) {
                best = v;
                best_size = size;
                continue;
            }
            bool better = size < best_size;
            if (options_.order == VarOrder::MostConstrained && pass == 0) {
                const int d = compiled_->degree[v], bd = compiled_->degree[*best];
                better = d > bd || (d == bd && size < best_size);
            }
            if (better) {
                best = v;
                best_size = size;
            }
        }
    }
    return best;
}

std::optional<Search::Choice> Search::select_in_phases() const {
    const engine::Store& s = compiled_->store;
    using engine::VarSelect;
    for (const engine::Phase& phase : phases_) {
        const bool by_size = phase.select == VarSelect::FirstFail || phase.select == VarSelect::AntiFirstFail;
        std::optional<VarId> best;
        Integer best_size;     // by_size: the size of best's domain, computed once per candidate
        double best_score = 0; // AfcSizeMax: best's AFC per value
        for (VarId v : phase.vars) {
            if (s.fixed(v)) continue;
            if (phase.select == VarSelect::InputOrder) return Choice{v, phase.value};
            Integer size = by_size ? s.dom(v).size() : Integer(0);
            const double score =
                phase.select == VarSelect::AfcSizeMax ? s.afc(v) / s.dom(v).size().convert_to<double>() : 0.0;
            bool better = !best;
            if (best) {
                switch (phase.select) {
                case VarSelect::InputOrder:
                    break;
                case VarSelect::FirstFail:
                    better = size < best_size;
                    break;
                case VarSelect::AntiFirstFail:
                    better = size > best_size;
                    break;
                case VarSelect::Smallest:
                    better = s.min(v) < s.min(*best);
                    break;
                case VarSelect::Largest:
                    better = s.max(v) > s.max(*best);
                    break;
                case VarSelect::AfcSizeMax:
                    better = score > best_score;
                    break;
                }
            }
            if (better) {
                best = v;
                best_size = std::move(size);
                best_score = score;
            }
        }
        if (best) return Choice{*best, phase.value};
    }
    return std::nullopt;
}

std::pair<Search::Decision, Search::Decision> Search::branches(const Choice& choice) const {
    const engine::Store& s = compiled_->store;
    const VarId x = choice.var;
    const Prefer prefer = choice.prefer;
    using K = Decision::Kind;
    switch (prefer) {
    case Prefer::Min:
        return {{K::Equal, x, s.min(x)}, {K::NotEqual, x, s.min(x)}};
    case Prefer::Max:
        return {{K::Equal, x, s.max(x)}, {K::NotEqual, x, s.max(x)}};
    case Prefer::SplitLow:
    case Prefer::SplitHigh: {
        const Integer mid = floor_div(s.min(x) + s.max(x), 2);
        Integer above = mid;
        above += 1; // not `mid + 1` in the initializer: GCC 12 warns falsely there (-Warray-bounds)
        Decision low{K::AtMost, x, mid}, high{K::AtLeast, x, std::move(above)};
        return prefer == Prefer::SplitLow ? std::pair{low, high} : std::pair{high, low};
    }
    }
    return {{K::Equal, x, s.min(x)}, {K::NotEqual, x, s.min(x)}};
}

bool Search::apply(const Decision& d) {
    engine::Store& s = compiled_->store;
    if (bound_id_ >= 0) s.schedule(bound_id_);
    bool ok = false;
    switch (d.kind) {
    case Decision::Kind::Equal:
        ok = s.assign(d.var, d.value);
        break;
    case Decision::Kind::NotEqual:
        ok = s.remove(d.var, d.value);
        break;
    case Decision::Kind::AtMost:
        ok = s.set_max(d.var, d.value);
        break;
    case Decision::Kind::AtLeast:
        ok = s.set_min(d.var, d.value);
        break;
    }
    return ok && s.propagate();
}

Integer Search::gain(const Integer& objective_value) const {
    return model_->objectives()[0].sense == Sense::Maximize ? objective_value : Integer(-objective_value);
}

bool Search::start_probe(std::optional<Integer> proven_limit, bool inconclusive) {
    engine::Store& s = compiled_->store;
    const VarId o = compiled_->objectives[0];
    const bool maximise = model_->objectives()[0].sense == Sense::Maximize;
    while (s.depth() > root_depth_)
        s.pop_level();
    open_.clear();
    // Back at the root, every variable may be open again: the declaration-order cursor restarts too.
    first_open_ = 0;
    saved_first_open_.clear();
    bool ok = true;
    if (proven_limit) ok = maximise ? s.set_max(o, *proven_limit) : s.set_min(o, -*proven_limit);
    s.schedule(bound_id_); // the best so far, kept at the root
    if (!ok || !s.propagate()) {
        ++stats_.failures;
        probing_ = false;
        return false;
    }
    probe_floor_ = gain(maximise ? s.min(o) : s.max(o));
    const Integer ceiling = gain(maximise ? s.max(o) : s.min(o));
    if (inconclusive && ceiling - probe_floor_ < kProbeNodes) {
        // Propagation did not decide a target and few values are left: branch and bound needs at
        // most one solution per value, where each further probe may throw a budget away again
        // (golomb 8: 7,517 nodes with probes retried, 5,701 without).
        probe_target_ = probe_floor_;
    } else if (inconclusive) {
        probe_target_ = probe_floor_ + (probe_target_ - probe_floor_) / 2;
        probe_budget_ *= 2;
    } else {
        probe_target_ = probe_floor_ + (ceiling - probe_floor_ + 1) / 2;
        probe_budget_ = kProbeNodes;
    }
    if (probe_target_ <= probe_floor_) { // a plain branch-and-bound step: complete, no budget
        probe_target_ = probe_floor_;
        probe_budget_ = 0;
        // Propagation did not decide the objective near the best so far: later probes would throw
        // away their budgets again (golomb 9: 46% more nodes). This step goes on as branch and bound,
        // its tree kept after each solution, with the same last answer (docs/solver.md).
        probing_ = false;
    }
    probe_start_nodes_ = stats_.nodes;
    s.push_level();
    if (!(maximise ? s.set_min(o, probe_target_) : s.set_max(o, -probe_target_)) || !s.propagate()) {
        ++stats_.failures;
        return false;
    }
    return true;
}

bool Search::backtrack() {
    engine::Store& s = compiled_->store;
    while (!open_.empty()) {
        const Decision alternative = std::move(open_.back());
        open_.pop_back();
        s.pop_level();
        first_open_ = saved_first_open_.back();
        saved_first_open_.pop_back();
        if (apply(alternative)) return true;
        ++stats_.failures;
    }
    return false;
}

void Search::finish(bool exhausted) {
    done_ = true;
    if (exhausted) {
        status_ = !have_solution_                  ? Status::Unsatisfiable
                  : !compiled_->objectives.empty() ? Status::Optimal
                                                   : Status::AllSolutions;
    } else {
        status_ = have_solution_ ? Status::Satisfiable : Status::Unknown;
    }
    stats_.propagations = compiled_->store.propagations();
    stats_.seconds = elapsed();
}

std::optional<Solution> Search::next() {
    if (done_) return std::nullopt;
    engine::Store& s = compiled_->store;
    try {
        bool consistent;
        if (!started_) {
            started_ = true;
            consistent = !compiled_->failed && s.propagate();
            if (!consistent) ++stats_.failures;
            if (consistent && probing_) s.push_level(); // the first search: a probe without a target
        } else if (at_subtree_root_) {
            at_subtree_root_ = false; // restart_at() propagated the subtree's root
            consistent = true;
        } else if (probing_) {
            consistent = start_probe(std::nullopt, false); // from the root, for a better solution
        } else {
            consistent = backtrack(); // leave the solution just returned
        }
        for (;;) {
            if (!consistent && probing_ && have_solution_) {
                // The probe's tree is exhausted: no solution reaches its target.
                consistent = start_probe(Integer(probe_target_ - 1), false);
                continue;
            }
            if (!consistent) {
                finish(true);
                return std::nullopt;
            }
            if (limit_reached()) {
                finish(false);
                return std::nullopt;
            }
            if (probing_ && probe_budget_ > 0 && stats_.nodes - probe_start_nodes_ >= probe_budget_) {
                consistent = start_probe(std::nullopt, true); // inconclusive: ask for less
                continue;
            }
            if (import_shared_best() && !s.propagate()) { // another thread found a better solution
                ++stats_.failures;
                consistent = backtrack();
                continue;
            }
            const std::optional<Choice> choice = next_choice();
            if (!choice) { // every variable fixed: a solution
                std::vector<Integer> values(compiled_->user_vars);
                for (int v = 0; v < compiled_->user_vars; ++v)
                    values[v] = s.value(v);
                objective_values_.clear();
                for (VarId o : compiled_->objectives)
                    objective_values_.push_back(s.value(o));
                if (bound_ && optimise_) bound_->improve_on(objective_values_);
                have_solution_ = true;
                ++stats_.solutions;
                stats_.propagations = s.propagations();
                stats_.seconds = elapsed();
                return Solution(std::move(values), model_);
            }
            ++stats_.nodes;
            auto [left, right] = branches(*choice);
            s.push_level();
            open_.push_back(std::move(right));
            saved_first_open_.push_back(first_open_);
            stats_.max_depth = std::max<std::uint64_t>(stats_.max_depth, open_.size());
            consistent = apply(left);
            if (!consistent) {
                ++stats_.failures;
                consistent = backtrack();
            }
        }
    } catch (const engine::Interrupted&) {
        finish(false);
        return std::nullopt;
    }
}

} // namespace constrint
