package symbolize

import (
	"strings"
	"sync"

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
func Demangle(name string) (string, bool) {
	if !IsMangled(name) || len(name) > maxDemangleInput {
		return name, false
	}
	s, err := demangle.ToString(name, demangle.MaxLength(16))
	if err != nil || s == "" {
		return name, false
	}
	return s, true
}

// Demangler is Demangle with a bounded cache: crash streams repeat the same
// names over and over, and a cache hit costs one map lookup. A Demangler is
// safe for concurrent use; the zero value is not usable, call NewDemangler.
type Demangler struct {
	mu    sync.RWMutex
	cache map[string]string
	limit int
}

// NewDemangler returns a Demangler that caches up to limit names (a limit
// ≤ 0 means 65536). When the cache is full it is emptied and refilled, which
// keeps memory bounded without bookkeeping on the hot path.
func NewDemangler(limit int) *Demangler {
	if limit <= 0 {
		limit = 1 << 16
	}
	return &Demangler{cache: make(map[string]string), limit: limit}
}

// Demangle is the cached form of the package-level Demangle.
func (d *Demangler) Demangle(name string) (string, bool) {
	if !IsMangled(name) {
		return name, false
	}
	d.mu.RLock()
	s, ok := d.cache[name]
	d.mu.RUnlock()
	if ok {
		return s, s != name
	}
	s, _ = Demangle(name)
	d.mu.Lock()
	if len(d.cache) >= d.limit {
		clear(d.cache)
	}
	d.cache[strings.Clone(name)] = s
	d.mu.Unlock()
	return s, s != name
}
