// Package report renders crash buckets as one self-contained HTML page:
// the page people look at after a week of crashes across a fleet.
//
//	col := report.NewCollector()
//	for res, err := range p.Run(ctx, nil, paths...) { // a *pipeline.Pipeline
//		if err == nil {
//			col.Add(res)
//		}
//	}
//	err := report.Render(ctx, w, col.Buckets(0.8), report.Options{})
//
// The page has a summary (crashes, buckets, known versus new, the paths,
// the catalog revision and signature algorithm), a "top crashers" table
// (one row per bucket ranked by count, with a sparkline; sortable and
// filterable by product, path and status with a few lines of plain
// JavaScript, a static ranked table without it), charts as inline SVG
// (crashes over time stacked by path, crashes per version, buckets by
// status) and one section per bucket (the representative crash's frames,
// the signature trace, the path evidence, similar defects and buckets,
// the location of every crash, thread groups).
//
// The page needs nothing else: no network, no fonts, no scripts or
// styles from elsewhere; it works from file://, prints (@media print)
// and reads on a phone. It is built with html/template, so crash text —
// untrusted input — is always escaped; long names are clipped. The only
// external links are the known defects' issue links (http and https
// only). Output is deterministic: the same buckets and Options give the
// same bytes; the page shows a generation time only when Options.Generated
// is set.
//
// Buckets come from a Collector fed with pipeline Results (exact counts
// per day and per version, the location of every crash, thread groups) or
// from the JSON Lines of `crashsig buckets --json` (ReadBuckets), which
// carry first and last times and the versions seen but not per-day or
// per-version counts: the page then says which counts it could not
// attribute.
package report
