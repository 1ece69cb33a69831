// backend_sim.cpp: a small stand-in for a StarRocks/Doris backend, used to
// make the ELF cores under testdata/core. It starts threads that look like a
// BE's (scan workers, compaction, vacuum, bthread timer, brpc epoll), parks
// them in typical blocking calls, then one scan worker reads through a null
// page pointer (fault address 0x40) inside starrocks::ParsedPageV1::read.
//
// usage: backend_sim MODE [PARKED]
//   MODE none   no SIGSEGV handler: the kernel (or gdb) dumps at the fault
//        raise  handler re-raises with raise(): NT_SIGINFO becomes SI_TKILL
//        kill   glog style: kill(getpid(), sig); another thread dumps the core
//        abort  handler calls abort(): SIGABRT with __restore_rt on the stack
//        check  a CHECK failure: the worker calls abort(); a glog-style handler
//               on SIGABRT re-sends it with kill(), another thread dumps
//   PARKED  extra idle threads (for the many-threads core), default 0
//
// Stacks are 128 KiB (pthread attr) to keep the cores small.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <vector>

static std::atomic<int> g_ready{0};
static int g_expected = 0;
static const char* g_mode = "none";

static void wait_all_ready() {
    while (g_ready.load() < g_expected) usleep(1000);
    usleep(50000);
}

static void spawn(const char* name, void* (*fn)(void*), void* arg) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 128 * 1024);
    pthread_t t;
    if (pthread_create(&t, &attr, fn, arg) != 0) {
        perror("pthread_create");
        exit(1);
    }
    pthread_setname_np(t, name);
    pthread_attr_destroy(&attr);
}

namespace starrocks {

struct Status {
    int code = 0;
    static Status OK() { return Status(); }
};

class Column {
public:
    virtual ~Column() = default;
    virtual void append_numbers(const void* p, size_t n) = 0;
};

template <typename T>
class FixedLengthColumn final : public Column {
public:
    void append_numbers(const void* p, size_t n) override {
        const T* v = static_cast<const T*>(p);
        for (size_t i = 0; i < n; i++) _sum += v[i];
    }
    T _sum = 0;
};

struct PageHeader {
    const int* values;
    size_t num_values;
};

template <typename T>
static inline __attribute__((always_inline)) T decode_value(const T* base, size_t i) {
    return base[i + 16];
}

class ParsedPageV1 {
public:
    explicit ParsedPageV1(const PageHeader* h) : _h(h) {}
    __attribute__((noinline)) Status read(Column* dst, size_t* n);

private:
    const PageHeader* _h;
};

Status ParsedPageV1::read(Column* dst, size_t* n) {
    int buf[64];
    size_t cnt = *n < 64 ? *n : 64;
    for (size_t i = 0; i < cnt; i++) {
        buf[i] = decode_value<int>(_h->values, i);
    }
    dst->append_numbers(buf, cnt);
    *n = cnt;
    return Status::OK();
}

namespace {
__attribute__((noinline)) void wait_for_io(int ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (true) nanosleep(&ts, nullptr);
}
} // namespace

class OlapScanner {
public:
    explicit OlapScanner(int id) : _id(id) {}
    __attribute__((noinline)) Status get_next(Column* col);

private:
    int _id;
};

static pthread_mutex_t g_cv_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) void check_failed(const char* expr) {
    fprintf(stderr, "Check failed: %s\n", expr);
    abort();
}

Status OlapScanner::get_next(Column* col) {
    if (_id == 0) {
        wait_all_ready();
        if (strcmp(g_mode, "check") == 0) check_failed("num_rows == expected_rows");
        PageHeader* h = nullptr;
        static PageHeader null_page = {nullptr, 8};
        h = &null_page;
        ParsedPageV1 page(h);
        size_t n = h->num_values;
        Status st = page.read(col, &n);
        asm volatile("" ::: "memory");
        return st;
    }
    if (_id == 1) {
        g_ready++;
        wait_for_io(1000);
    }
    pthread_mutex_lock(&g_cv_mu);
    g_ready++;
    while (true) pthread_cond_wait(&g_cv, &g_cv_mu);
    return Status::OK();
}

class ThreadPool {
public:
    explicit ThreadPool(std::function<void()> task) : _task(std::move(task)) {}
    __attribute__((noinline)) void dispatch_thread() {
        _task();
    }

private:
    std::function<void()> _task;
};

class ScanNode {
public:
    void submit_scan_tasks(int id);
};

static void* pool_main(void* arg) {
    static_cast<ThreadPool*>(arg)->dispatch_thread();
    return nullptr;
}

void ScanNode::submit_scan_tasks(int id) {
    auto* pool = new ThreadPool([id]() {
        FixedLengthColumn<int> col;
        OlapScanner scanner(id);
        Status st = scanner.get_next(&col);
        if (st.code != 0) abort();
    });
    spawn("rs_normal [work", pool_main, pool);
}

class CompactionManager {
public:
    __attribute__((noinline)) void _schedule() {
        pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
        pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
        pthread_mutex_lock(&mu);
        g_ready++;
        while (true) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 3600;
            pthread_cond_timedwait(&cv, &mu, &ts);
        }
    }
};

static void* compaction_main(void*) {
    CompactionManager m;
    m._schedule();
    return nullptr;
}

namespace lake {
static __attribute__((noinline)) int collect_garbage_files(int fd, std::vector<int>* out) {
    char buf[256];
    g_ready++;
    ssize_t n = read(fd, buf, sizeof(buf));
    out->push_back((int)n);
    return (int)n;
}

__attribute__((noinline)) void vacuum_main() {
    int p[2];
    if (pipe(p) != 0) abort();
    std::vector<int> files;
    while (true) collect_garbage_files(p[0], &files);
}
} // namespace lake

static void* vacuum_thread(void*) {
    lake::vacuum_main();
    return nullptr;
}

} // namespace starrocks

static int g_futex_word = 0;

__attribute__((noinline)) void* RunLightTimerTask(void*) {
    g_ready++;
    while (true) syscall(SYS_futex, &g_futex_word, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
    return nullptr;
}

namespace brpc {
class EventDispatcher {
public:
    __attribute__((noinline)) void Run() {
        int ep = epoll_create1(0);
        struct epoll_event evs[4];
        g_ready++;
        while (true) epoll_wait(ep, evs, 4, -1);
    }
};
static void* epoll_main(void*) {
    EventDispatcher d;
    d.Run();
    return nullptr;
}
} // namespace brpc

static void* parked_main(void*) {
    g_ready++;
    while (true) pause();
    return nullptr;
}

static void failure_signal_handler(int sig, siginfo_t*, void*) {
    if (strcmp(g_mode, "abort") == 0) {
        abort();
    }
    signal(sig, SIG_DFL);
    if (strcmp(g_mode, "kill") == 0 || strcmp(g_mode, "check") == 0) {
        kill(getpid(), sig); // glog: process-directed, another thread takes it
        sleep(5);            // the crashing thread stays inside the handler
        return;
    }
    raise(sig);
}

int main(int argc, char** argv) {
    if (argc > 1) g_mode = argv[1];
    int parked = argc > 2 ? atoi(argv[2]) : 0;
    if (strcmp(g_mode, "none") != 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = failure_signal_handler;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, nullptr);
        if (strcmp(g_mode, "check") == 0) sigaction(SIGABRT, &sa, nullptr);
    }
    g_expected = 2 + 1 + 1 + 1 + 1 + parked;
    for (int i = 0; i < parked; i++) spawn("parked", parked_main, nullptr);
    spawn("compaction", starrocks::compaction_main, nullptr);
    spawn("vacuum", starrocks::vacuum_thread, nullptr);
    spawn("bthread_timer", RunLightTimerTask, nullptr);
    spawn("brpc_epoll", brpc::epoll_main, nullptr);
    starrocks::ScanNode node;
    for (int i = 2; i >= 0; i--) node.submit_scan_tasks(i);
    while (true) sleep(100);
}
