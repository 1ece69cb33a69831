// A small program that starts threads the way C++ backends often do:
// through captureless lambdas used as C function pointers
// (pthread_create(&t, nullptr, [](void*) -> void* {...}, arg)). GCC emits
// the lambda's static invoker `_FUN` as a subprogram inside the closure
// type's DIE, itself inside the enclosing function's DIE, with the
// lambda's operator() and the STL calls inlined into it; the cold path
// goes to `_FUN.cold`. It also has local classes (methods defined inside
// a function's class), a captureless lambda used as a qsort comparator,
// and a lambda inside a function that is always inlined (so the enclosing
// function exists only as an abstract instance). Used by the symbolizer
// tests (built by build.sh; never run by the tests).
#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))
#define ALWAYS_INLINE inline __attribute__((always_inline))

namespace starrocks {

struct WorkItem {
    int id;
    std::vector<int> values;
    std::string label;
};

class ThreadPool {
public:
    NOINLINE int start(int n) {
        std::vector<pthread_t> tids;
        for (int i = 0; i < n; ++i) {
            pthread_t t;
            auto* item = new WorkItem{i, std::vector<int>(16, i), "pool"};
            // The static invoker of this lambda is what the thread runs.
            int rc = pthread_create(
                    &t, nullptr,
                    [](void* arg) -> void* {
                        auto* w = static_cast<WorkItem*>(arg);
                        std::sort(w->values.begin(), w->values.end(), [](int a, int b) { return a > b; });
                        std::map<std::string, int> counts;
                        for (int v : w->values) counts[w->label + std::to_string(v % 3)] += v;
                        if (__builtin_expect(counts.size() > 1000, 0)) {
                            throw std::runtime_error("too many keys in " + w->label);
                        }
                        long total = 0;
                        for (const auto& [k, v] : counts) total += v + (long)k.size();
                        delete w;
                        return reinterpret_cast<void*>(total);
                    },
                    item);
            if (rc == 0) tids.push_back(t);
        }
        long sum = 0;
        for (pthread_t t : tids) {
            void* r = nullptr;
            pthread_join(t, &r);
            sum += reinterpret_cast<long>(r);
        }
        return (int)sum;
    }
};

// A function that is always inlined: the closure type and its _FUN live
// under the abstract instance of spawn_flusher.
ALWAYS_INLINE pthread_t spawn_flusher(std::vector<std::string>* rows) {
    pthread_t t{};
    pthread_create(
            &t, nullptr,
            [](void* arg) -> void* {
                auto* v = static_cast<std::vector<std::string>*>(arg);
                std::string joined;
                for (const auto& s : *v) {
                    joined.append(s);
                    joined.push_back(',');
                }
                v->push_back(joined);
                return nullptr;
            },
            rows);
    return t;
}

NOINLINE int flush_all(int n) {
    std::vector<std::string> a{"x", "y"}, b{"z"};
    for (int i = 0; i < n; ++i) a.push_back(std::to_string(i));
    pthread_t t1 = spawn_flusher(&a);
    pthread_t t2 = spawn_flusher(&b);
    pthread_join(t1, nullptr);
    pthread_join(t2, nullptr);
    return (int)(a.back().size() + b.back().size());
}

namespace pipeline {

NOINLINE int run_operators(const std::vector<int>& in) {
    // A local class with out-of-line (noinline) and inlined methods.
    struct Projector {
        int factor;
        NOINLINE int project(int v) const {
            std::vector<int> tmp(4, v);
            std::reverse(tmp.begin(), tmp.end());
            return tmp[0] * factor + tmp[3];
        }
        int twice(int v) const { return project(v) + project(v + 1); }
    };
    struct Filter {
        NOINLINE static bool keep(int v) {
            std::string s = std::to_string(v);
            return s.find('7') == std::string::npos;
        }
    };
    Projector p{3};
    int acc = 0;
    for (int v : in) {
        if (Filter::keep(v)) acc += p.twice(v);
    }
    // A captureless lambda as a C comparator.
    std::vector<int> sorted(in);
    std::qsort(sorted.data(), sorted.size(), sizeof(int), [](const void* a, const void* b) -> int {
        int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
        return (x > y) - (x < y);
    });
    return acc + (sorted.empty() ? 0 : sorted.front());
}

} // namespace pipeline
} // namespace starrocks

int main(int argc, char** argv) {
    (void)argv;
    starrocks::ThreadPool pool;
    int a = pool.start(argc + 1);
    int b = starrocks::flush_all(argc);
    std::vector<int> in{5, 17, 3, argc, 42};
    int c = starrocks::pipeline::run_operators(in);
    // A captureless lambda in main itself, started as a thread.
    pthread_t t;
    pthread_create(
            &t, nullptr,
            [](void* arg) -> void* {
                int n = *static_cast<int*>(arg);
                std::vector<std::string> names;
                for (int i = 0; i < n + 2; ++i) names.emplace_back("worker-" + std::to_string(i));
                std::sort(names.begin(), names.end());
                std::printf("%s\n", names.back().c_str());
                return nullptr;
            },
            &argc);
    pthread_join(t, nullptr);
    std::printf("%d %d %d\n", a, b, c);
    return 0;
}
