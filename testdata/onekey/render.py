#!/usr/bin/env python3
"""render.py FRAMES.json OUTPREFIX INSTALLED_EXE

Writes, from the frames gdb recorded at the crash (frames.py), the dumps the
backends print for that crash, following the format descriptions of
shared/docs/be-crash-formats.md:

  OUTPREFIX.glog04.txt          StarRocks glog 0.4 (F2.1): names from glog's own
                                demangler (template arguments `<>`, parameters
                                `()`, raw mangled names where it fails: lambdas,
                                clone suffixes), (unknown) outside the binary
  OUTPREFIX.glog07.txt          StarRocks glog 0.7.1 (F2.2): full signatures cut
                                at 256 bytes, (module+0x…) outside the binary
  OUTPREFIX.boost.txt           Doris boost::stacktrace dump (F1) with names
  OUTPREFIX.glog07-offsets.txt  glog 0.7 of a stripped binary: every frame of
                                the binary as (INSTALLED_EXE+0x…) (PC-1)
  OUTPREFIX.boost-addrs.txt     Doris dump without symbols: `0x… in INSTALLED_EXE`

The signal handler's frames (glog's FailureSignalHandler, Doris'
signal::FailureSignalHandler, the call_once frame of glog 0.7) are added
above the trampoline (libc's __restore_rt, at its real address) as the
handlers print them; every other frame is the crash's own.
"""
import json
import re
import sys

SIGNAMES = {11: "SIGSEGV", 6: "SIGABRT", 8: "SIGFPE", 7: "SIGBUS", 4: "SIGILL"}
TIME = 1764540000


def glog04_name(name, mangled):
    """glog <= 0.6's demangler: fails (raw mangled name) on lambdas and
    clone suffixes; else template arguments collapse to <> and parameter
    lists to ()."""
    if not name:
        return "(unknown)"
    if mangled.startswith("_Z") and ("Ul" in mangled or "." in mangled):
        return mangled
    out, depth, i = [], 0, 0
    # collapse <...> (not operator<, operator<<) and (...) after the name
    s = name
    res = ""
    while i < len(s):
        c = s[i]
        if c == "<" and not s[:i].endswith("operator"):
            j, d = i, 0
            while j < len(s):
                if s[j] == "<":
                    d += 1
                elif s[j] == ">":
                    d -= 1
                    if d == 0:
                        break
                j += 1
            res += "<>"
            i = j + 1
            continue
        if c == "(" and not s[i:].startswith("(anonymous namespace)"):
            res += "()"
            break
        res += c
        i += 1
    if "(" not in res:
        res += "()"
    return res


def glog_line(pc, sym):
    return "    @ %18s %s" % ("0x%x" % pc, sym)


def cut256(s):
    return s[:256]


def render(fr, prefix, installed):
    sig = SIGNAMES[fr["signo"]]
    frames = fr["frames"]
    exe = fr["exe"]
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    tramp = fr["restore_rt"]
    tramp_off = tramp - 1 - fr["libc_bias"]
    handler_pc = frames[0]["pc"] & ~0xFFF  # any address in the binary: glog prints the name
    fault = frames[0]["pc"]
    si_addr = fr["si_addr"]
    if fr["signo"] == 6:
        si_addr = (0 << 32) | fr["pid"]  # kill/raise: si_pid in the union
    pthread = fr["pthread"] or 0x7F0000001000

    def in_exe(f):
        return f["module"] == exe

    # glog 0.4 (F2.1)
    L = ["3.3.5 RELEASE (build 1a2b3c4)",
         "query_id:00000000-0000-0000-0000-000000000000, fragment_instance:00000000-0000-0000-0000-000000000000",
         "tracker:process consumption: 1048576",
         '*** Aborted at %d (unix time) try "date -d @%d" if you are using GNU date ***' % (TIME, TIME),
         "PC: @ %18s %s" % ("0x%x" % fault, glog04_name(frames[0]["name"], frames[0]["mangled"]) if in_exe(frames[0]) else "(unknown)"),
         "*** %s (@0x%x) received by PID %d (TID 0x%x) from PID %d; stack trace: ***" % (sig, si_addr, fr["pid"], pthread, si_addr & 0xFFFFFFFF),
         glog_line(handler_pc, "google::(anonymous namespace)::FailureSignalHandler()"),
         glog_line(tramp, "(unknown)")]
    for f in frames:
        L.append(glog_line(f["pc"], glog04_name(f["name"], f["mangled"]) if in_exe(f) else "(unknown)"))
    L.append(glog_line(0, "(unknown)"))
    write(prefix + ".glog04.txt", L)

    # glog 0.7.1 (F2.2), with and without the binary's symbols
    for suffix, named in ((".glog07.txt", True), (".glog07-offsets.txt", False)):
        def sym(f):
            if in_exe(f) and named:
                return cut256(f["name"])
            mod = installed if in_exe(f) else f["module"].replace("/usr/lib/", "/lib/")
            return "(%s+0x%x)" % (mod, f["offset"])
        L = ["3.5.2 RELEASE (build 1a2b3c4 distro debian arch x86_64)",
             "query_id:00000000-0000-0000-0000-000000000000, fragment_instance:00000000-0000-0000-0000-000000000000, plan_node_id:-1",
             '*** Aborted at %d (unix time) try "date -d @%d" if you are using GNU date ***' % (TIME, TIME),
             "PC: @ %18s %s" % ("0x%x" % fault, sym(frames[0])),
             "*** %s (@0x%x) received by PID %d (TID 0x%x) LWP(%d) from PID %d; stack trace: ***" % (sig, si_addr, fr["pid"], pthread, fr["tid"], si_addr & 0xFFFFFFFF),
             glog_line(fr["libc_bias"] + 0x99ee8, "(%s+0x99ee7)" % libc),
             glog_line(handler_pc, "google::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)"),
             glog_line(tramp, "(%s+0x%x)" % (libc, tramp_off))]
        for f in frames:
            L.append(glog_line(f["pc"], sym(f)))
        write(prefix + suffix, L)

    # Doris boost::stacktrace (F1), with and without symbols
    reason = {11: "address not mapped to object", 6: "unknown detail explain"}[fr["signo"]]
    for suffix, named in ((".boost.txt", True), (".boost-addrs.txt", False)):
        L = ["*** Query id: 0-0 ***",
             "*** is nereids: 1 ***",
             "*** tablet id: 0 ***",
             '*** Aborted at %d (unix time) try "date -d @%d" if you are using GNU date ***' % (TIME, TIME),
             "*** Current BE git commitID: 5ee7e73313 ***",
             "*** %s %s (@0x%x) received by PID %d (TID %d OR 0x%x) from PID %d; stack trace: ***" % (sig, reason, si_addr, fr["pid"], fr["tid"], pthread, si_addr & 0xFFFFFFFF),
             " 0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at /root/doris/be/src/common/signal_handler.h:421",
             " 1# 0x%016X in %s" % (tramp, libc)]
        for i, f in enumerate(frames):
            n = i + 2
            if in_exe(f) and named:
                text = "%s at %s:%d" % (f["name"], f["file"], f["line"])
            elif in_exe(f):
                text = "0x%016X in %s" % (f["pc"], installed)
            elif f["name"] and f["file"]:
                text = "%s at %s:%d" % (f["name"], f["file"], f["line"])
            else:
                text = "0x%016X in %s" % (f["pc"], libc)
            L.append("%2d# %s" % (n, text))
        L.append("")
        write(prefix + suffix, L)


def write(path, lines):
    with open(path, "w") as w:
        w.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    with open(sys.argv[1]) as r:
        fr = json.load(r)
    render(fr, sys.argv[2], sys.argv[3])
