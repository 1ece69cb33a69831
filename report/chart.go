package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crashsig/crashsig/catalog"
)

// binner puts crash dates into the bins of the time chart and the
// sparklines: days when the dates span at most 92 days, weeks (starting
// Monday) up to three years, else months, else years; one bin list for
// the whole page so sparklines compare.
type binner struct {
	unit  string
	start time.Time
	n     int
}

func parseDay(s string) (time.Time, bool) {
	t, err := time.Parse(time.DateOnly, s)
	return t, err == nil
}

func newBinner(bs []Bucket) *binner {
	var lo, hi time.Time
	for i := range bs {
		for d := range bs[i].Days {
			t, ok := parseDay(d)
			if !ok {
				continue
			}
			if lo.IsZero() || t.Before(lo) {
				lo = t
			}
			if t.After(hi) {
				hi = t
			}
		}
	}
	if lo.IsZero() {
		return &binner{}
	}
	span := int(hi.Sub(lo).Hours()/24) + 1
	months := (hi.Year()*12 + int(hi.Month())) - (lo.Year()*12 + int(lo.Month())) + 1
	switch {
	case span <= 92:
		return &binner{unit: "day", start: lo, n: span}
	case span <= 7*156:
		mon := lo.AddDate(0, 0, -((int(lo.Weekday()) + 6) % 7))
		return &binner{unit: "week", start: mon, n: int(hi.Sub(mon).Hours()/24)/7 + 1}
	case months <= maxTimeBins:
		return &binner{unit: "month", start: time.Date(lo.Year(), lo.Month(), 1, 0, 0, 0, 0, time.UTC), n: months}
	default:
		return &binner{unit: "year", start: time.Date(lo.Year(), 1, 1, 0, 0, 0, 0, time.UTC), n: hi.Year() - lo.Year() + 1}
	}
}

// index returns the bin of a date (ok false for an unparseable date).
func (bn *binner) index(day string) (int, bool) {
	t, ok := parseDay(day)
	if !ok || bn.n == 0 {
		return 0, false
	}
	var i int
	switch bn.unit {
	case "day":
		i = int(t.Sub(bn.start).Hours() / 24)
	case "week":
		i = int(t.Sub(bn.start).Hours()/24) / 7
	case "month":
		i = (t.Year()*12 + int(t.Month())) - (bn.start.Year()*12 + int(bn.start.Month()))
	default:
		i = t.Year() - bn.start.Year()
	}
	return i, i >= 0 && i < bn.n
}

// label names bin i.
func (bn *binner) label(i int) string {
	switch bn.unit {
	case "day":
		return bn.start.AddDate(0, 0, i).Format(time.DateOnly)
	case "week":
		return "week of " + bn.start.AddDate(0, 0, 7*i).Format(time.DateOnly)
	case "month":
		return bn.start.AddDate(0, i, 0).Format("2006-01")
	}
	return strconv.Itoa(bn.start.Year() + i)
}

// counts returns a bucket's crashes per bin.
func (bn *binner) counts(b *Bucket) []int {
	c := make([]int, bn.n)
	for d, k := range b.Days {
		if i, ok := bn.index(d); ok {
			c[i] += k
		}
	}
	return c
}

// spark returns a bucket's sparkline: SVG path data over a viewBox of
// n×16 (one vertical bar per non-empty bin), its width in CSS pixels and
// a title.
func (bn *binner) spark(b *Bucket) (string, int, string) {
	if bn.n == 0 {
		return "", 0, ""
	}
	c := bn.counts(b)
	peak, total := 0, 0
	for _, k := range c {
		peak, total = max(peak, k), total+k
	}
	if total == 0 {
		return "", 0, ""
	}
	var sb strings.Builder
	for i, k := range c {
		if k == 0 {
			continue
		}
		h := 2 + 14*float64(k)/float64(peak)
		fmt.Fprintf(&sb, "M%s 16V%s", ff(float64(i)+0.5), ff(16-h))
	}
	title := fmt.Sprintf("%d dated crashes per %s, %s to %s; peak %d", total, bn.unit, bn.label(0), bn.label(bn.n-1), peak)
	if b.Undated > 0 {
		title += fmt.Sprintf("; %d undated", b.Undated)
	}
	return sb.String(), 80, title
}

// Geometry of the time chart (viewBox units).
const (
	tcW, tcH        = 720, 190
	tcLeft, tcRight = 40, 8
	tcTop, tcBottom = 10, 36
	barRowH, labelW = 20, 150
	barAreaW, barsW = 280, 480
)

func timeChartOf(bs []Bucket, paths []catalog.Path, bn *binner) timeChart {
	tc := timeChart{Unit: cmp.Or(bn.unit, "day"), W: tcW, H: tcH, Bins: bn.n}
	for i := range bs {
		tc.Undated += bs[i].Undated
	}
	if bn.n == 0 {
		tc.Empty = true
		return tc
	}
	per := make(map[catalog.Path][]int, len(paths))
	total := make([]int, bn.n)
	for i := range bs {
		c := bn.counts(&bs[i])
		acc := per[bs[i].Path]
		if acc == nil {
			acc = make([]int, bn.n)
			per[bs[i].Path] = acc
		}
		for j, k := range c {
			acc[j] += k
			total[j] += k
		}
	}
	for _, k := range total {
		tc.Max = max(tc.Max, k)
	}
	if tc.Max == 0 {
		tc.Empty = true
		return tc
	}
	plotW, plotH := float64(tcW-tcLeft-tcRight), float64(tcH-tcTop-tcBottom)
	bw := plotW / float64(bn.n)
	gap := min(bw*0.15, 2)
	for j := 0; j < bn.n; j++ {
		if total[j] == 0 {
			continue
		}
		y := float64(tcTop) + plotH
		for _, pa := range paths {
			k := per[pa][j]
			if k == 0 {
				continue
			}
			h := plotH * float64(k) / float64(tc.Max)
			y -= h
			tc.Rects = append(tc.Rects, rect{X: ff(tcLeft + bw*float64(j) + gap/2), Y: ff(y), W: ff(bw - gap), H: ff(h),
				Class: classOf(pathClass, pa), Title: fmt.Sprintf("%s: %s %d", bn.label(j), pa, k)})
		}
	}
	base := strconv.Itoa(tcTop + int(plotH) + 14)
	tc.Labels = append(tc.Labels,
		axisLabel{X: strconv.Itoa(tcLeft - 4), Y: strconv.Itoa(tcTop + 8), Text: strconv.Itoa(tc.Max), Anchor: "end"},
		axisLabel{X: strconv.Itoa(tcLeft - 4), Y: strconv.Itoa(tcTop + int(plotH)), Text: "0", Anchor: "end"},
		axisLabel{X: strconv.Itoa(tcLeft), Y: base, Text: strings.TrimPrefix(bn.label(0), "week of "), Anchor: "start"})
	if bn.n > 1 {
		tc.Labels = append(tc.Labels, axisLabel{X: strconv.Itoa(tcW - tcRight), Y: base, Text: strings.TrimPrefix(bn.label(bn.n-1), "week of "), Anchor: "end"})
	}
	for _, pa := range paths {
		tc.Legend = append(tc.Legend, pathStat{Name: string(pa), Class: classOf(pathClass, pa)})
	}
	return tc
}

func barsOf(labels []string, counts []int, classes []string, one, many string) barChart {
	bc := barChart{W: barsW, H: barRowH*len(labels) + 6}
	peak := 0
	for _, n := range counts {
		peak = max(peak, n)
	}
	if peak == 0 {
		bc.Empty = true
		return bc
	}
	for i, l := range labels {
		w := float64(barAreaW) * float64(counts[i]) / float64(peak)
		y := 3 + barRowH*i
		bc.Bars = append(bc.Bars, bar{Y: strconv.Itoa(y + 3), TextY: strconv.Itoa(y + 14), W: ff(max(w, 1)), NumX: ff(labelW + max(w, 1) + 6),
			Label: l, Class: classes[i], N: counts[i], Title: fmt.Sprintf("%s: %d %s", l, counts[i], plural(counts[i], one, many))})
	}
	return bc
}

func versionChart(versions map[string]int) barChart {
	keys := slices.Collect(maps.Keys(versions))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(versions[b], versions[a]), cmp.Compare(a, b)) })
	var labels, classes []string
	var counts []int
	other, otherN := 0, 0
	for i, v := range keys {
		if versions[v] == 0 {
			continue
		}
		if i >= maxBars {
			other += versions[v]
			otherN++
			continue
		}
		labels, counts = append(labels, versionLabel(v)), append(counts, versions[v])
		classes = append(classes, "v")
	}
	if other > 0 {
		labels, counts = append(labels, fmt.Sprintf("%d other versions", otherN)), append(counts, other)
		classes = append(classes, "v")
	}
	return barsOf(labels, counts, classes, "crash", "crashes")
}

func statusChart(statuses []string, n map[catalog.Status]int) barChart {
	var counts []int
	var classes, labels []string
	for _, s := range statuses {
		labels = append(labels, clip(s, clipLabel))
		counts = append(counts, n[catalog.Status(s)])
		classes = append(classes, classOf(statusClass, catalog.Status(s)))
	}
	return barsOf(labels, counts, classes, "bucket", "buckets")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
