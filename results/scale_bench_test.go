package results

import (
	"bufio"
	"fmt"

	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/stats"
)

// writeSyntheticDir writes a results directory of runs x steps in the
// worker's record format: AR(1) step times, a gen-0 collection every third
// step, a gen-2 collection with a spike every 40 steps. It also writes the
// same steps as benchfmt, one line per step, for benchstat.
func writeSyntheticDir(tb testing.TB, dir string, runs, steps int, seed uint64, tailAdd float64) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	m := &Manifest{Schema: ManifestSchema, Tool: "synthetic", Started: time.Now().UTC(),
		Cases: []Case{{Name: "big", Steps: steps, Runs: runs, Spike: stats.SpikeRule{Factor: 1.5}, Variants: []Variant{{Name: "default", Policy: "default"}}}}}
	if err := os.MkdirAll(filepath.Join(dir, "runs", "big", "default"), 0o755); err != nil {
		tb.Fatal(err)
	}
	perStep, err := os.Create(filepath.Join(dir, "steps.bench"))
	if err != nil {
		tb.Fatal(err)
	}
	defer perStep.Close()
	pw := bufio.NewWriter(perStep)
	fmt.Fprintln(pw, "Unit ns/step better=lower")
	for r := range runs {
		rel := filepath.Join("runs", "big", "default", fmt.Sprintf("run-%02d.jsonl", r+1))
		f, err := os.Create(filepath.Join(dir, rel))
		if err != nil {
			tb.Fatal(err)
		}
		w := bufio.NewWriter(f)
		fmt.Fprintln(w, `{"type":"meta","schema":1,"python":{"version":"3.11.2"},"device":{"kind":"cpu"},"policy":"default","model":"gpt"}`)
		e := 0.0
		for i := range steps {
			e = 0.8*e + 0.03*rng.NormFloat64()
			d := 40e6 * (1 + e)
			gc := ""
			if i%3 == 0 {
				gc = `{"gen":0,"ns":52000,"collected":812,"uncollectable":0,"in_step":true,"manual":false}`
			}
			if i%40 == 0 {
				d += 8e6
				gc += `,{"gen":2,"ns":8000000,"collected":12,"uncollectable":0,"in_step":true,"manual":false}`
			}
			if rng.Float64() < 0.02 {
				d += 40e6 * tailAdd
			}
			if len(gc) > 0 && gc[0] == ',' {
				gc = gc[1:]
			}
			fmt.Fprintf(w, `{"type":"step","i":%d,"warmup":false,"ns":%d,"gc":[%s],"lost":0,"sched":false,"count":[123,4,0],"rss":612345856,"dev_mem":null}`+"\n", i, int64(d), gc)
			fmt.Fprintf(pw, "BenchmarkGCJitter/case=big/variant=default 1 %d ns/step\n", int64(d))
		}
		fmt.Fprintf(w, `{"type":"end","steps":%d,"wall_ns":1,"gc_stats":[],"recorded":null,"freeze_count":0}`+"\n", steps)
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
		f.Close()
		m.Runs = append(m.Runs, &Run{ID: fmt.Sprintf("big/default/run-%02d", r+1), Case: "big", Variant: "default", Policy: "default",
			Index: r, Order: r, Records: rel, Status: StatusOK, Steps: steps})
	}
	if err := pw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := WriteManifest(dir, m); err != nil {
		tb.Fatal(err)
	}
}

// measure runs a command and returns its wall time and peak RSS.
func measure(tb testing.TB, name string, args ...string) (time.Duration, float64) {
	tb.Helper()
	wall, peak, _ := measureCPU(tb, name, args...)
	return wall, peak
}

// measureCPU is measure, with the CPU time (user and system) the command
// used: what a neighbour's load does not change.
func measureCPU(tb testing.TB, name string, args ...string) (time.Duration, float64, time.Duration) {
	tb.Helper()
	cmd := exec.Command(name, args...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	el := time.Since(start)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
		tb.Fatalf("%s: %v\n%s", name, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return el, float64(ru.Maxrss) / 1024, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() // KiB -> MiB
}

// BenchmarkCompareMillionSteps compares two results directories of
// 20 runs x 50,000 steps each (1,000,000 steps per side) with the gcjitter
// binary, and runs benchstat on the same steps given one line per step.
// gcjitter runs cold (no run summaries: every stream read, hashed and
// summarised, the summaries written) and warm (the summaries read, no
// stream opened). Each is timed five times, interleaved with benchstat
// so that a neighbour's load falls on both, and the best of the five (the
// least disturbed) is reported: wall seconds, peak RSS (MiB), and cold over benchstat; and
// the CPU seconds of cold and of benchstat, which a neighbour's load does
// not change (under load the wall ratio tends to theirs).
//
//	go test -run '^$' -bench CompareMillionSteps -benchtime 1x ./results
func BenchmarkCompareMillionSteps(b *testing.B) {
	dir := b.TempDir()
	old, new := filepath.Join(dir, "old"), filepath.Join(dir, "new")
	writeSyntheticDir(b, old, 20, 50_000, 1, 0.3)
	writeSyntheticDir(b, new, 20, 50_000, 2, 0.3)
	bin := filepath.Join(dir, "gcjitter")
	bs := filepath.Join(dir, "benchstat")
	for _, build := range [][]string{{"go", "build", "-o", bin, "../cmd/gcjitter"}, {"go", "build", "-o", bs, "golang.org/x/perf/cmd/benchstat"}} {
		if out, err := exec.Command(build[0], build[1:]...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", build, err, out)
		}
	}
	dropSummaries := func() {
		for _, side := range []string{old, new} {
			sums, _ := filepath.Glob(filepath.Join(side, "runs", "*", "*", "*"+SummaryExt))
			if len(sums) == 0 && side == old {
				continue // the first cold run
			}
			for _, s := range sums {
				if err := os.Remove(s); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	page := filepath.Join(dir, "report.html")
	for b.Loop() {
		type best struct{ sec, mib, cpu float64 }
		var cold, warm, bstat best
		keep := func(x *best, t time.Duration, m float64, cpu time.Duration) {
			if x.sec == 0 || t.Seconds() < x.sec {
				x.sec = t.Seconds()
			}
			if x.cpu == 0 || cpu.Seconds() < x.cpu {
				x.cpu = cpu.Seconds()
			}
			x.mib = max(x.mib, m)
		}
		for range 5 {
			dropSummaries()
			t, m, cpu := measureCPU(b, bin, "compare", old, new)
			keep(&cold, t, m, cpu)
			if sums, _ := filepath.Glob(filepath.Join(new, "runs", "*", "*", "*"+SummaryExt)); len(sums) != 20 {
				b.Fatalf("the cold compare wrote %d summaries on the new side, want 20", len(sums))
			}
			t, m, cpu = measureCPU(b, bin, "compare", old, new)
			keep(&warm, t, m, cpu)
			t, m, cpu = measureCPU(b, bs, filepath.Join(old, "steps.bench"), filepath.Join(new, "steps.bench"))
			keep(&bstat, t, m, cpu)
		}
		b.ReportMetric(cold.cpu, "cold-cpu-sec")
		b.ReportMetric(bstat.cpu, "benchstat-cpu-sec")
		b.ReportMetric(cold.sec, "cold-sec")
		b.ReportMetric(cold.mib, "cold-peak-MiB")
		b.ReportMetric(warm.sec, "warm-sec")
		b.ReportMetric(warm.mib, "warm-peak-MiB")
		b.ReportMetric(bstat.sec, "benchstat-sec")
		b.ReportMetric(bstat.mib, "benchstat-peak-MiB")
		b.ReportMetric(cold.sec/bstat.sec, "cold/benchstat")
		b.ReportMetric(warm.sec/bstat.sec, "warm/benchstat")
		// The HTML report of the same comparison: its size, and how long
		// headless Chromium takes to load and paint it.
		t3, m3 := measure(b, bin, "report", "-format", "html", "-o", page, old, new)
		st, err := os.Stat(page)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(t3.Seconds(), "html-write-sec")
		b.ReportMetric(m3, "html-write-peak-MiB")
		b.ReportMetric(float64(st.Size())/(1<<20), "html-MiB")
		if chrome, err := exec.LookPath("chromium"); err == nil {
			shot := filepath.Join(dir, "report.png")
			t4, _ := measure(b, chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
				"--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1300,3000", "--screenshot="+shot, "file://"+page)
			b.ReportMetric(t4.Seconds(), "chromium-render-sec")
		}
		b.ReportMetric(0, "ns/op")
	}
}
