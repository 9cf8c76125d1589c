package report

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/gcjitter/gcjitter/internal/testbrowser"
	"github.com/gcjitter/gcjitter/results"
)

// jitterRun is a run of n steps of about base ns with a young collection
// every 3 steps (0.05 ms) and, at step pauseAt (if >= 0), one gen-2
// collection of pause ns that is the run's largest step: the customer's
// case of one 52 ms pause among 1 ms steps.
func jitterRun(rng *rand.Rand, s *results.Steps, n int, base float64, pauseAt int, pause float64) {
	durs, gcs := make([]float64, n), make([]uint8, n)
	pauses, collected := make([]float32, n), make([]int32, n)
	for i := range n {
		durs[i] = base * math.Exp(0.08*rng.NormFloat64())
		if i%3 == 0 {
			gcs[i] |= results.GenBit(0)
			pauses[i] = 50e3
			collected[i] = 700
			durs[i] += 50e3
		}
		if i == pauseAt {
			gcs[i] |= results.GenBit(2)
			pauses[i] = float32(pause)
			collected[i] = 123456
			durs[i] += pause
		}
	}
	s.Runs, s.GC = append(s.Runs, durs), append(s.GC, gcs)
	s.Pause, s.Collected = append(s.Pause, pauses), append(s.Collected, collected)
}

// spikeDoc is a comparison whose new side's run 1 has a single 52 ms gen-2
// pause at step 417 among ~1 ms steps, on runs of steps steps.
func spikeDoc(steps int) *Doc {
	rng := rand.New(rand.NewPCG(7, 8))
	old, new := &results.Steps{}, &results.Steps{}
	jitterRun(rng, old, steps, 1e6, -1, 0)
	jitterRun(rng, old, steps, 1e6, -1, 0)
	jitterRun(rng, new, steps, 1.05e6, 417, 52e6)
	jitterRun(rng, new, steps, 1.05e6, -1, 0)
	d := fixture()
	d.Steps = map[string][2]*results.Steps{"GCJitter/case=demo/variant=default": {old, new}}
	return d
}

// TestTailReachesTheLargestStep: the quantile curve ends at the run's
// slowest step, the gen-2 pause, in the data the chart draws and in the
// static figure's data alike (both read tailCurve).
func TestTailReachesTheLargestStep(t *testing.T) {
	d := spikeDoc(600)
	g := figureGroups(d)[0]
	newSide := g.Sides[1]
	xs, ys := newSide.tailCurve()
	if got, want := ys[len(ys)-1], newSide.sorted[len(newSide.sorted)-1]; got != want {
		t.Errorf("tail ends at %.3f ms, want the slowest step %.3f ms", got/1e6, want/1e6)
	}
	if got, want := xs[len(xs)-1], math.Log10(2*1200); math.Abs(got-want) > 1e-9 {
		t.Errorf("the slowest step sits at %.3f nines, want log10(2n) = %.3f", got, want)
	}
	for i := 1; i < len(xs); i++ {
		if xs[i] <= xs[i-1] || ys[i] < ys[i-1] {
			t.Fatalf("tail not increasing at point %d: (%v, %v) after (%v, %v)", i, xs[i], ys[i], xs[i-1], ys[i-1])
		}
	}
	if !g.logTime() {
		t.Error("1 ms steps with a 52 ms pause: the time axis should be logarithmic")
	}
	var b bytes.Buffer
	if err := HTML(&b, d); err != nil {
		t.Fatal(err)
	}
	// The static quantile chart is drawn on the nines axis.
	if !strings.Contains(b.String(), ">p99.9<") {
		t.Error("the static quantile chart has no p99.9 tick")
	}
}

// TestInteractivePageInChromium drives the page in a real headless
// Chromium over the DevTools protocol, as a reader would: it loads with no
// console error, dragging across the timeline zooms it, hovering the gen-2
// spike shows its pause, and with JavaScript off the static figures are
// there. Screenshots go to GCJITTER_SCREENSHOT_DIR when set.
func TestInteractivePageInChromium(t *testing.T) {
	browser := testbrowser.New(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := HTML(&b, spikeDoc(600)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shots := os.Getenv("GCJITTER_SCREENSHOT_DIR")
	if shots == "" {
		shots = dir
	}

	drive(t, browser, page, filepath.Join(shots, "interactive.png"))
	// A long run is drawn by buckets: the spike keeps its step, pause and
	// objects collected.
	long := filepath.Join(dir, "long.html")
	b.Reset()
	if err := HTML(&b, spikeDoc(20_000)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(long, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	drive(t, browser, long, filepath.Join(shots, "interactive-long.png"))

	// Scripts off: the static SVG figures are there and laid out; the
	// interactive area is not.
	off := browser.Open(t, page, false, 1300, 1000)
	if err := off.Do(chromedp.WaitVisible(chromedp.CSS(`figure.static svg`))); err != nil {
		t.Fatalf("with scripts off no static figure is visible: %v", err)
	}
	// DevTools still evaluates with the page's scripts off.
	laidOut, err := testbrowser.Eval[map[string]float64](off, `({static: [...document.querySelectorAll("figure.static svg")].filter(e => e.getBoundingClientRect().width > 300).length,
		interactive: [...document.querySelectorAll(".interactive")].filter(e => e.getBoundingClientRect().height > 0).length,
		ran: document.body.dataset.charts === "ready" ? 1 : 0})`)
	if err != nil {
		t.Fatal(err)
	}
	if laidOut["static"] < 4 || laidOut["interactive"] != 0 || laidOut["ran"] != 0 {
		t.Errorf("scripts off: %v static figures laid out (want 4: two timelines, tail, histogram), %v interactive areas shown, charts ran %v", laidOut["static"], laidOut["interactive"], laidOut["ran"])
	}
	if err := off.Screenshot(filepath.Join(shots, "noscript.png")); err != nil {
		t.Fatal(err)
	}
}

// TestMillionStepPage: a comparison of 1,000,000 steps a side stays under
// 5 MB, and its downsampled timeline keeps every gen-2 pause, with its
// exact step and pause for the tooltip.
func TestMillionStepPage(t *testing.T) {
	if testing.Short() {
		t.Skip("two million steps")
	}
	d := millionStepDoc()
	var b bytes.Buffer
	if err := HTML(&b, d); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 5e6 {
		t.Errorf("page of %.2f MB, want under 5 MB", float64(b.Len())/1e6)
	}
	t.Logf("page: %.2f MB", float64(b.Len())/1e6)
	g := figureGroups(d)[0]
	cg := chartData("charts-1", &g, TimelineBuckets)
	if cg.Bucket <= 1 || len(cg.X) > 2*TimelineBuckets+2 {
		t.Fatalf("bucket %d, %d slots: not downsampled", cg.Bucket, len(cg.X))
	}
	found := map[[2]int]float64{} // side, step -> pause ms
	for _, row := range cg.Marks[2].D {
		found[[2]int{int(row[1]), int(row[3])}] = row[4]
	}
	want := 0
	for si, side := range g.Sides {
		for i, bits := range side.Steps.GC[0] {
			if bits&results.GenBit(2) == 0 {
				continue
			}
			want++
			// Two sides share one marker per slot: the slower keeps it.
			p, ok := found[[2]int{si, i}]
			other, otherOK := found[[2]int{1 - si, i}]
			switch {
			case ok && math.Abs(p-float64(side.Steps.Pause[0][i])/1e6) > 0.01*p:
				t.Errorf("side %d step %d: marker pause %.2f ms, want %.2f", si, i, p, side.Steps.Pause[0][i]/1e6)
			case !ok && !otherOK:
				t.Errorf("side %d: the gen-2 pause at step %d has no marker", si, i)
			case !ok && otherOK && other <= 0:
				t.Errorf("side %d step %d: replaced by a marker without a pause", si, i)
			}
		}
		// Each run's line keeps the spike as its bucket's slowest step.
		run := cg.Sides[si].Runs[0]
		for i, bits := range side.Steps.GC[0] {
			if bits&results.GenBit(2) == 0 {
				continue
			}
			slot := 2*(i/cg.Bucket) + 1
			if start := (slot / 2) * cg.Bucket; start+run.S[slot] != i {
				t.Fatalf("side %d: bucket of step %d is drawn by step %d", si, i, start+run.S[slot])
			}
		}
	}
	if want != 400 {
		t.Fatalf("%d gen-2 pauses in the fixture, want 400", want)
	}
}

// drive opens page in Chromium and does what a reader does: zoom the
// timeline by dragging, hover the gen-2 spike of step 417, read the tail.
func drive(t *testing.T, browser *testbrowser.Browser, page, shot string) {
	tab := browser.Open(t, page, true, 1300, 1000)
	if err := tab.Do(chromedp.WaitVisible(chromedp.CSS(`body[data-charts="ready"]`))); err != nil {
		t.Fatalf("the charts never got ready: %v (console: %q)", err, tab.Errors())
	}
	eval := func(expr string) map[string]float64 {
		t.Helper()
		v, err := testbrowser.Eval[map[string]float64](tab, expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	const timeline = `gcjitter.charts["charts-1"].timeline`
	// Bring the timeline into view; coordinates below are the viewport's.
	eval(timeline + `.root.scrollIntoView({block: "center"}), {}`)
	before := eval(`(u => ({min: u.scales.x.min, max: u.scales.x.max}))(` + timeline + `)`)
	box := eval(`(r => ({x: r.left, y: r.top, w: r.width, h: r.height}))(` + timeline + `.over.getBoundingClientRect())`)
	if box["w"] < 200 {
		t.Fatalf("timeline plot area is %v px wide", box["w"])
	}
	y := box["y"] + box["h"]/2
	if err := tab.Do(
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box["x"]+0.25*box["w"], y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, box["x"]+0.25*box["w"], y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box["x"]+0.4*box["w"], y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box["x"]+0.5*box["w"], y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, box["x"]+0.5*box["w"], y, chromedp.ButtonLeft),
	); err != nil {
		t.Fatal(err)
	}
	after := eval(`(u => ({min: u.scales.x.min, max: u.scales.x.max}))(` + timeline + `)`)
	shown := eval(`(f => ({min: +f.dataset.min, max: +f.dataset.max}))(document.querySelector("#charts-1 figure.timeline"))`)
	t.Logf("timeline x range %.0f..%.0f, dragged to %.0f..%.0f; caption says %v..%v", before["min"], before["max"], after["min"], after["max"], shown["min"], shown["max"])
	if !(after["max"]-after["min"] < 0.5*(before["max"]-before["min"]) && after["min"] > before["min"]) {
		t.Errorf("dragging over a quarter of the timeline did not zoom it: %v -> %v", before, after)
	}
	if shown["max"]-shown["min"] > 0.5*(before["max"]-before["min"]) {
		t.Errorf("the caption still shows the whole range: %v", shown)
	}
	// Reset (double-click), then hover the gen-2 spike: the pause of step
	// 417 of new run 1.
	eval(timeline + `.setScale("x", {min: ` + fmt.Sprint(before["min"]) + `, max: ` + fmt.Sprint(before["max"]) + `}), {}`)
	// The slot drawing step 417: itself, or its bucket's slowest step.
	spike := eval(`(u => { const r = u.over.getBoundingClientRect(); const k = gcjitter.data.groups[0].bucket;
		const i = k == 1 ? u.data[0].indexOf(417) : 2 * Math.floor(417 / k) + 1;
		let best = 0; for (let s = 1; s < u.data.length; s++) best = Math.max(best, u.data[s][i] ?? 0);
		return {x: r.left + u.valToPos(u.data[0][i], "x"), y: r.top + u.valToPos(best, "y"), ms: best}; })(` + timeline + `)`)
	if spike["ms"] < 50 {
		t.Fatalf("no 52 ms step at 417 in the timeline's data: %v", spike)
	}
	if err := tab.Do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, spike["x"], spike["y"])); err != nil {
		t.Fatal(err)
	}
	tip, err := testbrowser.Eval[string](tab, `document.querySelector("#charts-1 .tip").textContent`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tooltip at the spike: %s", tip)
	for _, want := range []string{"step 417", "gen-2", "pause 52.0 ms", "collected 123,456", "new run 1"} {
		if !strings.Contains(tip, want) {
			t.Errorf("the tooltip over the gen-2 spike lacks %q: %q", want, tip)
		}
	}
	// The tail chart's y axis reaches the slowest step.
	tail := eval(`(u => ({max: u.scales.y.max}))(gcjitter.charts["charts-1"].tails)`)
	if tail["max"] < spike["ms"] {
		t.Errorf("the tail chart stops at %.1f ms, below the %.1f ms pause", tail["max"], spike["ms"])
	}
	if err := tab.Screenshot(shot); err != nil {
		t.Fatal(err)
	}
	if errs := tab.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}

}
