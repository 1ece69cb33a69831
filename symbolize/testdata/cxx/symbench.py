#!/usr/bin/env python3
"""Side-by-side timing of `crashsig symbolize` against llvm-symbolizer and
addr2line on the large synthetic backend binary of the symbench anchors.

Usage:
  CRASHSIG_SYMBENCH=/work/symbench-work symbench.py [--reps N] [--reps100k N]
                   [--crashsig PATH] [--variants plain,gz,split] [--tools ...]

CRASHSIG_SYMBENCH is the WORKDIR of symbench's build.sh (bin/dbserver,
bin/dbserver.gz, split/dbserver{,.debug}) with the PC lists of its mkpcs.py
in WORKDIR/pcs/ (pcs_1.txt, stacks.txt, pcs_10k.txt, pcs_100k.txt). Without
it the script exits 0 doing nothing. --crashsig defaults to building
./examples/crashsig into WORKDIR/crashsig (run from the repository root).

Every tool gets the addresses on stdin, in batch mode, as exact addresses
(no return-address adjustment, like llvm-symbolizer):
  crashsig   crashsig symbolize --exact --binary BIN          (demangled)
  llvm       llvm-symbolizer --inlining --demangle --obj=BIN
  crashsig-raw / llvm-nd: the same without demangling (raw linkage names;
             crashsig-raw prints llvm-symbolizer's format, so its output can
             be compared byte for byte with llvm-nd's)
  crashsig-1p / crashsig-raw-1p: the same with GOMAXPROCS=1 (one core, as
             llvm-symbolizer and addr2line use)
  addr2line  addr2line -f -i -C -e BIN
Runs are interleaved round-robin under /usr/bin/time -v so that a shared
machine's noise hits all tools alike; medians are printed as a markdown table:
startup (1 PC), wall per list, steady PCs/s = 90,000/(T_100k - T_10k), the
same from CPU time (user+sys, steadier than wall time on a shared machine),
peak RSS. A second table gives, for each crashsig tool against its llvm
counterpart, the median and the min–max over the rounds of the same-round
ratios (llvm/crashsig time for startup and stacks; crashsig/llvm rate for
steady throughput, by wall and by CPU time).
Raw runs go to WORKDIR/crashsig-bench/runs.jsonl; --from-runs FILE prints
the tables of such a file (also of an interrupted run) without running.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

VARIANTS = {"plain": "bin/dbserver", "gz": "bin/dbserver.gz", "split": "split/dbserver"}
INPUTS = ["pcs_1", "stacks", "pcs_10k", "pcs_100k"]


def tools(crashsig):
    return {
        "crashsig": lambda b: [crashsig, "symbolize", "--exact", "--binary", b],
        "crashsig-raw": lambda b: [crashsig, "symbolize", "--exact", "--raw", "--style", "llvm", "--binary", b],
        "crashsig-1p": lambda b: ["env", "GOMAXPROCS=1", crashsig, "symbolize", "--exact", "--binary", b],
        "crashsig-raw-1p": lambda b: ["env", "GOMAXPROCS=1", crashsig, "symbolize", "--exact", "--raw", "--style", "llvm", "--binary", b],
        "llvm": lambda b: ["llvm-symbolizer", "--inlining", "--demangle", f"--obj={b}"],
        "llvm-nd": lambda b: ["llvm-symbolizer", "--inlining", "--no-demangle", f"--obj={b}"],
        "addr2line": lambda b: ["addr2line", "-f", "-i", "-C", "-e", b],
    }


def run_one(cmd, inp, outp):
    with open(inp) as fi, open(outp, "w") as fo:
        t0 = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-v"] + cmd, stdin=fi, stdout=fo,
                           stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
    r = {"wall_s": wall, "rc": p.returncode, "user_s": 0.0, "sys_s": 0.0}
    for line in p.stderr.splitlines():
        line = line.strip()
        if line.startswith("Maximum resident set size"):
            r["rss_mb"] = int(line.split(":")[1]) / 1024
        elif line.startswith("User time"):
            r["user_s"] = float(line.split(":")[1])
        elif line.startswith("System time"):
            r["sys_s"] = float(line.split(":")[1])
    r["cpu_s"] = r["user_s"] + r["sys_s"]
    return r


def main():
    w = os.environ.get("CRASHSIG_SYMBENCH")
    if not w:
        print("CRASHSIG_SYMBENCH not set: nothing to do", file=sys.stderr)
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--reps100k", type=int, default=3)
    ap.add_argument("--crashsig", default="")
    ap.add_argument("--variants", default="plain,gz,split")
    ap.add_argument("--tools", default="crashsig,llvm,addr2line")
    ap.add_argument("--inputs", default=",".join(INPUTS))
    ap.add_argument("--from-runs", default="")
    a = ap.parse_args()
    if a.from_runs:
        runs = [json.loads(l) for l in open(a.from_runs) if l.strip()]
        return report(a, runs, a.tools.split(","), a.variants.split(","))
    cs = a.crashsig
    if not cs:
        cs = os.path.join(w, "crashsig")
        subprocess.run(["go", "build", "-o", cs, "./examples/crashsig"], check=True)
    res = os.path.join(w, "crashsig-bench")
    os.makedirs(os.path.join(res, "out"), exist_ok=True)
    T = tools(cs)
    sel = a.tools.split(",")
    variants = a.variants.split(",")
    inputs = a.inputs.split(",")
    runs = []
    log = open(os.path.join(res, "runs.jsonl"), "w")
    for rnd in range(max(a.reps, a.reps100k)):
        for inp in inputs:
            if rnd >= (a.reps100k if inp == "pcs_100k" else a.reps):
                continue
            for v in variants:
                for t in sel:
                    outp = os.path.join(res, "out", f"{t}.{v}.{inp}.out")
                    r = run_one(T[t](os.path.join(w, VARIANTS[v])), os.path.join(w, "pcs", inp + ".txt"), outp)
                    r.update({"tool": t, "variant": v, "input": inp, "round": rnd})
                    runs.append(r)
                    log.write(json.dumps(r) + "\n")
                    log.flush()
                    print(f"round {rnd} {t:9s} {v:5s} {inp:8s} wall={r['wall_s']:.3f}s rss={r.get('rss_mb', 0):.0f}MB rc={r['rc']}",
                          file=sys.stderr, flush=True)
    return report(a, runs, sel, variants)


def report(a, runs, sel, variants):
    """Prints the medians table and the same-round ratio table of runs."""
    nrounds = 1 + max((r["round"] for r in runs), default=0)
    med = {}
    for r in runs:
        med.setdefault((r["tool"], r["variant"], r["input"]), []).append(r)
    def m(t, v, i, f="wall_s"):
        rs = med.get((t, v, i))
        return statistics.median(x[f] for x in rs) if rs else None
    print("| tool | binary | startup s (1 PC) | stacks 1.5k s | 10k s | 100k s | steady PCs/s | CPU s 1 PC / stacks / 10k / 100k | CPU-steady PCs/s | peak RSS MB (1 PC / 100k) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for v in variants:
        for t in sel:
            s1, st, k10, k100 = (m(t, v, i) for i in INPUTS)
            steady = 90000 / (k100 - k10) if k10 and k100 and k100 > k10 else None
            r1, r100 = m(t, v, "pcs_1", "rss_mb"), m(t, v, "pcs_100k", "rss_mb")
            cpu = [m(t, v, i, "cpu_s") for i in INPUTS]
            csteady = 90000 / (cpu[3] - cpu[2]) if cpu[2] and cpu[3] and cpu[3] > cpu[2] else None
            f = lambda x, p=3: "–" if x is None else f"{x:.{p}f}"
            print(f"| {t} | {v} | {f(s1)} | {f(st)} | {f(k10)} | {f(k100)} | "
                  f"{'–' if steady is None else f'{steady:,.0f}'} | {' / '.join(f(c, 2) for c in cpu)} | "
                  f"{'–' if csteady is None else f'{csteady:,.0f}'} | {f(r1, 0)} / {f(r100, 0)} |")
    # Same-round ratios: each round ran every tool back to back, so a
    # ratio within a round is what the machine's noise disturbs least.
    by = {(r["tool"], r["variant"], r["input"], r["round"]): r for r in runs}
    def rnd_ratio(ours, ref, v, metric):
        out = []
        for rnd in range(nrounds):
            g = lambda t, i, f="wall_s": by[(t, v, i, rnd)][f] if (t, v, i, rnd) in by else None
            if metric.startswith(("startup", "stacks")):
                i = "pcs_1" if metric.startswith("startup") else "stacks"
                f = "cpu_s" if metric.endswith("-cpu") else "wall_s"
                x, y = g(ours, i, f), g(ref, i, f)
                if x and y:
                    out.append(x / y if metric.startswith("startup") else y / x)
            else:
                f = "cpu_s" if metric == "steady-cpu" else "wall_s"
                o10, o100, r10, r100 = g(ours, "pcs_10k", f), g(ours, "pcs_100k", f), g(ref, "pcs_10k", f), g(ref, "pcs_100k", f)
                if None not in (o10, o100, r10, r100) and o100 > o10 and r100 > r10:
                    out.append((r100 - r10) / (o100 - o10))
        return out
    pairs = [("crashsig", "llvm"), ("crashsig-1p", "llvm"), ("crashsig-raw", "llvm-nd"), ("crashsig-raw-1p", "llvm-nd")]
    print()
    print("| crashsig tool vs llvm | binary | cold start wall (time ratio, lower is better) | cold start CPU | stacks wall (× faster) | stacks CPU | steady wall (× llvm's rate) | steady per CPU-second (× llvm's) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for ours, ref in pairs:
        if ours not in sel or ref not in sel:
            continue
        for v in variants:
            cells = []
            for metric in ("startup", "startup-cpu", "stacks", "stacks-cpu", "steady-wall", "steady-cpu"):
                xs = rnd_ratio(ours, ref, v, metric)
                cells.append("–" if not xs else f"{statistics.median(xs):.2f}× ({min(xs):.2f}–{max(xs):.2f}, n={len(xs)})")
            print(f"| {ours} vs {ref} | {v} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
