package signature

import (
	"strings"
	"sync"
)

// cache is a bounded, concurrency-safe map: when full it is emptied and
// refilled, which bounds memory without bookkeeping on the hot path.
type cache[V any] struct {
	mu    sync.RWMutex
	m     map[string]V
	limit int
}

func newCache[V any](limit int) *cache[V] {
	if limit <= 0 {
		limit = 1 << 16
	}
	return &cache[V]{m: make(map[string]V), limit: limit}
}

// get returns the cached value of key, computing and storing it on a miss
// (keys longer than maxNormalizeInput are computed but not stored).
func (c *cache[V]) get(key string, compute func() V) V {
	c.mu.RLock()
	v, ok := c.m[key]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = compute()
	if len(key) > maxNormalizeInput {
		return v
	}
	c.mu.Lock()
	if len(c.m) >= c.limit {
		clear(c.m)
	}
	c.m[strings.Clone(key)] = v
	c.mu.Unlock()
	return v
}

func (c *cache[V]) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// Normalizer is Normalize with a bounded cache: crash streams repeat the
// same names, and a hit costs one map lookup. It is safe for concurrent use.
type Normalizer struct {
	c *cache[string]
}

// NewNormalizer returns a Normalizer caching up to limit names (≤ 0 means
// 65536). A full cache is emptied and refilled.
func NewNormalizer(limit int) *Normalizer {
	return &Normalizer{c: newCache[string](limit)}
}

// Normalize is the cached form of the package-level Normalize.
func (n *Normalizer) Normalize(name string) string {
	return n.c.get(name, func() string { return normalize(name, false) })
}

// NormalizeJava is the cached form of the package-level NormalizeJava.
func (n *Normalizer) NormalizeJava(name string) string {
	return n.c.get("\x00j"+name, func() string { return normalize(name, true) })
}
