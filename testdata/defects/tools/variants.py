#!/usr/bin/env python3
"""Variant crash texts for the defect tests (committed generator; deterministic).

    testdata/defects/tools/variants.py LOG...     writes each LOG's variant
    testdata/defects/tools/variants.py --check    regenerates every variant and fails on a diff

Run from the repository root with repo-relative paths. For each real log
`testdata/<set>/<product>/X.txt` it writes
`testdata/defects/<product>/variants/X.variant.txt`: the same crash as another
tool or build would print it, so that a defect rule written against the real log
must generalize (anchor frame + context, kind, message; never one log's
adjacent-frame sequence):

* print format: a glog failure-signal dump (`@ 0xADDR func()`) becomes a gdb
  `bt` (`#N  0xADDR in func () ...`); a Doris boost::stacktrace dump
  (` N# func(args) at file:line`) and a gdb `bt` become a glog dump.
  glog FATAL/"Check failure stack trace" and uncaught-exception dumps keep
  their format (the message is the evidence) and only get the elisions.
* frames elided: signal-handler frames, thread-root frames (start_thread,
  clone, Thread::supervise_thread, ThreadPool::dispatch_thread, bthread
  runners) and `std::` / `__gnu_cxx::` plumbing frames are dropped, and the
  frame list stops after at most 18 kept frames (pastes are often cut).
* addresses are rewritten (a different build), argument lists of glog-style
  names are dropped.

Lines that are not frames (version, query id, message) are kept verbatim.
The first line of a variant says it is generated and from which file.
"""
import os, re, sys, glob

GLOG = re.compile(r'^\s*@\s+(0x[0-9a-fA-F]+)\s+(.*?)\s*$')
DORIS = re.compile(r'^\s*(\d+)#\s+(.*?)\s*$')
GDB = re.compile(r'^\s*#(\d+)\s+(?:(0x[0-9a-fA-F]+)\s+in\s+)?(.*?)\s*$')
SIG_GLOG = re.compile(r'\*\*\* (SIG[A-Z]+) \(@(0x[0-9a-fA-F]+)\)')
SIG_DORIS = re.compile(r'\*\*\* (SIG[A-Z]+) .*?\(@(0x[0-9a-fA-F]+)\)')
SIG_GDB = re.compile(r'Program terminated with signal (SIG[A-Z]+)')

HANDLER = ('FailureSignalHandler', 'chained_handler', 'JVM_handle_linux_signal', 'signalHandler',
           'google::LogMessage', 'google::(anonymous', 'DumpStackTraceToString', 'boost::stacktrace',
           '__restore_rt', 'doris::signal::', 'PosixSignals::', 'DumpStackTraceAndExit', '<signal handler called>',
           'pthread_sigmask')
ABORT = ('raise', 'abort', '__GI_raise', '__GI_abort', '_GI_raise', 'pthread_kill', '__pthread_kill_implementation')
ROOT = ('start_thread', 'clone', '__clone', '__GI___clone', 'supervise_thread', 'dispatch_thread',
        'execute_native_thread_routine', 'bthread_make_fcontext', 'bthread::TaskGroup', '(unknown)', '??')
PLUMBING = ('std::', '__gnu_cxx::', '_ZNSt')


def strip_doris(name):
    # "func(args) at /path:line" / "func in /lib/x.so" -> "func(args)"
    name = re.sub(r'\s+at\s+\S+$', '', name)
    name = re.sub(r'\s+in\s+/\S+$', '', name)
    return name


def strip_gdb(rest):
    # "func (this=0x1, a=2) at file.cpp:12" / "func () from /lib/x.so"
    rest = re.sub(r'\s+(at|from)\s+\S+$', '', rest)
    depth, i = 0, len(rest)
    # drop a trailing argument-value list "(...)" preceded by a space
    if rest.endswith(')'):
        for j in range(len(rest) - 1, -1, -1):
            c = rest[j]
            if c == ')':
                depth += 1
            elif c == '(':
                depth -= 1
                if depth == 0:
                    i = j
                    break
        if i > 0 and rest[i - 1] == ' ':
            rest = rest[:i - 1]
    return rest


def short(name):
    # glog-style name: drop the argument list of "ns::f(int, char)" -> "ns::f()"
    if name.endswith(')'):
        depth = 0
        for j in range(len(name) - 1, -1, -1):
            c = name[j]
            if c == ')':
                depth += 1
            elif c == '(':
                depth -= 1
                if depth == 0:
                    return name[:j] + '()' if j > 0 else name
    return name


def keep(name):
    if any(h in name for h in HANDLER):
        return False
    if name.strip().split('(')[0].strip() in ABORT:
        return False
    base = name.strip()
    if any(base == r or base.startswith(r + ' ') or base.endswith('::' + r + '()') or base.endswith('::' + r) or r in base and r in ('bthread::TaskGroup', 'bthread_make_fcontext', 'execute_native_thread_routine', 'supervise_thread', 'dispatch_thread') for r in ROOT):
        return False
    if base.startswith(PLUMBING):
        return False
    if re.fullmatch(r'0x[0-9a-fA-F]+', base) or base == '' or base.startswith('('):
        return False
    return True


def variant(text, src):
    lines = text.splitlines()
    frames, pre, post = [], [], []
    fmt, sig, addr = None, None, '0x0'
    message_dump = any('Check failure stack trace' in l or 'terminate called' in l or 'Check failed' in l
                       or 'Sanitizer' in l or 'runtime error:' in l for l in lines)
    for l in lines:
        m = SIG_GLOG.search(l) or SIG_DORIS.search(l)
        if m and not sig:
            sig, addr = m.group(1), m.group(2)
        m = SIG_GDB.search(l)
        if m and not sig:
            sig = m.group(1)
        g, d, b = GLOG.match(l), DORIS.match(l), GDB.match(l)
        if g:
            fmt = fmt or 'glog'
            frames.append(g.group(2))
        elif d and not l.lstrip().startswith('#'):
            fmt = fmt or 'doris'
            frames.append(strip_doris(d.group(2)))
        elif b:
            fmt = fmt or 'gdb'
            frames.append(strip_gdb(b.group(3)))
        elif not frames:
            pre.append(l)
        else:
            post.append(l)
    # frames printed before the signal handler (glog's own __pthread_once_slow) are noise
    hs = [i for i, f in enumerate(frames[:8]) if any(h in f for h in HANDLER)]
    if hs:
        frames = frames[hs[-1] + 1:]
    # a paste cut right after the handler still names the crash function on its PC line
    pc = next((re.sub(r'^PC: @\s+0x[0-9a-fA-F]+\s+', '', l).strip() for l in pre if l.startswith('PC: @')), '')
    kept = [f for f in frames if keep(f)][:18]
    if pc and keep(pc) and not any(short(pc) == short(f) for f in kept):
        kept.insert(0, pc)
    if not sig and any(f.strip().split('(')[0].strip() in ABORT for f in frames):
        sig = 'SIGABRT'
    if not kept:
        raise SystemExit('%s: no frames kept' % src)
    out = ['[crashsig generated variant of %s: other print format, frames elided; not a real log]' % src]
    sig = sig or 'SIGSEGV'
    keep_pre = [l for l in pre if not (SIG_GLOG.search(l) or SIG_DORIS.search(l) or SIG_GDB.search(l)
                                       or l.startswith('PC: @') or 'Aborted at' in l or l.startswith('(gdb)')
                                       or l.startswith('[Current thread'))]
    if message_dump:
        # keep the format and every non-frame line; elide frames
        out += [l for l in pre]
        style = fmt
        for i, f in enumerate(kept):
            if style == 'doris':
                out.append('%2d# %s' % (i, f))
            elif style == 'gdb':
                out.append('#%-2d 0x%016x in %s ()' % (i, 0x5a000000 + 0x1000 * i, f))
            else:
                out.append('    @          0x%x %s' % (0x5a00000 + 0x100 * i, short(f)))
        out += post
    elif fmt == 'glog':
        out += keep_pre
        desc = {'SIGSEGV': 'Segmentation fault', 'SIGFPE': 'Arithmetic exception', 'SIGABRT': 'Aborted',
                'SIGBUS': 'Bus error', 'SIGILL': 'Illegal instruction'}.get(sig, 'Killed')
        out.append('Program terminated with signal %s, %s.' % (sig, desc))
        out.append('(gdb) bt')
        for i, f in enumerate(kept):
            name = f if f.endswith(')') else f + '()'
            out.append('#%-2d 0x%016x in %s' % (i, 0x5a000000 + 0x1000 * i, re.sub(r'\(\)$', ' ()', name)))
    else:
        out += keep_pre
        out.append('*** Aborted at 1700000000 (unix time) try "date -d @1700000000" if you are using GNU date ***')
        out.append('PC: @          0x%x %s' % (0x5a00000, short(kept[0])))
        out.append('*** %s (@%s) received by PID 4242 (TID 0x7f0000004242) from PID 0; stack trace: ***' % (sig, addr))
        out.append('    @          0x6000000 google::(anonymous namespace)::FailureSignalHandler()')
        out.append('    @     0x7f0000001000 (unknown)')
        for i, f in enumerate(kept):
            out.append('    @          0x%x %s' % (0x5a00000 + 0x100 * i, short(f)))
    return '\n'.join(out) + '\n'


PRODUCTS = ('doris', 'starrocks')
HEADER = re.compile(r'^\[crashsig generated variant of (\S+):')
# A variant written by hand (the source is a paste this generator cannot read:
# abbreviated, blockquoted, CRI- or timestamp-prefixed, one-line gdb): --check
# only verifies that its source exists.
HAND = re.compile(r'^\[crashsig hand-written variant of (\S+):')


def target(path):
    parts = path.replace(os.sep, '/').split('/')
    product = next((p for p in parts if p in PRODUCTS), 'other')
    name = os.path.basename(path)
    for ext in ('.txt.gz', '.txt', '.log'):
        if name.endswith(ext):
            name = name[:-len(ext)]
            break
    return os.path.join('testdata', 'defects', product, 'variants', name + '.variant.txt')


def main(argv):
    if argv and argv[0] == '--check':
        bad = 0
        for v in sorted(glob.glob(os.path.join('testdata', 'defects', '*', 'variants', '*.variant.txt'))):
            first = open(v, encoding='utf-8').readline()
            h = HAND.match(first)
            if h:
                if not os.path.exists(h.group(1)):
                    print('missing source:', v)
                    bad += 1
                continue
            m = HEADER.match(first)
            if not m:
                print('no header:', v)
                bad += 1
                continue
            src = m.group(1)
            want = variant(open(src, encoding='utf-8', errors='replace').read(), src)
            if open(v, encoding='utf-8').read() != want:
                print('stale:', v)
                bad += 1
        return 1 if bad else 0
    for p in argv:
        with open(p, encoding='utf-8', errors='replace') as f:
            text = f.read()
        t = target(p)
        out = variant(text, p)
        os.makedirs(os.path.dirname(t), exist_ok=True)
        with open(t, 'w', encoding='utf-8') as f:
            f.write(out)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
