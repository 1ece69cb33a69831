package symbolize

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/symbolize/internal/scan"
)

const pageSize = 4096

// BiasEstimate is a load bias and the evidence for it.
type BiasEstimate struct {
	// Bias is load address minus link-time address (page aligned).
	Bias uint64 `json:"bias"`
	// Source is "caller", "module+offset" (a frame printed both an absolute
	// PC and a module offset), "symbols" (recovered from frames printing an
	// address and a function name), or "" when no bias could be found.
	Source string `json:"source,omitempty"`
	// Votes is how many frames agree with Bias, Frames how many frames
	// could vote (had an address and a usable name or offset).
	Votes  int `json:"votes"`
	Frames int `json:"frames"`
	// Ambiguous is set when another bias had as many votes.
	Ambiguous bool `json:"ambiguous,omitempty"`
	// Reason explains a failure (Source == "").
	Reason string `json:"reason,omitempty"`
}

// RecoverBias finds the load bias of a PIE binary from crash frames
// that belong to it. A frame with both an absolute PC and a module offset
// gives the bias directly. Otherwise frames printing an absolute PC and a
// function name (glog `@ 0x55d1… doris::Foo::bar()`) vote: the bias must
// be the page-aligned value that puts each PC inside the symbol of that
// name; the value with most votes wins. It needs the binary's symbol table.
func RecoverBias(b *Binary, frames []Frame) BiasEstimate {
	var est BiasEstimate
	// Direct evidence.
	direct := map[uint64]int{}
	for _, f := range frames {
		if f.PC != 0 && f.HasOffset && uint64(f.PC) >= uint64(f.Offset) {
			direct[uint64(f.PC)-uint64(f.Offset)]++
			est.Frames++
		}
	}
	if len(direct) > 0 {
		return pickBias(direct, est, "module+offset")
	}
	votes := map[uint64]int{}
	cache := map[string][]int{}
	for _, f := range frames {
		name := f.Function
		if f.Demangled != "" {
			name = f.Demangled
		}
		if f.PC == 0 || isPlaceholderName(name) || looksLikeAddress(name) {
			continue
		}
		cands := b.symbolsNamed(name, cache)
		if len(cands) == 0 {
			continue
		}
		est.Frames++
		pc := uint64(f.PC)
		seen := map[uint64]bool{}
		for _, si := range cands {
			a, sz := b.syms.Addr[si], b.syms.Size[si]
			if sz == 0 {
				sz = 1
			}
			if pc < a {
				continue
			}
			// pc - bias in [a, a+sz): bias in (pc-a-sz, pc-a].
			hiB := (pc - a) &^ (pageSize - 1)
			loB := uint64(0)
			if pc-a >= sz {
				loB = pc - a - sz + 1
			}
			n := 0
			for v := hiB; v >= loB && n < 64; v -= pageSize {
				if !seen[v] {
					seen[v] = true
					votes[v]++
				}
				n++
				if v < pageSize {
					break
				}
			}
		}
	}
	if len(votes) == 0 {
		est.Reason = "no frame printed both an address and a function name found in the symbol table"
		if b.syms.Addr == nil {
			est.Reason = "the binary has no symbol table"
		}
		return est
	}
	return pickBias(votes, est, "symbols")
}

func pickBias(votes map[uint64]int, est BiasEstimate, source string) BiasEstimate {
	keys := make([]uint64, 0, len(votes))
	for k := range votes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	best, bestN, ties := uint64(0), 0, 0
	for _, k := range keys {
		switch n := votes[k]; {
		case n > bestN:
			best, bestN, ties = k, n, 0
		case n == bestN:
			ties++
		}
	}
	est.Bias, est.Votes, est.Source, est.Ambiguous = best, bestN, source, ties > 0
	if est.Ambiguous && bestN < 2 {
		est.Source = ""
		est.Reason = fmt.Sprintf("%d candidate biases with %d vote each", ties+1, bestN)
	}
	return est
}

// symbolsNamed returns the indexes of the symbols whose demangled name
// has the same key (nameKey) as name. To avoid demangling the whole
// symbol table it first keeps the mangled names that contain the source
// name of the last identifier (`33buffer_next_batch_chunks_blocking`),
// or of the class for constructors, destructors, operators and lambdas.
func (b *Binary) symbolsNamed(name string, cache map[string][]int) []int {
	if IsMangled(name) {
		name, _ = b.dem.Demangle(name)
	}
	key := scan.NameKey(name)
	if key == "" {
		return nil
	}
	if c, ok := cache[key]; ok {
		return c
	}
	var out []int
	if b.closed.Load() {
		return nil
	}
	b.life.RLock()
	defer b.life.RUnlock()
	if b.closed.Load() {
		return nil
	}
	needle := []byte(mangledNeedle(key))
	for i := range b.syms.Addr {
		raw := b.syms.RawName(i)
		switch {
		case string(raw) == key: // C or unmangled name
			out = append(out, i)
		case len(needle) > 0 && len(raw) > 2 && raw[0] == '_' && raw[1] == 'Z' && bytes.Contains(raw, needle):
			if d, _ := b.dem.Demangle(b.syms.NameAt(i)); scan.NameKey(d) == key {
				out = append(out, i)
			}
		}
	}
	cache[key] = out
	return out
}

// mangledNeedle returns "<len><identifier>" for the innermost identifier
// of a qualified name key that a mangled name must contain, or "".
func mangledNeedle(key string) string {
	parts := splitQualified(key)
	for i := len(parts) - 1; i >= 0; i-- {
		id := parts[i]
		if j := strings.IndexByte(id, '<'); j >= 0 {
			id = id[:j]
		}
		id = strings.TrimSpace(id)
		if id == "" || id[0] == '~' || id[0] == '{' || id[0] == '(' || strings.HasPrefix(id, "operator") ||
			i > 0 && id == strings.SplitN(parts[i-1], "<", 2)[0] {
			continue // destructor, lambda, anonymous namespace, operator, constructor
		}
		ok := true
		for _, c := range id {
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				ok = false
				break
			}
		}
		if ok {
			return strconv.Itoa(len(id)) + id
		}
	}
	return ""
}

// splitQualified splits a key at "::" outside template brackets.
func splitQualified(s string) []string {
	var parts []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(', '{':
			depth++
		case '>', ')', '}':
			if depth > 0 {
				depth--
			}
		case ':':
			if depth == 0 && i+1 < len(s) && s[i+1] == ':' {
				parts = append(parts, s[last:i])
				last = i + 2
				i++
			}
		}
	}
	return append(parts, s[last:])
}
