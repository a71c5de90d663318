#include "engine/parallel_search.hpp"

#include "constrint/error.hpp"

namespace constrint {

namespace {
// Subtrees per thread: enough that a thread finishing early finds more work (load balance), few
// enough that replaying their paths costs little (Régin et al., "Embarrassingly parallel search").
constexpr std::size_t kSubtreesPerThread = 32;
// Splitting stops after this many levels even when most branches fail at once, and after this much
// time: each open node's decisions are replayed from the root, which costs a lot where one decision's
// propagation does (magic sequences of length 300: milliseconds per decision, and a tree so narrow
// that 64 levels give 5 open nodes). Any split gives the same answers; only the balance changes.
constexpr int kMaxSplitLevels = 64;
constexpr double kMaxSplitSeconds = 0.05;
constexpr std::size_t kNone = SIZE_MAX;
// Solutions a subtree ahead of the caller holds before its thread waits for the caller to get there:
// an enumeration runs in bounded memory, as with one thread.
constexpr std::size_t kMaxHeld = 256;
// How often the caller's thread asks the host's interrupt callback while it waits.
constexpr auto kPollInterval = std::chrono::milliseconds(10);

std::vector<Sense> senses_of(const Model& model) {
    std::vector<Sense> senses;
    for (const Objective& o : model.objectives())
        senses.push_back(o.sense);
    return senses;
}
} // namespace

void check_threads(int threads) {
    if (threads < 1 || threads > kMaxThreads) {
        throw ModelError("threads must be between 1 and " + std::to_string(kMaxThreads) + ", got " +
                         std::to_string(threads));
    }
}

ParallelSearch::ParallelSearch(std::shared_ptr<const Model> model, const SolveOptions& options,
                               const WorkerFactory& make_worker, engine::SharedSearch* budget)
    : model_(std::move(model)), options_(options),
      own_shared_(budget ? nullptr
                         : std::make_unique<engine::SharedSearch>(senses_of(*model_),
                                                                  std::chrono::steady_clock::now())),
      shared_(budget ? *budget : *own_shared_) {
    check_threads(options.threads);
    if (options.solution_limit) solution_limit_ = *options.solution_limit;
    SolveOptions per_worker = options;
    per_worker.threads = 1;
    per_worker.interrupt = nullptr; // asked by the caller's thread only (Python needs its own thread)
    const auto n = static_cast<std::size_t>(options.threads);
    abandon_ = std::make_unique<std::atomic<bool>[]>(n);
    for (std::size_t w = 0; w < n; ++w) {
        workers_.push_back(make_worker(per_worker));
        workers_.back()->share(shared_, abandon_[w]);
    }
    working_on_.assign(n, kNone);
    worker_stats_.resize(n);
}

ParallelSearch::~ParallelSearch() {
    stop_workers();
}

void ParallelSearch::stop_workers() {
    {
        const std::lock_guard lock(mutex_);
        quitting_ = true;
        for (std::size_t w = 0; w < workers_.size(); ++w)
            abandon_[w].store(true, std::memory_order_relaxed);
    }
    changed_.notify_all();
    for (std::thread& t : threads_)
        t.join();
    threads_.clear();
}

std::vector<ParallelSearch::Subtree> ParallelSearch::decompose(const std::vector<Integer>* fixed_objectives) {
    Search& search = *workers_[0];
    std::vector<Path> frontier(1); // the root
    const std::size_t target = kSubtreesPerThread * workers_.size();
    const auto start = std::chrono::steady_clock::now();
    const auto out_of_time = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
               kMaxSplitSeconds;
    };
    for (int level = 0; level < kMaxSplitLevels && frontier.size() < target && !out_of_time(); ++level) {
        std::vector<Path> next;
        bool split = false;
        for (std::size_t i = 0; i < frontier.size(); ++i) {
            // Out of time, or a limit (the threads then stop at once): the rest stay as they are.
            const auto keep_the_rest = [&] {
                next.insert(next.end(),
                            std::make_move_iterator(frontier.begin() + static_cast<std::ptrdiff_t>(i)),
                            std::make_move_iterator(frontier.end()));
                split = false;
            };
            if (out_of_time()) {
                keep_the_rest();
                break;
            }
            Search::Expansion e = search.expand(frontier[i], fixed_objectives);
            if (!search.stop_reason().empty()) {
                keep_the_rest();
                break;
            }
            switch (e.kind) {
            case Search::Expansion::Kind::Failed:
                break;
            case Search::Expansion::Kind::Solution:
                next.push_back(std::move(frontier[i]));
                break;
            case Search::Expansion::Kind::Split: {
                Path left = frontier[i];
                left.push_back(std::move(*e.left));
                frontier[i].push_back(std::move(*e.right));
                next.push_back(std::move(left));
                next.push_back(std::move(frontier[i]));
                split = true;
                break;
            }
            }
        }
        frontier = std::move(next);
        if (!split) break;
    }
    std::vector<Subtree> subtrees(frontier.size());
    for (std::size_t i = 0; i < frontier.size(); ++i)
        subtrees[i].path = std::move(frontier[i]);
    return subtrees;
}

void ParallelSearch::start_phase(Phase phase) {
    std::vector<Subtree> subtrees = decompose(phase == Phase::Canonical ? &optimum_ : nullptr);
    const std::lock_guard lock(mutex_);
    worker_stats_[0] = workers_[0]->stats();
    phase_ = phase;
    subtrees_ = std::move(subtrees);
    next_subtree_ = 0;
    take_order_ = take_order(subtrees_.size());
    cursor_ = 0;
    quitting_ = false;
    running_ = workers_.size();
    for (std::size_t w = 0; w < workers_.size(); ++w)
        threads_.emplace_back([this, w] { run_worker(w); });
}

std::vector<std::size_t> ParallelSearch::take_order(std::size_t subtrees) const {
    std::vector<std::size_t> order;
    if (!any_order()) {
        for (std::size_t i = 0; i < subtrees; ++i)
            order.push_back(i);
        return order;
    }
    // Any solution will do: the threads start in regions of the tree far apart (thread w at the
    // start of the w-th of as many blocks of the list), as work stealing would give a thread the
    // shallowest open branch. Where solutions are dense but the search order's first region is
    // hard (queens 200 in input order: subtree 0 takes 53,575 nodes, subtree 32 200), one of them
    // is found sooner.
    const std::size_t threads = workers_.size(), block = (subtrees + threads - 1) / threads;
    for (std::size_t offset = 0; offset < block; ++offset)
        for (std::size_t b = 0; b < threads; ++b)
            if (b * block + offset < subtrees) order.push_back(b * block + offset);
    return order;
}

bool ParallelSearch::needed(std::size_t index, bool including_itself) const {
    if (phase_ == Phase::Optimise) return true;
    const std::uint64_t limit = phase_ == Phase::Canonical ? 1 : solution_limit_;
    // Solutions found in the subtrees before `index` in search order, or in any subtree when any
    // solutions will do.
    const std::size_t counted = any_order() ? subtrees_.size() : index + (including_itself ? 1 : 0);
    std::uint64_t before = 0;
    for (std::size_t i = 0; i < counted && before < limit; ++i)
        before += subtrees_[i].found;
    return before < limit;
}

void ParallelSearch::abandon_unneeded() {
    for (std::size_t w = 0; w < workers_.size(); ++w) {
        if (working_on_[w] != kNone && !needed(working_on_[w], true))
            abandon_[w].store(true, std::memory_order_relaxed);
    }
}

void ParallelSearch::run_worker(std::size_t w) {
    Search& search = *workers_[w];
    std::unique_lock lock(mutex_);
    const bool optimising = phase_ == Phase::Optimise;
    const std::vector<Integer>* fixed = phase_ == Phase::Canonical ? &optimum_ : nullptr;
    for (;;) {
        while (next_subtree_ < subtrees_.size() && !needed(take_order_[next_subtree_], false))
            subtrees_[take_order_[next_subtree_++]].stopped = true;
        if (quitting_ || shared_.stopped() || next_subtree_ >= subtrees_.size()) break;
        const std::size_t index = take_order_[next_subtree_++];
        working_on_[w] = index;
        abandon_[w].store(false, std::memory_order_relaxed);
        const Path path = subtrees_[index].path;
        lock.unlock();
        search.restart_at(path, fixed);
        for (;;) {
            std::optional<Solution> solution = search.next();
            lock.lock();
            if (solution) {
                Solution ours(solution->values(), model_); // the caller's model, not the worker's copy
                if (optimising) {
                    // Offered and queued under one lock: the caller sees strictly improving values.
                    if (shared_.offer(search.objective_values())) improvements_.push_back(std::move(ours));
                } else {
                    subtrees_[index].solutions.push_back(std::move(ours));
                    ++subtrees_[index].found;
                    abandon_unneeded();
                    while ((index != cursor_ || any_order()) &&
                           subtrees_[index].solutions.size() >= kMaxHeld && !quitting_ &&
                           !shared_.stopped() && !abandon_[w].load(std::memory_order_relaxed))
                        changed_.wait_for(lock, kPollInterval);
                }
            }
            worker_stats_[w] = search.stats();
            changed_.notify_all();
            if (!solution) break;
            lock.unlock();
        }
        Subtree& done = subtrees_[index];
        (search.stop_reason().empty() ? done.finished : done.stopped) = true;
        working_on_[w] = kNone;
    }
    --running_;
    worker_stats_[w] = search.stats();
    changed_.notify_all();
}

std::optional<Solution> ParallelSearch::take_in_order(std::unique_lock<std::mutex>& lock, bool& finished) {
    for (;;) {
        if (cursor_ == subtrees_.size()) {
            finished = true;
            return std::nullopt;
        }
        Subtree& t = subtrees_[cursor_];
        if (!t.solutions.empty()) {
            Solution s = std::move(t.solutions.front());
            t.solutions.pop_front();
            return s;
        }
        if (t.finished) {
            ++cursor_;
            changed_.notify_all(); // a thread may wait for the caller to reach its subtree
            continue;
        }
        if (t.stopped || (running_ == 0 && !t.finished)) {
            finished = false;
            return std::nullopt;
        }
        changed_.wait_for(lock, kPollInterval);
        if (options_.interrupt && options_.interrupt()) shared_.stop("interrupted");
    }
}

std::optional<Solution> ParallelSearch::take_any(std::unique_lock<std::mutex>& lock, bool& finished) {
    for (;;) {
        bool all_finished = true;
        for (Subtree& t : subtrees_) {
            if (!t.solutions.empty()) {
                Solution s = std::move(t.solutions.front());
                t.solutions.pop_front();
                changed_.notify_all(); // its thread may wait for room
                return s;
            }
            all_finished = all_finished && t.finished;
        }
        if (all_finished || running_ == 0) {
            finished = all_finished;
            return std::nullopt;
        }
        changed_.wait_for(lock, kPollInterval);
        if (options_.interrupt && options_.interrupt()) shared_.stop("interrupted");
    }
}

void ParallelSearch::finish(Status status) {
    stop_workers();
    done_ = true;
    status_ = status;
    stop_reason_ = shared_.stop_reason();
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - shared_.start()).count();
}

std::optional<Solution> ParallelSearch::next() {
    if (done_) return std::nullopt;
    if (phase_ == Phase::NotStarted)
        start_phase(model_->objectives().empty() ? Phase::Enumerate : Phase::Optimise);
    std::unique_lock lock(mutex_);
    if (phase_ == Phase::Optimise) {
        while (improvements_.empty() && running_ > 0) {
            changed_.wait_for(lock, kPollInterval);
            if (options_.interrupt && options_.interrupt()) shared_.stop("interrupted");
        }
        if (!improvements_.empty()) {
            Solution s = std::move(improvements_.front());
            improvements_.pop_front();
            ++returned_;
            last_returned_ = s.values();
            return s;
        }
        lock.unlock();
        stop_workers();
        optimum_ = shared_.best();
        if (optimum_.empty() || shared_.stopped()) {
            finish(optimum_.empty() ? (shared_.stopped() ? Status::Unknown : Status::Unsatisfiable)
                                    : Status::Satisfiable);
            return std::nullopt;
        }
        start_phase(Phase::Canonical); // the best values are proven optimal
        lock.lock();
    }
    bool finished = false;
    std::optional<Solution> s = any_order() ? take_any(lock, finished) : take_in_order(lock, finished);
    lock.unlock();
    if (phase_ == Phase::Canonical) {
        // One answer: the optimum's values are proven whether or not the canonical one was found;
        // the canonical solution is not returned twice when the last improvement was that one.
        finish(Status::Optimal);
        if (!s || (last_returned_ && s->values() == *last_returned_)) return std::nullopt;
        ++returned_;
        return s;
    }
    if (s) {
        ++returned_;
        return s;
    }
    finish(finished ? (returned_ > 0 ? Status::AllSolutions : Status::Unsatisfiable)
                    : (returned_ > 0 ? Status::Satisfiable : Status::Unknown));
    return std::nullopt;
}

const Stats& ParallelSearch::stats() const {
    const std::lock_guard lock(mutex_);
    stats_ = Stats{};
    for (const Stats& s : worker_stats_) {
        stats_.nodes += s.nodes;
        stats_.failures += s.failures;
        stats_.propagations += s.propagations;
        stats_.max_depth = std::max(stats_.max_depth, s.max_depth);
    }
    stats_.solutions = returned_;
    stats_.seconds = seconds_.value_or(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - shared_.start()).count());
    return stats_;
}

} // namespace constrint
