package report

import (
	"bytes"
	"cmp"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/testbrowser"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// memoryDoc is one results directory of case demo: default, whose RSS saws
// (each full collection, every 40 steps, frees 30 MiB), and disabled,
// whose RSS ramps 3 MiB a step and which never collects; with the run
// summaries a results directory has.
func memoryDoc(steps int) *Doc {
	rng := rand.New(rand.NewPCG(3, 4))
	m := &results.Manifest{Host: results.Host{MemLimit: 16 << 30, MemLimitFrom: "MemTotal"},
		Cases: []results.Case{{Name: "demo", Steps: steps, Runs: 1, Variants: []results.Variant{{Name: "default", Policy: "default"}, {Name: "disabled", Policy: "disabled"}}}}}
	d := &Doc{Kind: "run", Title: "memory", Manifest: m, Steps: map[string][2]*results.Steps{}}
	for _, v := range m.Cases[0].Variants {
		s := &results.Steps{}
		durs, gcs, rss := make([]float64, steps), make([]uint8, steps), make([]float32, steps)
		var sm stats.Summarizer
		for i := range steps {
			durs[i] = 20e6 * math.Exp(0.05*rng.NormFloat64())
			y := 300 << 20
			if v.Name == "disabled" {
				y += i * (3 << 20)
			} else {
				y += (i % 40) * (30 << 20) / 40
				if i%40 == 39 {
					gcs[i] = results.GenBit(2)
					durs[i] += 100e6
				}
			}
			rss[i] = float32(y)
		}
		s.Runs, s.GC, s.RSS = [][]float64{durs}, [][]uint8{gcs}, [][]float32{rss}
		s.Pause, s.Collected = [][]float32{make([]float32, steps)}, [][]int32{make([]int32, steps)}
		name := results.BenchName("demo", v.Name)
		d.Steps[name] = [2]*results.Steps{s}
		for i := range steps {
			st := &bench.Step{Index: i, DurationNS: int64(durs[i]), RSS: new(int64(rss[i]))}
			if gcs[i] != 0 {
				st.GC = []bench.GCEvent{{Gen: 2, PauseNS: 100e6, InStep: true}}
			}
			sm.Add(st)
		}
		sum := sm.Result(stats.DefaultSpikeRule)
		m.Runs = append(m.Runs, &results.Run{ID: v.Name + "/run-01", Case: "demo", Variant: v.Name, Policy: v.Policy, Status: results.StatusOK, Summary: &sum})
	}
	return d
}

// The policies table shows each variant's memory and its class, and the
// summary says that disabled's calm tail is bought with memory it never
// frees. Runs under stats.MinStepsGrowth leave every class undecided.
func TestRunSummaryShowsTheMemoryTrade(t *testing.T) {
	var b bytes.Buffer
	RunSummaryText(&b, memoryDoc(600).Manifest)
	out := b.String()
	t.Log(out)
	for _, want := range []string{"peak RSS", "RSS/1k steps", "memory", "to limit",
		"disabled: p99 -", "but RSS grows 2.9 GiB per 1000 steps (default: 0 B): it never frees cyclic garbage; at this rate 16 GiB lasts"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	for variant, want := range map[string]string{"default": `0 B +bounded +never$`, "disabled": `2\.9 GiB +grows +\d+ min( to \d+ min)?$`} {
		if !regexp.MustCompile(`(?m)^ +` + variant + ` .*` + want).MatchString(out) {
			t.Errorf("%s's memory columns do not match %q", variant, want)
		}
	}
	if strings.Contains(out, "default: p99") {
		t.Error("the reference variant is judged against itself")
	}
	b.Reset()
	RunSummaryText(&b, memoryDoc(400).Manifest)
	if n := strings.Count(b.String(), "undecided: 500 steps"); n != 2 {
		t.Errorf("runs of 400 steps: %d variants' memory undecided needing 500 steps, want 2:\n%s", n, b.String())
	}
}

// TestMemoryChartInChromium opens a page in headless Chromium: its memory
// chart draws every run's RSS (default's sawtooth, disabled's ramp) with
// the full collections on default's line. Screenshot: memory.png in
// GCJITTER_SCREENSHOT_DIR when set.
func TestMemoryChartInChromium(t *testing.T) {
	browser := testbrowser.New(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := HTML(&b, memoryDoc(400)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "disabled: p99 -81.0% against default, but RSS grows") {
		t.Error("the page does not say that disabled's tail is bought with memory")
	}
	tab := browser.Open(t, page, true, 1300, 1000)
	if err := tab.Do(chromedp.WaitVisible(chromedp.CSS(`body[data-charts="ready"]`))); err != nil {
		t.Fatalf("the charts never got ready: %v (console: %q)", err, tab.Errors())
	}
	const mem = `gcjitter.charts["charts-1"].memory`
	if _, err := testbrowser.Eval[map[string]any](tab, mem+`.root.scrollIntoView({block: "center"}), {}`); err != nil {
		t.Fatalf("no memory chart: %v", err)
	}
	got, err := testbrowser.Eval[map[string]float64](tab, `(u => {
		const labels = u.series.map(s => s.label);
		const line = name => u.data[labels.indexOf(name)];
		const def = line("default run 1"), dis = line("disabled run 1"), marks = line("gen-2 collection") || [];
		let drops = 0, rises = 0;
		for (let i = 1; i < def.length; i++) if (def[i] < def[i-1] - 10) drops++;
		for (let i = 1; i < dis.length; i++) if (dis[i] > dis[i-1]) rises++;
		// Pixels of the plot: the lines' colours, and the red markers.
		const c = u.ctx.canvas, px = u.ctx.getImageData(0, 0, c.width, c.height).data;
		let red = 0, colored = 0;
		for (let i = 0; i < px.length; i += 4) {
			const [r, g, b, a] = [px[i], px[i+1], px[i+2], px[i+3]];
			if (a < 128) continue;
			if (r > 170 && g < 60 && b < 60) red++;
			if (Math.max(r, g, b) - Math.min(r, g, b) > 60) colored++;
		}
		return {series: u.series.length, drops, rises, steps: def.length, markers: marks.filter(v => v != null).length,
			markerOnLine: marks.every((v, i) => v == null || v === def[i]) ? 1 : 0, red, colored, height: c.height};
	})(`+mem+`)`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("memory chart: %v", got)
	if got["drops"] < 9 {
		t.Errorf("default's RSS drops %v times, want the sawtooth's 9 (a full collection every 40 of 400 steps)", got["drops"])
	}
	if got["rises"] < got["steps"]-2 {
		t.Errorf("disabled's RSS rises at %v of %v steps, want a ramp", got["rises"], got["steps"])
	}
	if got["markers"] != 10 || got["markerOnLine"] != 1 {
		t.Errorf("%v gen-2 markers (on default's line: %v), want 10 on it", got["markers"], got["markerOnLine"])
	}
	if got["red"] < 50 || got["colored"] < 2000 {
		t.Errorf("the canvas has %v red marker pixels and %v coloured ones: nothing drawn", got["red"], got["colored"])
	}
	shots := cmp.Or(os.Getenv("GCJITTER_SCREENSHOT_DIR"), dir)
	if err := tab.Screenshot(filepath.Join(shots, "memory.png")); err != nil {
		t.Fatal(err)
	}
	if errs := tab.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestRunSummaryNotesBusyRuns: runs made beside other load (over
// results.BusyLimit) are noted with their variant, count and load; runs
// under it or that recorded none are not.
func TestRunSummaryNotesBusyRuns(t *testing.T) {
	m := memoryDoc(100).Manifest
	m.Host.CPUs = 2
	busy, quiet := 1.3, 0.4
	m.Runs[0].OtherCPUs = &busy  // default
	m.Runs[1].OtherCPUs = &quiet // disabled
	var b bytes.Buffer
	RunSummaryText(&b, m)
	out := b.String()
	if want := "note: default: 1 of 1 runs beside other load (other processes kept up to 1.30 of the host's 2 CPUs busy, over 0.50)"; !strings.Contains(out, want) {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "disabled: 1 of 1 runs beside other load") {
		t.Errorf("a run under the limit is noted as busy:\n%s", out)
	}
}

// TestMemoryCollectorCells: a variant whose memory grows until a predicted
// first full collection says so in the table, with the peak by then, and
// its reason in the collector's words; one whose peak passes the limit
// still has a time to it.
func TestMemoryCollectorCells(t *testing.T) {
	peak := 10.2 * (1 << 30)
	sums := func(next int, peakAt float64) []*stats.RunSummary {
		m := &stats.Mem{Peak: 1.2 * (1 << 30), Growth: 2.9 * (1 << 30), GrowthLo: 2.8 * (1 << 30), GrowthHi: 3.0 * (1 << 30), Samples: 300, Class: stats.MemGrows,
			Collector: &stats.Freeing{Class: stats.MemGrows, Why: "about 2,403 tracked objects a step survive young collections", PerStep: 2403, NextFull: next, PeakAtNext: peakAt}}
		return []*stats.RunSummary{{Steps: 300, RSS: m}}
	}
	vm := variantMemory(sums(3498, peak), 16<<30, "MemTotal", 12e6)
	cells := VariantSummary{Variant: "threshold:700,10,1000", Memory: vm}.memoryCells()
	if cells[2] != "grows to step 3498" || cells[3] != "never: peak 10.2 GiB" {
		t.Errorf("cells %q", cells)
	}
	lines := memoryWhyLines([]VariantSummary{{Variant: "threshold:700,10,1000", Memory: vm}})
	if len(lines) != 1 || !strings.Contains(lines[0], "memory grows: about 2,403 tracked objects a step") {
		t.Errorf("lines %q", lines)
	}
	vm = variantMemory(sums(3498, peak), 8<<30, "MemTotal", 12e6)
	if vs := (VariantSummary{Memory: vm}); vm.HoursToLimit == nil || vs.memoryCells()[3] == "never: peak 10.2 GiB" {
		t.Errorf("under 8 GiB the peak passes the limit: hours %v", vm.HoursToLimit)
	}
}
