#!/usr/bin/env bash
# Generates paimon-sdk-scheduledexecutor-leak.jstack.txt.gz: a deterministic, synthetic JDK 17
# `jstack` dump of a Doris 4.1.3 BE's embedded JVM after many Paimon external-catalog queries,
# modelled on apache/doris#67898 (and #65416): ~2,000 parked AWS SDK v2
# `sdk-ScheduledExecutor-<n>-<m>` worker threads (one executor instance per leaked async
# client, several workers each) interleaved with ~50 ordinary JVM / Hadoop / JNI-attached threads.
#
# The thread header and frame shapes follow the JDK 17.0.2 `jstack` output quoted in #67898
# (nid in hex, cpu=/elapsed= fields, DelayedWorkQueue.take at ScheduledThreadPoolExecutor.java:1177,
# getTask :1062, runWorker :1122, Thread.run :833). jstack prints the *Java* thread name; the OS
# name the issue saw in /proc/<pid>/task/*/comm and `top -H` is the inherited `rs_normal [work`
# and does not appear in a jstack dump.
#
# Deterministic: a fixed LCG, no clock, gzip -n (no name/timestamp). Usage:
#   bash testdata/defects/doris/gen-paimon-leak.sh   (writes next to this script)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/paimon-sdk-scheduledexecutor-leak.jstack.txt.gz"
python3 - <<'PY' | gzip -n -9 > "$out"
import sys
w = sys.stdout.write
state = 20260912
def rnd(n):
    """Deterministic LCG (Numerical Recipes constants); returns 0..n-1."""
    global state
    state = (state * 1664525 + 1013904223) % (1 << 32)
    return (state >> 8) % n

JB = "java.base@17.0.2"
tid_next = [0x00007f1c2c04a000]
nid_next = [9995]
def header(name, num, daemon, cpu_ms, elapsed_s, state_word, addr):
    tid_next[0] += 0x1000 + rnd(8) * 0x200
    nid_next[0] += 1 + rnd(3)
    d = " daemon" if daemon else ""
    numtxt = f" #{num}" if num is not None else ""
    a = f"  [0x{addr:016x}]" if addr is not None else "  "
    return (f'"{name}"{numtxt}{d} prio=5 os_prio=0 cpu={cpu_ms:.2f}ms elapsed={elapsed_s:.2f}s '
            f"tid=0x{tid_next[0]:016x} nid=0x{nid_next[0]:x} {state_word}{a}\n")

def lock():
    return f"0x00000006{rnd(1 << 24):06x}{rnd(16) * 8 + 8:02x}"[:18]

SDK_WAITING = [
    f"\tat jdk.internal.misc.Unsafe.park({JB}/Native Method)\n",
    "PARK",
    f"\tat java.util.concurrent.locks.LockSupport.park({JB}/LockSupport.java:341)\n",
    f"\tat java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionNode.block({JB}/AbstractQueuedSynchronizer.java:506)\n",
    f"\tat java.util.concurrent.ForkJoinPool.unmanagedBlock({JB}/ForkJoinPool.java:3463)\n",
    f"\tat java.util.concurrent.ForkJoinPool.managedBlock({JB}/ForkJoinPool.java:3434)\n",
    f"\tat java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await({JB}/AbstractQueuedSynchronizer.java:1623)\n",
    f"\tat java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take({JB}/ScheduledThreadPoolExecutor.java:1177)\n",
    f"\tat java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take({JB}/ScheduledThreadPoolExecutor.java:899)\n",
    f"\tat java.util.concurrent.ThreadPoolExecutor.getTask({JB}/ThreadPoolExecutor.java:1062)\n",
    f"\tat java.util.concurrent.ThreadPoolExecutor.runWorker({JB}/ThreadPoolExecutor.java:1122)\n",
    f"\tat java.util.concurrent.ThreadPoolExecutor$Worker.run({JB}/ThreadPoolExecutor.java:635)\n",
    f"\tat java.lang.Thread.run({JB}/Thread.java:833)\n",
]
TIMED = [
    f"\tat jdk.internal.misc.Unsafe.park({JB}/Native Method)\n",
    "PARK",
    f"\tat java.util.concurrent.locks.LockSupport.parkNanos({JB}/LockSupport.java:252)\n",
    f"\tat java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.awaitNanos({JB}/AbstractQueuedSynchronizer.java:1672)\n",
    f"\tat java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take({JB}/ScheduledThreadPoolExecutor.java:1182)\n",
    f"\tat java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take({JB}/ScheduledThreadPoolExecutor.java:899)\n",
    f"\tat java.util.concurrent.ThreadPoolExecutor.getTask({JB}/ThreadPoolExecutor.java:1062)\n",
    f"\tat java.util.concurrent.ThreadPoolExecutor.runWorker({JB}/ThreadPoolExecutor.java:1122)\n",
    f"\tat java.util.concurrent.ThreadPoolExecutor$Worker.run({JB}/ThreadPoolExecutor.java:635)\n",
    f"\tat java.lang.Thread.run({JB}/Thread.java:833)\n",
]
def frames(lst, cond="java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject"):
    for f in lst:
        if f == "PARK":
            w(f"\t- parking to wait for  <{lock()}> (a {cond})\n")
        else:
            w(f)

ordinary = [
    ("Reference Handler", True, "RUNNABLE", "runnable", [
        f"\tat java.lang.ref.Reference.waitForReferencePendingList({JB}/Native Method)\n",
        f"\tat java.lang.ref.Reference.processPendingReferences({JB}/Reference.java:253)\n",
        f"\tat java.lang.ref.Reference$ReferenceHandler.run({JB}/Reference.java:215)\n"]),
    ("Finalizer", True, "WAITING (on object monitor)", "in Object.wait()", [
        f"\tat java.lang.Object.wait({JB}/Native Method)\n",
        f"\t- waiting on  <LOCK> (a java.lang.ref.ReferenceQueue$Lock)\n",
        f"\tat java.lang.ref.ReferenceQueue.remove({JB}/ReferenceQueue.java:155)\n",
        f"\t- locked <LOCK> (a java.lang.ref.ReferenceQueue$Lock)\n",
        f"\tat java.lang.ref.ReferenceQueue.remove({JB}/ReferenceQueue.java:176)\n",
        f"\tat java.lang.ref.Finalizer$FinalizerThread.run({JB}/Finalizer.java:172)\n"]),
    ("Signal Dispatcher", True, "RUNNABLE", "waiting on condition", []),
    ("Service Thread", True, "RUNNABLE", "runnable", []),
    ("Monitor Deflation Thread", True, "RUNNABLE", "runnable", []),
    ("C2 CompilerThread0", True, "RUNNABLE", "waiting on condition", []),
    ("C1 CompilerThread0", True, "RUNNABLE", "waiting on condition", []),
    ("Sweeper thread", True, "RUNNABLE", "runnable", []),
    ("Notification Thread", True, "RUNNABLE", "runnable", []),
    ("Common-Cleaner", True, "TIMED_WAITING (on object monitor)", "in Object.wait()", [
        f"\tat java.lang.Object.wait({JB}/Native Method)\n",
        f"\t- waiting on  <LOCK> (a java.lang.ref.ReferenceQueue$Lock)\n",
        f"\tat java.lang.ref.ReferenceQueue.remove({JB}/ReferenceQueue.java:155)\n",
        f"\t- locked <LOCK> (a java.lang.ref.ReferenceQueue$Lock)\n",
        f"\tat jdk.internal.ref.CleanerImpl.run({JB}/CleanerImpl.java:140)\n",
        f"\tat java.lang.Thread.run({JB}/Thread.java:833)\n",
        f"\tat jdk.internal.misc.InnocuousThread.run({JB}/InnocuousThread.java:162)\n"]),
    ("mysql-cj-abandoned-connection-cleanup", True, "TIMED_WAITING (on object monitor)", "in Object.wait()", [
        f"\tat java.lang.Object.wait({JB}/Native Method)\n",
        f"\t- waiting on  <LOCK> (a java.lang.ref.ReferenceQueue$Lock)\n",
        f"\tat java.lang.ref.ReferenceQueue.remove({JB}/ReferenceQueue.java:155)\n",
        f"\t- locked <LOCK> (a java.lang.ref.ReferenceQueue$Lock)\n",
        "\tat com.mysql.cj.jdbc.AbandonedConnectionCleanupThread.run(AbandonedConnectionCleanupThread.java:91)\n",
        f"\tat java.util.concurrent.ThreadPoolExecutor.runWorker({JB}/ThreadPoolExecutor.java:1136)\n",
        f"\tat java.util.concurrent.ThreadPoolExecutor$Worker.run({JB}/ThreadPoolExecutor.java:635)\n",
        f"\tat java.lang.Thread.run({JB}/Thread.java:833)\n"]),
    ("org.apache.hadoop.fs.FileSystem$Statistics$StatisticsDataReferenceCleaner", True, "WAITING (on object monitor)", "in Object.wait()", [
        f"\tat java.lang.Object.wait({JB}/Native Method)\n",
        f"\t- waiting on  <LOCK> (a java.lang.ref.ReferenceQueue$Lock)\n",
        f"\tat java.lang.ref.ReferenceQueue.remove({JB}/ReferenceQueue.java:155)\n",
        f"\t- locked <LOCK> (a java.lang.ref.ReferenceQueue$Lock)\n",
        f"\tat java.lang.ref.ReferenceQueue.remove({JB}/ReferenceQueue.java:176)\n",
        "\tat org.apache.hadoop.fs.FileSystem$Statistics$StatisticsDataReferenceCleaner.run(FileSystem.java:4129)\n",
        f"\tat java.lang.Thread.run({JB}/Thread.java:833)\n"]),
    ("Timer for 's3a-file-system' metrics system", True, "TIMED_WAITING (on object monitor)", "in Object.wait()", [
        f"\tat java.lang.Object.wait({JB}/Native Method)\n",
        f"\t- waiting on  <LOCK> (a java.util.TaskQueue)\n",
        f"\tat java.util.TimerThread.mainLoop({JB}/Timer.java:563)\n",
        f"\t- locked <LOCK> (a java.util.TaskQueue)\n",
        f"\tat java.util.TimerThread.run({JB}/Timer.java:516)\n"]),
    ("MutableQuantiles-0", True, "TIMED_WAITING (parking)", "waiting on condition", "TIMED"),
    ("pool-1-thread-1", False, "TIMED_WAITING (parking)", "waiting on condition", "TIMED"),
]
# JNI-attached BE threads (scanner threads that called into the JVM) show up as Thread-N with no Java frames.
for i in range(36):
    ordinary.append((f"Thread-{i}", False, "RUNNABLE", "runnable", []))

w("2026-09-12 18:42:07\n")
w("Full thread dump OpenJDK 64-Bit Server VM (17.0.2+8-86 mixed mode, sharing):\n\n")
w("Threads class SMR info:\n")
w(f"_java_thread_list=0x00007f1a3c3f2e10, length={500 * 4 + len(ordinary)}, elements={{\n")
w("0x00007f1c2c04a000, 0x00007f1c2c04b800, 0x00007f1c2c04d000, 0x00007f1c2c04e800,\n")
w("...\n}\n\n")

num = 1
elapsed = 46099.31
ord_i = 0
executors = 500
workers = 4
# Interleave: after every ~40 SDK threads, emit one ordinary thread (system threads first).
sdk_emitted = 0
def emit_ordinary(o):
    global num
    name, daemon, st, word, fr = o
    num += 1
    w(header(name, num, daemon, 5 + rnd(9000) / 7.0, elapsed - rnd(60), word,
             0x00007f1a00000000 + rnd(1 << 20) * 0x1000 if fr else 0))
    w(f"   java.lang.Thread.State: {st}\n")
    if fr == "TIMED":
        frames(TIMED)
    else:
        lk = lock()  # one monitor per thread: "waiting on" and "locked" name the same object
        for f in fr:
            w(f.replace("LOCK", lk))
    w("\n")

for o in ordinary[:12]:
    emit_ordinary(o)
ord_i = 12
for n in range(1, executors + 1):
    for m in range(1, workers + 1):
        num += 1
        el = elapsed - 20 - n * 90 - rnd(40) / 3.0
        w(header(f"sdk-ScheduledExecutor-{n}-{m}", num, True, (20 + rnd(40)) / 100.0, el,
                 "waiting on condition", 0x00007f1a00000000 + rnd(1 << 20) * 0x1000))
        w("   java.lang.Thread.State: WAITING (parking)\n")
        frames(SDK_WAITING)
        w("\n")
        sdk_emitted += 1
        if sdk_emitted % 45 == 0 and ord_i < len(ordinary):
            emit_ordinary(ordinary[ord_i])
            ord_i += 1
while ord_i < len(ordinary):
    emit_ordinary(ordinary[ord_i]); ord_i += 1

for vm in ["VM Thread", "GC Thread#0", "GC Thread#1", "G1 Main Marker", "G1 Conc#0", "G1 Refine#0",
           "G1 Service", "VM Periodic Task Thread"]:
    tid_next[0] += 0x1000; nid_next[0] += 1
    w(f'"{vm}" os_prio=0 cpu={10 + rnd(5000) / 3.0:.2f}ms elapsed={elapsed:.2f}s '
      f"tid=0x{tid_next[0]:016x} nid=0x{nid_next[0]:x} runnable  \n\n")
w("JNI global refs: 24915, weak refs: 0\n\n")
PY
echo "wrote $out ($(stat -c %s "$out") bytes)"
