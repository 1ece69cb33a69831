package signature

import "math"

// Similarity parameters (see Similarity).
const (
	// SimilarityDecay (c) weights frames by their distance from the top.
	SimilarityDecay = 0.3
	// SimilarityOffset (o) penalizes matching frames at different depths.
	SimilarityOffset = 0.5
	// maxSimilarityFrames bounds the frames compared.
	maxSimilarityFrames = 64
)

// Similarity scores two normalized frame lists (innermost first) in [0, 1],
// in the manner of ReBucket's position-dependent model (Dang et al., ICSE
// 2012), also used by TraceSim: an alignment of the two lists, where a match
// of a[i] with b[j] is worth
//
//	w(i, j) = exp(-c·min(i, j)) · exp(-o·|i-j|)
//
// (c = SimilarityDecay: frames near the top matter more; o =
// SimilarityOffset: a frame matched at a different depth matters less).
// The score is the best alignment's total (a longest-common-subsequence
// style dynamic program, O(|a|·|b|)) divided by the best possible total,
// Σ_{k<min(|a|,|b|)} exp(-c·k). Identical lists score 1, lists without a
// common frame 0; an empty list scores 0. At most 64 frames of each list
// are compared.
//
// Similarity suggests "probably the same as …" between buckets whose keys
// differ; it never replaces the key.
func Similarity(a, b []string) float64 {
	if len(a) > maxSimilarityFrames {
		a = a[:maxSimilarityFrames]
	}
	if len(b) > maxSimilarityFrames {
		b = b[:maxSimilarityFrames]
	}
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	m, n := len(a), len(b)
	prev := make([]float64, n+1)
	cur := make([]float64, n+1)
	for i := 1; i <= m; i++ {
		cur[0] = 0
		for j := 1; j <= n; j++ {
			best := prev[j]
			if cur[j-1] > best {
				best = cur[j-1]
			}
			if a[i-1] == b[j-1] {
				d := i - j
				if d < 0 {
					d = -d
				}
				w := math.Exp(-SimilarityDecay*float64(min(i, j)-1)) * math.Exp(-SimilarityOffset*float64(d))
				if v := prev[j-1] + w; v > best {
					best = v
				}
			}
			cur[j] = best
		}
		prev, cur = cur, prev
	}
	var norm float64
	for k := 0; k < min(m, n); k++ {
		norm += math.Exp(-SimilarityDecay * float64(k))
	}
	s := prev[n] / norm
	if s > 1 {
		s = 1
	}
	return s
}
