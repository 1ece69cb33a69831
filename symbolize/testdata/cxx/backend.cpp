// A small program shaped like a Doris/StarRocks backend, used to test the
// in-process ELF/DWARF symbolizer: namespaces starrocks::, starrocks::lake::
// and doris::segment_v2::, templates, lambdas, std::function, anonymous
// namespaces, inlined helper chains and GCC clones (.cold, .isra,
// .constprop, .part). Built by build.sh; never run by the tests.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#define NOINLINE __attribute__((noinline))
#define COLD __attribute__((cold, noinline))

namespace starrocks {

struct Status {
    int code = 0;
    std::string msg;
    bool ok() const { return code == 0; }
    static Status OK() { return Status(); }
    static Status Error(const char* m) { Status s; s.code = 1; s.msg = m; return s; }
};

namespace {
inline int mix3(int a) { return (a * 2654435761u) >> 7; }
inline int mix2(int a) { return mix3(a ^ 0x55) + a; }
inline int mix1(int a) { return mix2(a + 7) * 3; }
NOINLINE int anon_worker(int x) { return mix1(x) ^ mix1(x + 1); }
} // namespace

COLD void report_failure(const char* what, int v) {
    std::fprintf(stderr, "failure %s %d\n", what, v);
    std::abort();
}

template <typename T>
class ColumnVector {
public:
    explicit ColumnVector(size_t n) : _data(n) {}
    NOINLINE T sum() const {
        T s{};
        for (const auto& v : _data) s += v;
        return s;
    }
    NOINLINE void fill(std::function<T(size_t)> f) {
        for (size_t i = 0; i < _data.size(); ++i) _data[i] = f(i);
    }
    NOINLINE void sort_desc() {
        std::sort(_data.begin(), _data.end(), [](const T& a, const T& b) { return b < a; });
    }
    size_t size() const { return _data.size(); }
    T at(size_t i) const {
        if (__builtin_expect(i >= _data.size(), 0)) report_failure("ColumnVector::at", (int)i);
        return _data[i];
    }
private:
    std::vector<T> _data;
};

class ChunkSource {
public:
    virtual ~ChunkSource() = default;
    NOINLINE Status buffer_next_batch_chunks_blocking(size_t n) {
        ColumnVector<int64_t> col(n);
        col.fill([this](size_t i) { return (int64_t)(i * _scale + anon_worker((int)i)); });
        col.sort_desc();
        if (col.sum() == 42) return Status::Error("magic");
        return Status::OK();
    }
    int _scale = 3;
};

namespace lake {

class TabletWriter {
public:
    NOINLINE Status write(const std::vector<std::string>& rows) {
        std::map<std::string, int> counts;
        for (const auto& r : rows) counts[r]++;
        auto total = std::count_if(counts.begin(), counts.end(),
                                   [](const std::pair<const std::string, int>& p) { return p.second > 1; });
        if (total > 100000) report_failure("TabletWriter::write", (int)total);
        return Status::OK();
    }
    NOINLINE Status flush(int level) {
        std::unordered_map<int, std::string> m;
        for (int i = 0; i < level; ++i) m[i] = std::to_string(i * 7);
        size_t s = 0;
        for (auto& [k, v] : m) s += v.size() + (size_t)k;
        return s == 1 ? Status::Error("flush") : Status::OK();
    }
};

NOINLINE int compaction_score(const std::vector<double>& v, double w) {
    double acc = 0;
    for (double x : v) acc += x * w;
    if (acc < -1e300) report_failure("compaction_score", 0);
    return (int)acc;
}

} // namespace lake

// A large function with a rarely taken branch: GCC splits it into a
// .part/.cold clone.
NOINLINE int process_batch(const int* p, int n, int mode) {
    if (__builtin_expect(p == nullptr, 0)) {
        std::string msg = "null batch at mode " + std::to_string(mode);
        for (int i = 0; i < 3; ++i) msg += std::to_string(i * mode);
        throw std::runtime_error(msg);
    }
    int acc = 0;
    for (int i = 0; i < n; ++i) acc += anon_worker(p[i]) * mode;
    return acc;
}

// Partial inlining (ipa-split) candidate: a cheap guard in front of a big
// body gives a .part.0 clone.
static std::map<int, std::string> g_cache;
static int cached_len(int k) {
    if (k < 1000) return k & 7;
    auto it = g_cache.find(k);
    if (it == g_cache.end()) {
        std::string v = std::to_string(k) + ":" + std::to_string(k * k) + ":" + std::to_string(k * 3);
        for (int i = 0; i < k % 5; ++i) v += std::to_string(i);
        it = g_cache.emplace(k, v).first;
    }
    return (int)it->second.size();
}
NOINLINE int cache_user_a(int k) { return cached_len(k) + cached_len(k + 1); }
NOINLINE int cache_user_b(int k) { return cached_len(k * 2) * 3; }
NOINLINE int cache_user_c(int k) { return cached_len(k * 5) - cached_len(k * 7); }
NOINLINE int cache_user_d(int k) { return cached_len(k - 3) ^ cached_len(k + 11); }

// Constant-propagated and ISRA-clone candidates.
static NOINLINE int scale_value(int v, int factor, const std::string& label) {
    return v * factor + (int)label.size();
}
NOINLINE int use_scale(int v) {
    static const std::string label = "scale";
    return scale_value(v, 4, label) + scale_value(v + 1, 4, label);
}

} // namespace starrocks

namespace doris {
namespace segment_v2 {

struct PageHandle { std::vector<uint8_t> data; };

template <typename K, int N>
class IndexedColumnIterator {
public:
    NOINLINE int seek_at_or_after(const K& key) {
        auto it = std::lower_bound(_keys.begin(), _keys.end(), key);
        return (int)(it - _keys.begin()) + N;
    }
    std::vector<K> _keys;
};

class SegmentIterator {
public:
    NOINLINE int next_batch(std::function<int(int)> cb) {
        int s = 0;
        for (int i = 0; i < 8; ++i) s += cb(i);
        auto local = [&s](int k) { s ^= k; return s; };
        return local(s) + _read_columns(s);
    }
private:
    NOINLINE int _read_columns(int n) {
        PageHandle h;
        h.data.resize((size_t)(n & 0xff) + 1);
        std::fill(h.data.begin(), h.data.end(), (uint8_t)n);
        int sum = 0;
        for (auto b : h.data) sum += b;
        return sum;
    }
};

} // namespace segment_v2
} // namespace doris

int main(int argc, char** argv) {
    using namespace starrocks;
    ChunkSource cs;
    auto st = cs.buffer_next_batch_chunks_blocking((size_t)argc * 16);
    lake::TabletWriter tw;
    std::vector<std::string> rows(argv, argv + argc);
    st = tw.write(rows);
    st = tw.flush(argc + 3);
    std::vector<double> dv(argc, 1.5);
    int score = lake::compaction_score(dv, 2.0);
    int arr[4] = {1, 2, 3, argc};
    int pb = process_batch(arr, 4, argc);
    doris::segment_v2::IndexedColumnIterator<int64_t, 3> it1;
    it1._keys = {1, 5, 9};
    doris::segment_v2::IndexedColumnIterator<std::string, 1> it2;
    it2._keys = {"a", "b"};
    doris::segment_v2::SegmentIterator si;
    int nb = si.next_batch([argc](int i) { return i * argc; });
    ColumnVector<double> cd(4);
    cd.fill([](size_t i) { return i * 0.5; });
    cd.sort_desc();
    std::printf("%d %d %d %d %d %d %g %d\n", st.code, score, pb, it1.seek_at_or_after(5),
                it2.seek_at_or_after("b"), nb, cd.sum(), use_scale(argc));
    std::printf("%d\n", cache_user_a(argc) + cache_user_b(argc) + cache_user_c(argc) + cache_user_d(argc));
    return cd.at((size_t)argc) > 100 ? 1 : 0;
}
