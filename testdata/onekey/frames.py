# frames.py: run inside gdb (`source frames.py`) on the core of a crash. Writes $ONEKEY_JSON: the crashing thread's physical
# frames as a glog or boost symbolizer would see them (the function that
# contains each PC, from the symbol table), with the facts the dumps need.
import json
import os
import re

import gdb


def symbol_at(addr, demangle):
    gdb.execute("set print demangle %s" % ("on" if demangle else "off"))
    gdb.execute("set print asm-demangle %s" % ("on" if demangle else "off"))
    out = gdb.execute("info symbol %#x" % addr, to_string=True).strip()
    gdb.execute("set print demangle on")
    gdb.execute("set print asm-demangle on")
    if out.startswith("No symbol"):
        return ""
    m = re.match(r"(.*?)(?: \+ \d+)? in section \S+(?: of .*)?$", out)
    return m.group(1) if m else ""


def mappings():
    maps = []
    for line in gdb.execute("info proc mappings", to_string=True).splitlines():
        f = line.split()
        if len(f) >= 5 and f[0].startswith("0x"):
            path = f[-1] if f[-1].startswith("/") else ""
            maps.append((int(f[0], 16), int(f[1], 16), int(f[3], 16), path))
    return maps


def main():
    maps = mappings()
    base = {}
    for start, end, off, path in maps:
        if path and off == 0 and path not in base:
            base[path] = start

    def module_of(pc):
        for start, end, off, path in maps:
            if start <= pc < end and path:
                return path
        return ""

    exe = gdb.current_progspace().filename
    pie = os.environ.get("ONEKEY_PIE") == "1"
    siginfo = gdb.parse_and_eval("$_siginfo")
    signo = int(siginfo["si_signo"])
    try:
        addr = int(siginfo["_sifields"]["_sigfault"]["si_addr"])
    except gdb.error:
        addr = 0
    th = gdb.selected_thread()
    out = {
        "signo": signo,
        "si_addr": addr,
        "pid": th.ptid[0],
        "tid": th.ptid[1],
        "pthread": 0,
        "exe": exe,
        "exe_bias": base.get(exe, 0) if pie else 0,
        "libc_bias": next((b for p, b in base.items() if "/libc.so" in p), 0),
        "restore_rt": int(gdb.parse_and_eval("(long)&__restore_rt")),
        "frames": [],
    }
    # the pthread_t of the crashing thread, from `info threads` (`* 1 Thread 0x7f… (LWP n)`)
    for line in gdb.execute("info threads", to_string=True).splitlines():
        m = re.match(r"\*\s+\d+\s+Thread (0x[0-9a-f]+)", line.strip())
        if m:
            out["pthread"] = int(m.group(1), 16)
    f = gdb.newest_frame()
    first = True
    while f is not None:
        if f.type() == gdb.INLINE_FRAME:
            f = f.older()
            continue
        pc = f.pc()
        exact = first
        first = False
        look = pc if exact else pc - 1
        mod = module_of(pc)
        bias = out["exe_bias"] if mod == exe else base.get(mod, 0)
        sal = f.find_sal()
        out["frames"].append({
            "pc": pc,
            "exact": exact,
            "name": symbol_at(look, True),
            "mangled": symbol_at(look, False),
            "module": mod,
            # glog's (module+0x…): the offset of PC-1 from the load bias
            "offset": pc - 1 - bias,
            "file": sal.symtab.filename if sal.symtab else "",
            "line": sal.line,
        })
        f = f.older()
    with open(os.environ["ONEKEY_JSON"], "w") as w:
        json.dump(out, w, indent=1)


main()
