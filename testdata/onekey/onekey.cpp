// onekey.cpp: crashes of a small stand-in for a backend, used to check that
// one crash gets one signature key whatever it is read from (issue 10.2):
// the core, gdb's bt and thread apply all bt, glog 0.4/0.7 and Doris boost
// dumps, and module+offset or bare addresses symbolized with the binary.
//
// usage: onekey MODE
//   null    a null dereference under an inlined STL call (std::map::find
//           on a null map) inside starrocks::lake::collect_garbage_files,
//           reached from vacuum_tablet <- vacuum on a background thread
//   abort   a failed check calls abort() inside starrocks::CompactionTask::run
//   lambda  a crash inside a lambda run by a thread pool through std::function
//
// No signal handler is installed: gen.sh runs it under gdb, which stops at
// the signal, writes the core and records the frames.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <pthread.h>
#include <vector>

#define NOINLINE __attribute__((noinline))

static const char* g_mode = "null";
static volatile int g_sink;

namespace starrocks {

struct TabletMetadata {
    long id;
    // rowset id -> files; null for a tablet whose metadata failed to load
    std::map<long, std::vector<int>>* files;
};

namespace lake {

NOINLINE int collect_garbage_files(const TabletMetadata* meta, int limit) {
    int n = 0;
    // std::map::find and std::_Rb_tree::find are inlined here; the fault
    // (reading the root of a null map, address 0x10) happens in them.
    auto it = meta->files->find(meta->id);
    if (it == meta->files->end()) return 0;
    for (int f : it->second) {
        if (n >= limit) break;
        n += f;
    }
    return n;
}

NOINLINE int vacuum_tablet(long id, int limit) {
    TabletMetadata meta{id, nullptr};
    if (id == 42) {
        static std::map<long, std::vector<int>> files{{42, {1, 2, 3}}};
        meta.files = &files;
    }
    int n = collect_garbage_files(&meta, limit);
    asm volatile("" ::: "memory");
    return n + 1;
}

NOINLINE void vacuum(const long* ids, int count) {
    for (int i = 0; i < count; i++) g_sink += vacuum_tablet(ids[i], 100);
}

} // namespace lake

NOINLINE void check_failed(const char* expr) {
    fprintf(stderr, "Check failed: %s\n", expr);
    abort();
}

class CompactionTask {
public:
    explicit CompactionTask(int rows) : _rows(rows) {}
    NOINLINE void run() {
        int merged = _rows / 2;
        if (merged * 2 != _rows) check_failed("merged_rows * 2 == input_rows");
        g_sink += merged;
    }

private:
    int _rows;
};

class ThreadPool {
public:
    explicit ThreadPool(std::function<void()> task) : _task(std::move(task)) {}
    NOINLINE void dispatch_thread() {
        _task();
        asm volatile("" ::: "memory");
    }

private:
    std::function<void()> _task;
};

struct Chunk {
    int* data;
    int size;
};

class ExchangeSinkOperator {
public:
    NOINLINE void send_chunk(const Chunk* c);
};

void ExchangeSinkOperator::send_chunk(const Chunk* c) {
    // The lambda's body is inlined into std::function's invoker
    // (_M_invoke), as compilers usually do.
    ThreadPool pool([c]() {
        int s = 0;
        for (int i = 0; i < c->size; i++) s += c->data[i];
        g_sink += s;
    });
    pool.dispatch_thread();
}

} // namespace starrocks

static void* worker(void*) {
    if (strcmp(g_mode, "null") == 0) {
        long ids[] = {42, 7};
        starrocks::lake::vacuum(ids, 2);
    } else if (strcmp(g_mode, "abort") == 0) {
        starrocks::CompactionTask task(7);
        task.run();
    } else if (strcmp(g_mode, "lambda") == 0) {
        static starrocks::Chunk chunk{nullptr, 4};
        starrocks::ExchangeSinkOperator op;
        op.send_chunk(&chunk);
    }
    return nullptr;
}

int main(int argc, char** argv) {
    if (argc > 1) g_mode = argv[1];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 128 * 1024);
    pthread_t t;
    if (pthread_create(&t, &attr, worker, nullptr) != 0) return 1;
    pthread_join(t, nullptr);
    return 0;
}
