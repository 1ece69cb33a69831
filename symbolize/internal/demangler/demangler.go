// Package demangler turns Itanium C++ mangled names into the text c++filt
// prints: a fast path (internal/itanium) for most names and
// github.com/ianlancetaylor/demangle for the rest, with an optional bounded,
// sharded cache (Demangler). The symbolize package re-exports Demangle,
// IsMangled, Demangler and NewDemangler; the scanner (internal/scan) and the
// symbolizer share one implementation through it.
//
// Contract: Demangle never panics and returns its input unchanged with
// false for a name that is not mangled, longer than 16 KiB, or refused by
// both demanglers; the same input always gives the same output.
package demangler

import (
	"hash/maphash"
	"strings"
	"sync"

	"github.com/crashsig/crashsig/symbolize/internal/itanium"

	"github.com/ianlancetaylor/demangle"
)

// IsMangled reports whether name looks like an Itanium C++ mangled name
// (`_Z…`, also the `_ZZ…` local names glog prints for lambdas), optionally
// followed by GCC clone suffixes such as `.cold` or `.isra.0`.
func IsMangled(name string) bool {
	return len(name) > 2 && name[0] == '_' && name[1] == 'Z' && (name[2] == 'N' || name[2] == 'Z' || name[2] == 'L' || name[2] == 'S' || name[2] == 'T' || name[2] == 'G' || name[2] == 'n' || (name[2] >= '0' && name[2] <= '9'))
}

// maxDemangleInput bounds the names handed to the demangler: real symbols
// are far shorter, and the demangler's cost grows with the input.
const maxDemangleInput = 16 << 10

// Demangle demangles an Itanium C++ name the way c++filt does, keeping GCC
// clone suffixes as ` [clone .cold]`. It returns the name unchanged and
// false when name is not mangled or cannot be demangled.
//
// The output is that of github.com/ianlancetaylor/demangle (ToString with
// MaxLength(16)). Most names take a fast path (internal/itanium, ~10×
// faster and allocation-free; it mirrors the reference's parser and
// printer, and its tests compare it with the reference on 22k committed
// real names, all 83.7k names of the symbench binary when present, and
// fuzzed and mutated input); names with constructs it leaves to the
// reference go to the reference package.
func Demangle(name string) (string, bool) {
	var fast itanium.Demangler
	s, ok, _ := demangleWith(&fast, nil, name)
	return s, ok
}

// demangleWith is Demangle with the fast path's scratch space and an
// output buffer supplied by the caller; it returns the buffer for reuse.
func demangleWith(fast *itanium.Demangler, buf []byte, name string) (string, bool, []byte) {
	if !IsMangled(name) || len(name) > maxDemangleInput {
		return name, false, buf
	}
	if out, ok := fast.AppendDemangle(buf[:0], name); ok {
		return string(out), true, out
	}
	s, err := demangle.ToString(name, demangle.MaxLength(16))
	if err != nil || s == "" {
		return name, false, buf
	}
	return s, true, buf
}

// Demangler is Demangle with a bounded cache: crash streams repeat the same
// names over and over, and a cache hit costs one map lookup. A Demangler is
// safe for concurrent use; the zero value is not usable, call New.
type Demangler struct {
	shards [demShards]demShard
	limit  int // per shard
	seed   maphash.Seed
	fast   sync.Pool // of *demScratch
}

const demShards = 16

type demShard struct {
	mu    sync.Mutex
	cache map[string]string
	_     [48]byte // keep shards on separate cache lines
}

type demScratch struct {
	d   itanium.Demangler
	buf []byte
}

// New returns a Demangler that caches up to limit names (a limit
// ≤ 0 means 65536). When a part of the cache is full it is emptied and
// refilled, which keeps memory bounded without bookkeeping on the hot
// path.
func New(limit int) *Demangler {
	if limit <= 0 {
		limit = 1 << 16
	}
	d := &Demangler{limit: max(1, limit/demShards), seed: maphash.MakeSeed()}
	d.fast.New = func() any { return new(demScratch) }
	return d
}

// Demangle is the cached form of the package-level Demangle.
func (d *Demangler) Demangle(name string) (string, bool) {
	if !IsMangled(name) {
		return name, false
	}
	sh := &d.shards[maphash.String(d.seed, name)%demShards]
	sh.mu.Lock()
	s, ok := sh.cache[name]
	sh.mu.Unlock()
	if ok {
		return s, s != name
	}
	s = d.Once(name)
	sh.mu.Lock()
	if sh.cache == nil || len(sh.cache) >= d.limit {
		sh.cache = make(map[string]string)
	}
	sh.cache[strings.Clone(name)] = s
	sh.mu.Unlock()
	return s, s != name
}

// Once demangles name without the cache, for callers that keep
// the result themselves (the symbolizer caches it per function and per
// symbol): with the fast path at well under a microsecond, the cache's
// hashing and map growth would cost more than they save there.
func (d *Demangler) Once(name string) string {
	sc := d.fast.Get().(*demScratch)
	s, _, buf := demangleWith(&sc.d, sc.buf, name)
	sc.buf = buf
	if cap(sc.buf) > 1<<16 {
		sc.buf = nil // do not keep a huge buffer alive
	}
	d.fast.Put(sc)
	return s
}
