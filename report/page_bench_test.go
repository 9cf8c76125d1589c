package report

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gcjitter/gcjitter/internal/testbrowser"
	"github.com/gcjitter/gcjitter/results"
)

// millionStepDoc is a comparison of two sides of 1,000,000 steps each (one
// run) of about 1 ms, young collections every 3 steps and a gen-2 pause of
// 30 to 60 ms every 5,000 steps.
func millionStepDoc() *Doc {
	rng := rand.New(rand.NewPCG(11, 12))
	side := func(base float64) *results.Steps {
		s := &results.Steps{}
		jitterRun(rng, s, 1_000_000, base, -1, 0)
		for i := 2500; i < 1_000_000; i += 5000 {
			pause := 30e6 + 30e6*rng.Float64()
			s.Runs[0][i] += pause
			s.GC[0][i] |= results.GenBit(2)
			s.Pause[0][i] += float32(pause)
			s.Collected[0][i] += 100_000
		}
		return s
	}
	d := fixture()
	d.Steps = map[string][2]*results.Steps{"GCJitter/case=demo/variant=default": {side(1e6), side(1.05e6)}}
	return d
}

// BenchmarkMillionStepPage: a 1,000,000-step comparison page, its size,
// the time to render it, and the time Chromium takes from navigation to
// charts drawn and listening (data-charts-ms, measured by the page) and
// to redraw a zoom. Figures in BENCHMARKS.md.
func BenchmarkMillionStepPage(b *testing.B) {
	d := millionStepDoc()
	var page bytes.Buffer
	for b.Loop() {
		page.Reset()
		if err := HTML(&page, d); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(page.Len())/1e6, "page-MB")
	browser := testbrowser.New(b)
	path := filepath.Join(b.TempDir(), "million.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	tab := browser.Open(b, "", true, 1300, 1000)
	start := time.Now()
	if err := tab.Navigate(path); err != nil {
		b.Fatal(err)
	}
	if err := tab.Do(chromedp.WaitVisible(chromedp.CSS(`body[data-charts="ready"]`))); err != nil {
		b.Fatalf("charts never ready: %v (console: %q)", err, tab.Errors())
	}
	wall := time.Since(start)
	ms, err := testbrowser.Eval[string](tab, `document.body.dataset.chartsMs`)
	if err != nil {
		b.Fatal(err)
	}
	// A zoom, until the next frame is painted.
	zoom, err := testbrowser.Eval[float64](tab, `(u => new Promise(done => { const t = performance.now(); u.setScale("x", {min: 400000, max: 410000});
		requestAnimationFrame(() => done(performance.now() - t)); }))(gcjitter.charts["charts-1"].timeline)`, chromedp.EvalAwaitPromise)
	if err != nil {
		b.Fatal(err)
	}
	if errs := tab.Errors(); len(errs) > 0 {
		b.Errorf("console errors: %q", errs)
	}
	loaded, _ := strconv.ParseFloat(ms, 64)
	b.ReportMetric(loaded/1e3, "load-to-interactive-s")
	b.ReportMetric(wall.Seconds(), "navigate-to-ready-wall-s")
	b.ReportMetric(zoom, "zoom-redraw-ms")
}

// BenchmarkPageFile: an existing page (GCJITTER_PAGE, e.g. the report.html
// of make run's results): its size, and the time Chromium takes from
// navigation to charts drawn (data-charts-ms) at 1400x1000. Skipped
// without GCJITTER_PAGE. Figures in BENCHMARKS.md.
func BenchmarkPageFile(b *testing.B) {
	path := os.Getenv("GCJITTER_PAGE")
	if path == "" {
		b.Skip("GCJITTER_PAGE names no page")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	browser := testbrowser.New(b)
	var loaded, wall float64
	var tops []float64
	for b.Loop() {
		tab := browser.Open(b, "", true, 1400, 1000)
		start := time.Now()
		if err := tab.Navigate(path); err != nil {
			b.Fatal(err)
		}
		if err := tab.Do(chromedp.WaitVisible(chromedp.CSS(`body[data-charts="ready"]`))); err != nil {
			b.Fatalf("charts never ready: %v (console: %q)", err, tab.Errors())
		}
		wall = time.Since(start).Seconds()
		ms, err := testbrowser.Eval[string](tab, `document.body.dataset.chartsMs`)
		if err != nil {
			b.Fatal(err)
		}
		loaded, _ = strconv.ParseFloat(ms, 64)
		if errs := tab.Errors(); len(errs) > 0 {
			b.Errorf("console errors: %q", errs)
		}
		// Where the answer and the first chart sit, in screens of 1000 px.
		tops, err = testbrowser.Eval[[]float64](tab, `[document.querySelector("#answer"), document.querySelector(".interactive figure"), document.querySelector("#banner"), document.querySelector("#policies")].map(e => e ? (e.getBoundingClientRect().top + scrollY) / 1000 : -1)`)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(tops[0], "answer-at-screen")
	b.ReportMetric(tops[1], "first-chart-at-screen")
	b.Logf("banner at %.2f screens, policies at %.2f", tops[2], tops[3])
	b.ReportMetric(float64(st.Size())/1e6, "page-MB")
	b.ReportMetric(loaded/1e3, "load-to-interactive-s")
	b.ReportMetric(wall, "navigate-to-ready-wall-s")
}
