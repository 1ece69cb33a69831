package report_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/report"
)

// chromium finds the browser, or skips (fails under CI=true, where
// .ci/run installs the Debian package chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is missing under CI: .ci/run installs the Debian package chromium")
	}
	t.Skip("chromium not installed (apt-get install chromium)")
	return ""
}

// browserOptions launch a headless Chromium that makes no network
// request of its own (the machine may have no network at all).
func browserOptions(bin, userDir string, w, h int) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		// Belt and braces: every request that is not for 127.0.0.1 or a
		// file goes to a closed local port, and no host name resolves.
		chromedp.ProxyServer("127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.UserDataDir(userDir),
		chromedp.WindowSize(w, h),
	}
}

// TestBrowser opens the report of the bundled data in headless Chromium
// from file:// and checks what a person sees: the top row, a filter that
// hides rows, sorting, the charts, no console error. The screenshot is
// kept in the test's temporary directory (-v prints where).
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	bs := bundledBuckets(t)
	dir := t.TempDir()
	pagePath := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(pagePath, render(t, bs, report.Options{}), 0o644))

	want := struct {
		top, rows, scan, maxCount, minCount int
	}{rows: len(bs), minCount: bs[0].Count}
	for _, b := range bs {
		want.maxCount = max(want.maxCount, b.Count)
		want.minCount = min(want.minCount, b.Count)
		if b.Path == catalog.PathScan {
			want.scan++
		}
	}
	require.Positive(t, want.scan, "the corpus has scan-path crashes")
	topIDs := map[string]bool{}
	for _, b := range bs {
		if b.Count == want.maxCount {
			topIDs[b.ID] = true
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, browserOptions(bin, filepath.Join(dir, "profile"), 1280, 900)...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	var mu sync.Mutex
	var problems []string
	require.NoError(t, chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, fmt.Sprintf("exception: %s", ev.ExceptionDetails.Text))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				problems = append(problems, fmt.Sprintf("console.%s", ev.Type))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, fmt.Sprintf("%s %s: %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	}))
	t0 := time.Now()
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate("file://"+pagePath)))
	t.Logf("browser started and page loaded in %v", time.Since(t0).Round(time.Millisecond))

	eval := func(js string) int {
		t.Helper()
		n, err := chromedp.Run(bctx, chromedp.Evaluate[int](js))
		require.NoError(t, err, js)
		return n
	}
	visibleRows := `Array.from(document.querySelectorAll("#top tbody tr")).filter(r => r.offsetParent !== null).length`

	// The script ran: the filters are shown; every row is visible.
	require.Equal(t, 1, eval(`document.getElementById("filters").hidden ? 0 : 1`))
	require.Equal(t, want.rows, eval(visibleRows))
	// The top row is the most frequent bucket.
	topID, err := chromedp.Run(bctx, chromedp.Text("#top tbody tr:first-child td.key code"))
	require.NoError(t, err)
	assert.True(t, topIDs[strings.TrimSpace(topID)], "top row %q is not a bucket with the highest count %d", topID, want.maxCount)
	assert.Equal(t, want.maxCount, eval(`parseInt(document.querySelector("#top tbody tr:first-child td.num").textContent)`))

	// The path filter hides every row of the other paths.
	eval(`(() => { const s = document.getElementById("f-path"); s.value = "scan"; s.dispatchEvent(new Event("change")); return 0 })()`)
	assert.Equal(t, want.scan, eval(visibleRows))
	assert.Equal(t, 0, eval(`Array.from(document.querySelectorAll("#top tbody tr")).filter(r => r.offsetParent !== null && r.dataset.path !== "scan").length`))
	assert.Contains(t, evalString(t, bctx, `document.getElementById("f-count").textContent`), fmt.Sprintf("%d of %d", want.scan, want.rows))
	// The text filter narrows further; clearing both shows every row again.
	eval(`(() => { const q = document.getElementById("f-q"); q.value = "no row has this text"; q.dispatchEvent(new Event("input")); return 0 })()`)
	assert.Equal(t, 0, eval(visibleRows))
	eval(`(() => { const q = document.getElementById("f-q"); q.value = ""; q.dispatchEvent(new Event("input"));
		const s = document.getElementById("f-path"); s.value = ""; s.dispatchEvent(new Event("change")); return 0 })()`)
	assert.Equal(t, want.rows, eval(visibleRows))

	// Sorting by count: descending first, then ascending.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(`#top thead th:nth-child(5)`)))
	assert.Equal(t, want.maxCount, eval(`parseInt(document.querySelector("#top tbody tr:first-child td.num").textContent)`))
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(`#top thead th:nth-child(5)`)))
	assert.Equal(t, want.minCount, eval(`parseInt(document.querySelector("#top tbody tr:first-child td.num").textContent)`))
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(`#top thead th:nth-child(1)`)))
	assert.Equal(t, want.maxCount, eval(`parseInt(document.querySelector("#top tbody tr:first-child td.num").textContent)`), "back to the ranking")

	// The charts are drawn and visible.
	assert.Positive(t, eval(`document.querySelectorAll("#chart-time rect").length`))
	assert.Greater(t, eval(`Math.round(document.getElementById("chart-time").getBoundingClientRect().width)`), 300)
	assert.Equal(t, 2, eval(`document.querySelectorAll("svg.bars").length`))
	// A link from the table to its section works.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(`#top tbody tr:first-child td.key a`)))
	assert.Equal(t, "#b1", evalString(t, bctx, `location.hash`))

	// The page is too tall for one capture: the viewport at the top.
	eval(`(() => { window.scrollTo(0, 0); return 0 })()`)
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	shotPath := filepath.Join(dir, "report.png")
	require.NoError(t, os.WriteFile(shotPath, shot, 0o644))
	t.Logf("screenshot: %s (%d bytes)", shotPath, len(shot))

	// Narrow (phone) viewport: the table turns into cards, still filterable.
	require.NoError(t, chromedp.Do(bctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate("file://"+pagePath)))
	assert.Equal(t, 0, eval(`document.querySelector("#top thead").offsetParent === null ? 0 : 1`), "no header row on a phone")
	assert.LessOrEqual(t, eval(`document.documentElement.scrollWidth`), 400, "nothing wider than the phone")
	phone, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "report-phone.png"), phone, 0o644))

	// Hostile crash text stays text in the browser too: no script of its
	// own runs (an alert would open a dialog), no element is injected.
	hostilePath := filepath.Join(dir, "hostile.html")
	require.NoError(t, os.WriteFile(hostilePath, render(t, hostileBuckets(), report.Options{Title: hostile}), 0o644))
	var dialogs atomic.Int32
	require.NoError(t, chromedp.Listen(bctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
		}
	}))
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate("file://"+hostilePath)))
	assert.Equal(t, 1, eval(`document.scripts.length`))
	assert.Equal(t, 0, eval(`document.querySelectorAll("img, iframe, object, embed, textarea").length`))
	assert.Equal(t, 0, eval(`Array.from(document.querySelectorAll("*")).filter(e => Array.from(e.attributes).some(a => a.name.startsWith("on"))).length`))
	assert.Equal(t, 1, eval(`document.title.includes("<script>alert(1)</script>") ? 1 : 0`), "the title shows the text as text")
	assert.Equal(t, 4, eval(`document.querySelectorAll("#top tbody tr").length`))
	assert.Zero(t, dialogs.Load(), "no alert ran")

	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, problems, "console errors and warnings")
}

func evalString(t *testing.T, ctx context.Context, js string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	require.NoError(t, err, js)
	return s
}
