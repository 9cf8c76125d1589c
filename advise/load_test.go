package advise

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// traceDir writes a results directory as gcjitter trace leaves it: case
// job, variant traced, here under policy; runs of 600 steps of about
// stepMS, a full collection every gen2Every steps (0: none), RSS growing
// by growthMiB per 1000 steps from 1 GiB, on a host whose limit is
// limitGiB.
func traceDir(t *testing.T, policy string, runs int, stepMS float64, gen2Every int, growthMiB float64, limitGiB int64, seed uint64) string {
	t.Helper()
	dir := t.TempDir()
	const steps = 600 // over stats.MinStepsGrowth: memory is classified
	rng := rand.New(rand.NewPCG(seed, 7))
	m := &results.Manifest{Schema: results.ManifestSchema, Tool: "test", Started: time.Now().UTC(),
		Host:  results.Host{MemLimit: limitGiB << 30, MemLimitFrom: "test host"},
		Cases: []results.Case{{Name: "job", Steps: steps, Runs: runs, Variants: []results.Variant{{Name: "traced", Policy: policy}}}}}
	for r := range runs {
		rel, _ := results.RunFiles("job", "traced", r)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		fmt.Fprintf(w, `{"type":"meta","schema":1,"python":{"version":"3.11.2"},"device":{"kind":"cpu"},"policy":%q,"model":"traced"}`+"\n", policy)
		for i := range steps {
			d := stepMS * 1e6 * (1 + 0.02*rng.NormFloat64())
			gc := ""
			if gen2Every > 0 && i%gen2Every == gen2Every-1 {
				d += 5 * stepMS * 1e6
				gc = fmt.Sprintf(`{"gen":2,"ns":%d,"collected":12,"uncollectable":0,"in_step":true,"manual":false}`, int64(5*stepMS*1e6))
			}
			rss := int64(1<<30 + growthMiB*(1<<20)*float64(i)/1000)
			fmt.Fprintf(w, `{"type":"step","i":%d,"warmup":false,"ns":%d,"gc":[%s],"lost":0,"sched":false,"count":[1,0,0],"rss":%d,"dev_mem":null}`+"\n", i, int64(d), gc, rss)
		}
		fmt.Fprintf(w, `{"type":"end","steps":%d,"wall_ns":1,"gc_stats":[],"recorded":null,"freeze_count":0}`+"\n", steps)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		m.Runs = append(m.Runs, &results.Run{ID: fmt.Sprintf("job/traced/run-%02d", r+1), Case: "job", Variant: "traced", Policy: policy,
			Index: r, Order: r, Records: rel, Status: results.StatusOK, Steps: steps})
	}
	if err := results.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestFromResultsTraceRuns: several trace runs of one job, one policy each,
// all named "traced": each becomes its policy, the job's own settings the
// reference; runs of one policy in two directories pool; the smallest
// host limit applies; the mean step is the planted one.
func TestFromResultsTraceRuns(t *testing.T) {
	own := traceDir(t, "traced", 2, 10, 40, 0, 16, 1)
	own2 := traceDir(t, "traced", 2, 10, 40, 0, 16, 2)
	dis := traceDir(t, "disabled", 3, 10.1, 0, 100, 8, 3)
	man := traceDir(t, "manual:50", 3, 10, 50, 0, 16, 4)
	a, err := FromResults([]string{own, dis, man, own2}, Options{Constraints: Constraints{Duration: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Reference != "traced" || a.Case != "job" {
		t.Errorf("reference %q, case %q: want traced, job", a.Reference, a.Case)
	}
	if a.Limit != 8<<30 || a.LimitFrom != "test host" {
		t.Errorf("limit %v from %q, want the smallest host's, 8 GiB", a.Limit, a.LimitFrom)
	}
	got := map[string]*Judged{}
	for _, j := range a.Candidates {
		got[j.Variant] = j
	}
	if names := slices.Sorted(func(yield func(string) bool) {
		for n := range got {
			if !yield(n) {
				return
			}
		}
	}); !slices.Equal(names, []string{"disabled", "manual:50", "traced"}) {
		t.Fatalf("variants %v, want each run named by its policy", names)
	}
	if r := got["traced"].Runs; r != 4 {
		t.Errorf("the job's own settings have %d runs, want 2+2 pooled", r)
	}
	if m := got["disabled"].MeanStep; math.Abs(m/10.1e6-1) > 0.005 {
		t.Errorf("disabled's mean step %v ns, want 10.1 ms", m)
	}
	// 100 MiB per 1000 steps from 1 GiB against 8 GiB: 71.7 ksteps, 12 min
	// at 10.1 ms: out long before the 1 h job. (An 8 h job would leave the
	// others undecided: 600 steps bound a flat RSS to within 6.7 MiB per
	// 1000 steps, 19 GiB over 2.9 million steps.)
	d := got["disabled"]
	if !slices.Equal(d.Excluded, []string{Memory}) || d.Mem.Class != stats.MemGrows || math.Abs(d.Mem.Growth/(100<<20)-1) > 0.01 {
		t.Errorf("disabled excluded by %v at growth %v (%s), want memory at 100 MiB/kstep, grows", d.Excluded, stats.Bytes(d.Mem.Growth), d.Mem.Class)
	}
	if m := got["manual:50"].Mem; m.Class != stats.MemBounded {
		t.Errorf("manual:50's flat RSS is %s, want bounded", m.Class)
	}
	if a.Pick == nil || a.Pick.Variant == "disabled" {
		t.Errorf("pick %v: want one whose memory lasts", a.Pick)
	}
	if a.Binding != Memory || a.Blocked != d {
		t.Errorf("binding %q blocked %v, want memory, disabled (its p99 is the smallest: no collections)", a.Binding, a.Blocked)
	}
}

func TestFromResultsBadInput(t *testing.T) {
	one := traceDir(t, "traced", 1, 10, 40, 0, 16, 1)
	nolimit := traceDir(t, "disabled", 1, 10, 0, 0, 0, 2)
	tests := []struct {
		name string
		dirs []string
		want string
	}{
		{"one policy", []string{one}, "case job has one policy (traced)"},
		{"not a results directory", []string{t.TempDir()}, "advise reads results directories"},
		{"no limit recorded", []string{one, nolimit}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromResults(tt.dirs, Options{})
			var ie *results.InputError
			if tt.want == "" {
				// one has a 16 GiB limit: the smallest known applies.
				if err != nil {
					t.Errorf("%v", err)
				}
				return
			}
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an input error (exit 2) saying %q", err, tt.want)
			}
		})
	}
	nolimit2 := traceDir(t, "traced", 1, 10, 40, 0, 0, 3)
	_, err := FromResults([]string{nolimit, nolimit2}, Options{})
	if err == nil || !strings.Contains(err.Error(), "-mem-limit") {
		t.Errorf("no limit anywhere: %v, want an error naming -mem-limit", err)
	}
}

// TestPending: what advise -run's rounds wait on is the open candidate's
// tail rows, and nothing once the advice is settled or only its memory is
// undecided.
func TestPending(t *testing.T) {
	row := func(variant, metric string, v stats.Verdict) *stats.Row {
		r := &stats.Row{Verdict: v}
		r.Bench, r.Metric = results.BenchName("c", variant), metric
		return r
	}
	cmp := &results.Comparison{Rows: []*stats.Row{
		row("freeze", "p99", stats.Unknown), row("freeze", "p50", stats.Unknown), row("freeze", "gen2-pause", stats.Improved),
		row("manual:50", "p99", stats.Unknown),
	}}
	open := &Judged{Candidate: Candidate{Variant: "freeze"}, Tail: stats.Unknown}
	a := &Advice{cmp: cmp, Undecided: true, Open: open}
	var got []string
	for _, r := range a.Pending().Rows {
		got = append(got, results.VariantOf(r.Bench)+" "+r.Metric)
	}
	if want := []string{"freeze p99", "freeze gen2-pause"}; !slices.Equal(got, want) {
		t.Errorf("pending rows %v, want %v", got, want)
	}
	// Improved in its pauses, its p99 reading larger (unknown): the
	// answer waits on p99 alone, and the rounds with it. (Once no row:
	// make run's gc-policy-matrix read "0 runs added ... every tested
	// metric decided" beside "about 3 runs a policy decide".)
	held := &Advice{cmp: cmp, Undecided: true, Open: &Judged{Candidate: Candidate{Variant: "freeze"}, Tail: stats.Improved, P99Larger: true, Fate: Lasts}}
	got = nil
	for _, r := range held.Pending().Rows {
		got = append(got, results.VariantOf(r.Bench)+" "+r.Metric)
	}
	if want := []string{"freeze p99"}; !slices.Equal(got, want) {
		t.Errorf("p99 held: pending rows %v, want %v", got, want)
	}
	// Its median in doubt: the rounds wait on its p50, unknown until twice
	// the runs decide it.
	p50 := row("freeze", "p50", stats.Regressed)
	p50.FamilySize, p50.Old, p50.New = 1, []float64{20, 21}, []float64{27, 26}
	doubt := &Advice{cmp: &results.Comparison{Rows: []*stats.Row{p50, row("freeze", "p99", stats.Improved)}}, Undecided: true,
		Open: &Judged{Candidate: Candidate{Variant: "freeze", MedianInDoubt: "p50 +30%"}, Tail: stats.Improved, Fate: Lasts}}
	if rows := doubt.Pending().Rows; len(rows) != 1 || rows[0].Metric != "p50" || rows[0].Verdict != stats.Unknown || rows[0].RunsNeeded != 4 || p50.Verdict != stats.Regressed {
		t.Errorf("median in doubt: pending %v; want its p50 alone, unknown, 4 runs needed (the comparison's row left as it was)", rows)
	}
	for name, a := range map[string]*Advice{
		"settled":          {cmp: cmp, Open: open},
		"memory undecided": {cmp: cmp, Undecided: true, Open: &Judged{Candidate: Candidate{Variant: "freeze"}, Tail: stats.Improved, Fate: MemUnsure}},
	} {
		if rows := a.Pending().Rows; len(rows) != 0 {
			t.Errorf("%s: %d pending rows, want none", name, len(rows))
		}
	}
}

// TestMedianFromSteps: a median regression that the policy's collections
// do not explain is undecided when the policy only changes collections
// and its memory stays bounded (freeze, 27 ms against 20: the host's speed
// between runs, as make run read on a shared VM); it stands where the
// collections explain it (a full collection every step), where the heap
// grows, and for a policy that is more than collections.
func TestMedianFromSteps(t *testing.T) {
	d := results.NewData("dir")
	run := func(variant string, p50 float64, young, full float64, fulls int) {
		r := stats.RunSummary{Steps: 200, P50: p50, Collections: [3]int{1000, 100, fulls}, PauseNS: [3]float64{young * 200 * 0.6, young * 200 * 0.4, full * float64(fulls)}}
		d.AddRun(results.BenchName("c", variant), r)
		d.AddRun(results.BenchName("c", variant), r)
	}
	run("default", 20e6, 0.4e6, 80e6, 9)
	run("freeze", 27e6, 0.45e6, 20e6, 9)
	run("collect-every-step", 27e6, 0, 7e6, 200)
	run("threshold:700,10,1000", 27e6, 0.4e6, 0, 0)
	run("empty-cache-every-step", 27e6, 0.4e6, 80e6, 9)
	cand := func(variant string, p50 float64, median stats.Verdict, mem stats.MemClass) Candidate {
		return Candidate{Variant: variant, Policy: variant, P50: p50, Verdicts: map[string]stats.Verdict{"p50": median}, Mem: stats.MemPool{Class: mem}}
	}
	cands := []Candidate{cand("default", 20e6, "", stats.MemBounded), cand("freeze", 27e6, stats.Regressed, stats.MemBounded),
		cand("collect-every-step", 27e6, stats.Regressed, stats.MemBounded), cand("threshold:700,10,1000", 27e6, stats.Regressed, stats.MemGrows),
		cand("empty-cache-every-step", 27e6, stats.Regressed, stats.MemBounded)}
	notes := medianFromSteps(cands, "default", d, "c")
	want := map[string]stats.Verdict{"freeze": stats.Unknown, "collect-every-step": stats.Regressed, "threshold:700,10,1000": stats.Regressed, "empty-cache-every-step": stats.Regressed}
	for _, c := range cands[1:] {
		if got := c.Verdicts["p50"]; got != want[c.Variant] {
			t.Errorf("%s: p50 %s, want %s", c.Variant, got, want[c.Variant])
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "freeze: median in doubt, not regressed") {
		t.Errorf("notes %q; want one for freeze", notes)
	}
}
