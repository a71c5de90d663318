// Run-time compilation of the fused kernels (NVRTC, no GPU needed) and the on-disk kernel cache:
// compiling for sm_90 and sm_80, the ptxas register report, hits, misses, corrupt and truncated
// files, concurrent writers (threads and processes), processes compiling one kernel at once, and the traits
// of every configuration the solver picks for every preset compiled as C++ by NVRTC.
#include "cuda/fused/fused_compiler.hpp"
#include "flashrnn/core/error.hpp"
#include "flashrnn/core/stream.hpp"

#include <doctest/doctest.h>

#if FLASHRNN_WITH_CUDA

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>

#include "nvrtc_test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

bool is_valid_entry(const KernelCache& cache, const std::string& key) {
    return cache.load(key).has_value();
}

// Forks `count` processes, the i-th running body(i) and exiting with its status (an exception: 3).
std::vector<pid_t> fork_children(int count, const std::function<int(int)>& body) {
    std::vector<pid_t> children;
    for (int i = 0; i < count; ++i) {
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            int status = 3;
            try {
                status = body(i);
            } catch (...) {
            }
            ::_exit(status);
        }
        children.push_back(child);
    }
    return children;
}

void check_children_succeed(const std::vector<pid_t>& children) {
    for (pid_t child : children) {
        int status = -1;
        ::waitpid(child, &status, 0);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
}

} // namespace

TEST_CASE("nvrtc: compiles a kernel with its traits for sm_90 and sm_80 and reads the register report") {
    TemporaryFolder folder;
    const FusedKernelTraits traits = lstm_traits();
    for (const char* architecture : {"sm_90", "sm_80"}) {
        CAPTURE(architecture);
        const CompiledKernel kernel =
            compile_fused_kernel(kTraitsProbe, traits, architecture, in_folder(folder.path));
        CAPTURE(kernel.log);
        CHECK(kernel.architecture == architecture);
        CHECK(kernel.lowered_name == "traits_probe");
        CHECK(kernel.cubin.size() > 1000);
        CHECK(!kernel.from_cache);
        // ptxas -v is on; with a GPU driver the cubin may come from its compute cache instead.
        if (kernel.registers.source == RegisterSource::ptxas_log)
            CHECK(kernel.log.find("Used ") != std::string::npos);
        else
            CHECK((cuda_device_available() || kernel.registers.source == RegisterSource::none));
        if (kernel.registers.source != RegisterSource::none) CHECK(kernel.registers.registers_per_thread > 0);
        CHECK(kernel.registers.registers_per_thread <= 255);
        CHECK(kernel.registers.spill_store_bytes == 0);
    }
}

TEST_CASE("nvrtc: a spilling kernel is reported and its feedback tightens the tiling model") {
    TemporaryFolder folder;
    CompileOptions options = in_folder(folder.path);
    options.extra_options = {"--maxrregcount=32"};
    const FusedKernelTraits traits = lstm_traits();
    const CompiledKernel kernel = compile_fused_kernel(kSpiller, traits, "sm_90", options);
    CHECK(kernel.lowered_name == "_Z7spillerILi64EEvPKfPf");
    CHECK(kernel.registers.registers_per_thread <= 32);
    if (kernel.registers.source == RegisterSource::ptxas_log) {
        CHECK(kernel.registers.spill_store_bytes > 0);
        CHECK(kernel.registers.spill_load_bytes > 0);
    }
    CHECK(register_feedback(traits, kernel).spill_bytes > 0);

    // The paper's loop (Fig. 5): the spilling configuration goes, the next one holds less of R in registers.
    FusedTilingRequest request;
    request.cell = Cell::lstm;
    request.heads = 4;
    request.head_dim = 64;
    request.batch = 16;
    const FusedTilingRequest tightened = with_feedback(request, register_feedback(traits, kernel));
    const FusedKernelTraits next = choose_fused_tiling(preset("h100"), tightened).traits;
    CHECK(next.r_registers_per_thread < traits.r_registers_per_thread);
    CHECK(next.key() != traits.key());
}

TEST_CASE("ptxas report: registers, spills and stack of the named entry only") {
    const std::string log =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function '_Z1aPf' for 'sm_90'\n"
        "ptxas info    : Function properties for _Z1aPf\n"
        "ptxas         .     48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 48 bytes cumulative stack size\n"
        "ptxas info    : Compiling entry function 'b' for 'sm_90'\n"
        "ptxas info    : Function properties for b\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 10 registers, used 1 barriers, 256 bytes smem\n";
    const auto a = parse_ptxas_report(log, "_Z1aPf");
    REQUIRE(a);
    CHECK(*a == RegisterReport{255, 40, 36, 48, RegisterSource::ptxas_log});
    const auto b = parse_ptxas_report(log, "b");
    REQUIRE(b);
    CHECK(*b == RegisterReport{10, 0, 0, 0, RegisterSource::ptxas_log});
    CHECK(!parse_ptxas_report(log, "c"));
    // The older one-line form (no "used N barriers").
    CHECK(parse_ptxas_report("ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
                             "ptxas info    : Used 32 registers, 352 bytes cmem[0]\n",
                             "k")
              ->registers_per_thread == 32);
}

TEST_CASE("kernel cache: a hit returns the same kernel, and traits, architecture and source change the key") {
    TemporaryFolder folder;
    const FusedKernelTraits traits = lstm_traits();
    const CompiledKernel first = compile_fused_kernel(kTraitsProbe, traits, "sm_90", in_folder(folder.path));
    const CompiledKernel second = compile_fused_kernel(kTraitsProbe, traits, "sm_90", in_folder(folder.path));
    CHECK(!first.from_cache);
    CHECK(second.from_cache);
    CHECK(second.cubin == first.cubin);
    CHECK(second.registers == first.registers);
    CHECK(second.lowered_name == first.lowered_name);
    CHECK(second.cache_key == first.cache_key);

    const CompiledKernel other_traits =
        compile_fused_kernel(kTraitsProbe, lstm_traits(128), "sm_90", in_folder(folder.path));
    const CompiledKernel other_architecture =
        compile_fused_kernel(kTraitsProbe, traits, "sm_80", in_folder(folder.path));
    KernelSource edited = kTraitsProbe;
    edited.text += "\n// edited\n";
    const CompiledKernel other_source = compile_fused_kernel(edited, traits, "sm_90", in_folder(folder.path));
    for (const CompiledKernel* k : {&other_traits, &other_architecture, &other_source}) {
        CHECK(!k->from_cache);
        CHECK(k->cache_key != first.cache_key);
    }
    // Without the cache nothing is read or written.
    CompileOptions no_cache = in_folder(folder.path);
    no_cache.use_cache = false;
    CHECK(!compile_fused_kernel(kTraitsProbe, traits, "sm_90", no_cache).from_cache);
}

TEST_CASE("kernel cache: a truncated, corrupt or foreign file is a miss, recompiled and replaced") {
    TemporaryFolder folder;
    const FusedKernelTraits traits = lstm_traits();
    const CompiledKernel compiled =
        compile_fused_kernel(kTraitsProbe, traits, "sm_90", in_folder(folder.path));
    const KernelCache cache(folder.path);
    const std::filesystem::path file = cache.path_of(compiled.cache_key);
    REQUIRE(std::filesystem::exists(file));
    const auto size = std::filesystem::file_size(file);

    auto damage = [&](const char* how) {
        CAPTURE(how);
        if (std::string(how) == "truncated") {
            std::filesystem::resize_file(file, size / 2);
        } else if (std::string(how) == "flipped byte") {
            std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(static_cast<std::streamoff>(size / 2));
            char c = 0;
            f.seekg(static_cast<std::streamoff>(size / 2));
            f.get(c);
            f.seekp(static_cast<std::streamoff>(size / 2));
            f.put(static_cast<char>(c ^ 0x5a));
        } else if (std::string(how) == "empty") {
            std::ofstream(file, std::ios::trunc | std::ios::binary);
        } else { // another key's entry under this name (a hash collision)
            KernelCache(folder.path).store("another key", compiled);
            std::filesystem::copy_file(cache.path_of("another key"), file,
                                       std::filesystem::copy_options::overwrite_existing);
        }
        CHECK(!cache.load(compiled.cache_key));
        const CompiledKernel again =
            compile_fused_kernel(kTraitsProbe, traits, "sm_90", in_folder(folder.path));
        CHECK(!again.from_cache);
        CHECK(again.cubin == compiled.cubin);
        CHECK(is_valid_entry(cache, compiled.cache_key)); // replaced by a good one
        CHECK(compile_fused_kernel(kTraitsProbe, traits, "sm_90", in_folder(folder.path)).from_cache);
    };
    for (const char* how : {"truncated", "flipped byte", "empty", "foreign key"})
        damage(how);
}

TEST_CASE("kernel cache: concurrent writers (threads and processes) never leave a partial entry") {
    TemporaryFolder folder;
    const CompiledKernel compiled =
        compile_fused_kernel(kTraitsProbe, lstm_traits(), "sm_90", in_folder(folder.path));
    const std::string key = "concurrent";
    const KernelCache cache(folder.path / "shared");

    // Writers store entries of different sizes under one key while a reader checks every read.
    auto entry = [&](int writer) {
        CompiledKernel k = compiled;
        k.log = std::string(static_cast<std::size_t>(writer) * 10007, static_cast<char>('a' + writer));
        return k;
    };
    constexpr int kThreads = 4, kProcesses = 3, kRounds = 40;
    const std::vector<pid_t> children = fork_children(kProcesses, [&](int p) {
        for (int round = 0; round < kRounds; ++round)
            cache.store(key, entry(kThreads + p));
        return 0;
    });
    std::atomic<bool> writing{true};
    std::atomic<int> bad_reads{0}, good_reads{0};
    std::thread reader([&] {
        while (writing) {
            if (auto k = cache.load(key)) {
                const bool whole = k->cubin == compiled.cubin && !k->log.empty() &&
                                   k->log == std::string(k->log.size(), k->log.front());
                (whole ? good_reads : bad_reads)++;
            }
        }
    });
    std::vector<std::thread> writers;
    for (int t = 0; t < kThreads; ++t)
        writers.emplace_back([&, t] {
            for (int round = 0; round < kRounds; ++round)
                cache.store(key, entry(t + 1));
        });
    for (std::thread& w : writers)
        w.join();
    check_children_succeed(children);
    writing = false;
    reader.join();
    CHECK(bad_reads == 0);
    CHECK(good_reads > 0);
    CHECK(is_valid_entry(cache, key));
    // No temporary file is left behind.
    for (const auto& file : std::filesystem::directory_iterator(cache.dir()))
        CHECK(file.path().filename().string().find(".tmp.") == std::string::npos);
}

// What the ranks of a distributed job do at start-up: each process compiles the same kernel at the same
// moment into one cache folder that does not exist yet (released together through a pipe).
TEST_CASE("kernel cache: processes compiling the same kernel at once leave one whole entry") {
    TemporaryFolder folder;
    CompileOptions options = in_folder(folder.path / "new" / "cache");
    const FusedKernelTraits traits = lstm_traits();
    constexpr int kProcesses = 3;
    int gate[2];
    REQUIRE(::pipe(gate) == 0);
    const std::vector<pid_t> children = fork_children(kProcesses, [&](int) {
        char go = 0;
        if (::read(gate[0], &go, 1) != 1) return 1;
        const CompiledKernel k = compile_fused_kernel(kTraitsProbe, traits, "sm_90", options);
        return k.cubin.size() > 1000 && k.lowered_name == "traits_probe" ? 0 : 2;
    });
    const std::string go(kProcesses, 'g');
    REQUIRE(::write(gate[1], go.data(), go.size()) == kProcesses);
    ::close(gate[0]);
    ::close(gate[1]);
    const CompiledKernel mine = compile_fused_kernel(kTraitsProbe, traits, "sm_90", options);
    check_children_succeed(children);
    const KernelCache cache(*options.cache_dir);
    const auto entry = cache.load(mine.cache_key);
    REQUIRE(entry.has_value());
    CHECK(entry->cubin == mine.cubin);
    int files = 0;
    for (const auto& file : std::filesystem::directory_iterator(cache.dir())) {
        CHECK(file.path().filename().string().find(".tmp.") == std::string::npos);
        ++files;
    }
    CHECK(files == 1); // one key, one entry
}

TEST_CASE("kernel cache: FLASHRNN_CACHE_DIR, then XDG_CACHE_HOME, then ~/.cache") {
    const char* saved_dir = std::getenv("FLASHRNN_CACHE_DIR");
    const char* saved_xdg = std::getenv("XDG_CACHE_HOME");
    const std::string dir = saved_dir ? saved_dir : "", xdg = saved_xdg ? saved_xdg : "";
    ::setenv("FLASHRNN_CACHE_DIR", "/tmp/a", 1);
    ::setenv("XDG_CACHE_HOME", "/tmp/b", 1);
    CHECK(default_kernel_cache_dir() == "/tmp/a");
    ::unsetenv("FLASHRNN_CACHE_DIR");
    CHECK(default_kernel_cache_dir() == "/tmp/b/flashrnn");
    ::unsetenv("XDG_CACHE_HOME");
    if (const char* home = std::getenv("HOME"))
        CHECK(default_kernel_cache_dir() == std::filesystem::path(home) / ".cache" / "flashrnn");
    saved_dir ? ::setenv("FLASHRNN_CACHE_DIR", dir.c_str(), 1) : ::unsetenv("FLASHRNN_CACHE_DIR");
    saved_xdg ? ::setenv("XDG_CACHE_HOME", xdg.c_str(), 1) : ::unsetenv("XDG_CACHE_HOME");
}

TEST_CASE("nvrtc: the CUDA headers are looked for where the running machine says, then the build's toolkit") {
    const char* saved = std::getenv("FLASHRNN_CUDA_INCLUDE_DIRS");
    const std::string saved_value = saved ? saved : "";
    TemporaryFolder first, second;
    const std::string missing = (first.path / "no-such-folder").string();
    ::setenv("FLASHRNN_CUDA_INCLUDE_DIRS",
             (first.path.string() + ":" + missing + "::" + second.path.string()).c_str(), 1);
    const std::vector<std::string> dirs = nvrtc_include_dirs();
    REQUIRE(dirs.size() >= 3);
    CHECK(dirs[0] == first.path.string()); // the environment's folders first, in order
    CHECK(dirs[1] == second.path.string());
    CHECK(std::find(dirs.begin(), dirs.end(), missing) == dirs.end()); // only folders that exist
    // The build's toolkit is still searched after them: it has the headers the kernels include.
    CHECK(std::any_of(dirs.begin() + 2, dirs.end(), [](const std::string& dir) {
        return std::filesystem::exists(std::filesystem::path(dir) / "cuda_bf16.h");
    }));
    ::setenv("FLASHRNN_CUDA_INCLUDE_DIRS", (second.path.string() + ":" + second.path.string()).c_str(), 1);
    const std::vector<std::string> once = nvrtc_include_dirs();
    CHECK(std::count(once.begin(), once.end(), second.path.string()) == 1); // each once
    saved ? ::setenv("FLASHRNN_CUDA_INCLUDE_DIRS", saved_value.c_str(), 1)
          : ::unsetenv("FLASHRNN_CUDA_INCLUDE_DIRS");
}

TEST_CASE("nvrtc: the fused kernels compile for every configuration the solver picks, for every preset") {
    TemporaryFolder folder;
    CompileOptions options = in_folder(folder.path);
    options.use_cache = false;
    int compiled = 0, infeasible = 0;
    const auto start = std::chrono::steady_clock::now();
    for (std::string_view name : preset_names()) {
        const DeviceLimits limits = preset(name);
        for (Cell cell : all_cells)
            for (DType dtype : {DType::fp32, DType::bf16})
                for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
                    for (auto [heads, head_dim, batch] : {std::tuple{12, 64, 16}, std::tuple{1, 768, 16}}) {
                        FusedTilingRequest request = request_of(pass, cell, dtype, heads, head_dim, batch);
                        // Without a split of the accumulated dimension some large heads do not fit
                        // (e.g. fp32 backward at DH 768 on the A40); the H100 runs every one here.
                        if (!fused_tiling_exists(limits, request)) {
                            CHECK(name != "h100_sxm");
                            ++infeasible;
                            continue;
                        }
                        const FusedKernelTraits traits = choose_fused_tiling(limits, request).traits;
                        CAPTURE(traits.key());
                        const CompiledKernel kernel =
                            compile_fused_kernel(fused_kernel_source(pass), traits,
                                                 architecture_of(limits.compute_capability()), options);
                        if (kernel.registers.source != RegisterSource::none)
                            CHECK(kernel.registers.registers_per_thread > 0);
                        ++compiled;
                    }
    }
    MESSAGE(compiled << " configurations compiled with NVRTC (" << infeasible << " sizes without one) in "
                     << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                     << " s");
}

#else

TEST_CASE("nvrtc: without the CUDA toolkit the compiler says so") {
    CHECK_THROWS_WITH_AS(flashrnn::nvrtc_version(), doctest::Contains("built without the CUDA toolkit"),
                         flashrnn::UnsupportedError);
}

#endif
