package advise

import (
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/stats"
)

const (
	mib = 1 << 20
	gib = 1 << 30
)

// job is the issue's: 8 hours within 16 GiB. At a 10 ms step that is 2.88
// million steps, so growth above (16 - 1) GiB / 2880 = 5.3 MiB per 1000
// steps from a 1 GiB peak runs out within the job.
var job = Constraints{Duration: 8 * time.Hour, Limit: 16 * gib}

// pol is a synthetic candidate of known truth: p99 and p50 in ms, growth
// in MiB per 1000 steps from a 1 GiB peak, at a 10 ms mean step; tail and
// median are its verdicts against default.
func pol(variant string, p99 float64, tail, median stats.Verdict, growthMiB float64) Candidate {
	v := map[string]stats.Verdict{"p99": tail, "spike-rate": stats.Same, "gen2-pause": stats.Same, "p50": median}
	policy := variant
	return Candidate{Variant: variant, Policy: policy, Runs: 4, Steps: 2000, P99: p99 * 1e6, P50: 10e6, MeanStep: 10e6,
		Mem: grows(growthMiB), WorstPeak: 1 * gib, HasMemory: true, Verdicts: v}
}

// grows is four runs' memory growing by growthMiB per 1000 steps within
// ±20%, or bounded (to within 1 MiB per 1000 steps) at 0.
func grows(growthMiB float64) stats.MemPool {
	if growthMiB == 0 {
		return stats.MemPool{Class: stats.MemBounded, Lo: -5 * mib, Hi: 5 * mib, Resolution: 1 * mib, Runs: 4, Bounded: 4}
	}
	g := growthMiB * mib
	return stats.MemPool{Class: stats.MemGrows, Growth: g, Lo: 0.8 * g, Hi: 1.2 * g, Runs: 4, Grows: 4}
}

// unsure is c with its memory undecided over its steps.
func unsure(c Candidate) Candidate {
	c.Mem = stats.MemPool{Class: stats.MemUndecided, Lo: -20 * mib, Hi: 30 * mib, StepsNeeded: 3000, Runs: 4, Grows: 1, Bounded: 1}
	return c
}

func over(c Candidate, peak float64) Candidate { c.WorstPeak = peak; return c }

func def() Candidate { return pol("default", 20, "", "", 2) }

// TestDecideSaysWhichTailMetricImproved: a policy whose tail is calmer
// in its spikes while its p99 reads larger than default's, unknown
// (straggler-gc's manual:40 at make run's size: global spikes only on
// the scheduled steps, p99 135 ms against 78 ms at 2 runs) is not picked
// as the calmer tail: the answer is undecided, waiting on the tail alone
// (advise rounds add its runs), until p99 is decided. With p99 decided
// the same, it is picked on its spikes, and the reason names them and
// says its p99 reads larger. (Planted: P99Larger never set -> manual:40
// picked with p99 unknown, FAIL.)
func TestDecideSaysWhichTailMetricImproved(t *testing.T) {
	manual := func(p99 stats.Verdict) Candidate {
		c := pol("manual:40", 135, p99, stats.Unknown, 0)
		c.Verdicts["spike-rate"] = stats.Improved
		c.FullShare = 0.1 // a full collection every 10 global steps
		return c
	}
	a, err := Decide("straggler-gc", "default", []Candidate{pol("default", 78, "", "", 0), manual(stats.Unknown)}, job)
	if err != nil {
		t.Fatal(err)
	}
	if a.Pick != nil || !a.Undecided || !a.TailOnly() || a.Open.Variant != "manual:40" || len(a.Settle) == 0 {
		t.Fatalf("pick %v, undecided %v, tail only %v: %s; want undecided on manual:40's tail", a.Pick, a.Undecided, a.TailOnly(), a.Reason)
	}
	if want := "its tail improved in spike-rate while its p99 reads larger than default's (135.000 ms against 78.000 ms, unknown)"; !strings.Contains(a.Reason, want) {
		t.Errorf("reason %q lacks %q", a.Reason, want)
	}
	a, err = Decide("straggler-gc", "default", []Candidate{pol("default", 78, "", "", 0), manual(stats.Same)}, job)
	if err != nil {
		t.Fatal(err)
	}
	if a.Pick == nil || a.Pick.Variant != "manual:40" {
		t.Fatalf("pick %v, want manual:40 (p99 the same, spikes improved): %s", a.Pick, a.Reason)
	}
	for _, want := range []string{"(tail improved in spike-rate)", "its p99 reads larger than default's (p99 same): calmer in spike-rate, not in p99"} {
		if !strings.Contains(a.Reason, want) {
			t.Errorf("reason %q lacks %q", a.Reason, want)
		}
	}
	// Full collections rarer than 1 step in 100 (gc-policy-matrix: one in
	// 150 steps): p99 is the other steps' noise, and freeze's tail improved
	// in its pauses is the pick, saying so.
	freeze := pol("freeze", 3.2, stats.Unknown, stats.Unknown, 0)
	freeze.Verdicts["gen2-pause"], freeze.FullShare = stats.Improved, 1.0/150
	matrixDefault := pol("default", 2.0, "", "", 0)
	matrixDefault.FullShare = 1.0 / 150
	a, err = Decide("gc-policy-matrix", "default", []Candidate{matrixDefault, freeze}, job)
	if err != nil {
		t.Fatal(err)
	}
	if a.Pick == nil || a.Pick.Variant != "freeze" || !strings.Contains(a.Reason, "calmer in gen2-pause, not in p99 (full collections in under 1 step in 100: p99 is the other steps')") {
		t.Errorf("pick %v: %s; want freeze on its pauses, p99 being the other steps'", a.Pick, a.Reason)
	}
	// A pick with the smaller p99 says nothing of the kind.
	a, err = Decide("c", "default", []Candidate{def(), pol("freeze", 12, stats.Improved, stats.Same, 0)}, job)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Reason, "(tail improved in p99)") || strings.Contains(a.Reason, "reads larger") {
		t.Errorf("reason %q, want the tail improved in p99 and nothing about a larger one", a.Reason)
	}
}

// TestDecideKnownTruth: synthetic policies whose right answer is known,
// every constraint binding in turn.
func TestDecideKnownTruth(t *testing.T) {
	same, imp, reg, unk := stats.Same, stats.Improved, stats.Regressed, stats.Unknown
	// disabled grows 2.9 GiB per 1000 steps, as measured on
	// ascend-gpt-periodic-gc (issue 24): out of 16 GiB in about 50 s.
	const leak = 2.9 * 1024
	tests := []struct {
		name    string
		c       Constraints
		cands   []Candidate
		pick    string // "" none
		binding string
		blocked string
	}{
		{"nothing binds: the calmest tail", job,
			[]Candidate{def(), pol("freeze", 12, imp, same, 0), pol("disabled", 10, imp, same, 1)},
			"disabled", "", ""},
		{"memory binds: disabled never frees", job,
			[]Candidate{def(), pol("freeze", 12, imp, same, 0), pol("disabled", 10, imp, same, leak)},
			"freeze", Memory, "disabled"},
		{"median binds", job,
			[]Candidate{def(), pol("freeze", 12, imp, same, 0), pol("disabled", 10, imp, reg, 1)},
			"freeze", Median, "disabled"},
		{"both bind", job,
			[]Candidate{def(), pol("freeze", 12, imp, same, 0), pol("disabled", 10, imp, reg, leak)},
			"freeze", Both, "disabled"},
		{"the median binds the calmest, memory the next: the first one binds", job,
			[]Candidate{def(), pol("manual:50", 14, imp, same, 0), pol("threshold:700,10,1000", 12, imp, same, leak), pol("disabled", 10, imp, reg, 1)},
			"manual:50", Median, "disabled"},
		{"a tail the same as default's does not replace it", job,
			[]Candidate{def(), pol("manual:50", 18, same, same, 0)},
			"default", "", ""},
		{"a calmer tail the comparison cannot decide: undecided, not default", job,
			[]Candidate{def(), pol("freeze", 19, unk, same, 0), pol("manual:50", 18, same, same, 0)},
			"", "", ""},
		{"the calmest improved tail with undecided memory: undecided", job,
			[]Candidate{def(), unsure(pol("freeze", 12, imp, same, 0)), pol("manual:50", 14, imp, same, 0)},
			"", "", ""},
		{"an undecided memory excludes no one, default least of all", job,
			[]Candidate{unsure(def()), pol("manual:50", 22, same, same, 0)},
			"default", "", ""},
		{"default runs out, the only lasting tail is worse: picked with a warning", job,
			[]Candidate{pol("default", 20, "", "", 600), pol("manual:50", 52, reg, same, 0)},
			"manual:50", Memory, "default"},
		{"bounded too coarsely for the job: undecided", Constraints{Duration: 8 * time.Hour, Limit: 2 * gib},
			[]Candidate{def(), pol("freeze", 12, imp, same, 0)},
			"", "", ""},
		{"a smaller p99 by noise is not picked, but what rules it out is named", job,
			[]Candidate{def(), pol("disabled", 10, unk, same, leak)},
			"default", Memory, "disabled"},
		{"default's own memory runs out: the calmest that lasts", job,
			[]Candidate{pol("default", 20, "", "", 600), pol("manual:50", 22, unk, same, 0), pol("disabled", 10, imp, same, leak)},
			"manual:50", Memory, "disabled"},
		{"none qualifies: memory binds, even default's", job,
			[]Candidate{pol("default", 20, "", "", 600), pol("disabled", 10, imp, same, leak)},
			"", Memory, "default"},
		{"a peak over the limit runs out at once, growing or not", job,
			[]Candidate{def(), pol("freeze", 12, imp, same, 0), over(pol("manual:500", 10, imp, same, 0), 17*gib)},
			"freeze", Memory, "manual:500"},
		{"a shorter job lets the leak in", Constraints{Duration: 30 * time.Second, Limit: 16 * gib},
			[]Candidate{def(), pol("freeze", 12, imp, same, 0), pol("disabled", 10, imp, same, leak)},
			"disabled", "", ""},
		{"a larger limit lets the leak in", Constraints{Duration: time.Minute, Limit: 64 * gib},
			[]Candidate{def(), pol("freeze", 12, imp, same, 0), pol("disabled", 10, imp, same, leak)},
			"disabled", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Decide("c", "default", tt.cands, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if a.Pick != nil {
				got = a.Pick.Variant
			}
			blocked := ""
			if a.Blocked != nil {
				blocked = a.Blocked.Variant
			}
			if got != tt.pick || a.Binding != tt.binding || blocked != tt.blocked {
				t.Errorf("pick %q binding %q blocked %q, want %q %q %q\nreason: %s", got, a.Binding, blocked, tt.pick, tt.binding, tt.blocked, a.Reason)
			}
			if tt.pick == "" && tt.binding == "" && (!a.Undecided || len(a.Settle) == 0) {
				t.Errorf("no pick and nothing binds, want undecided with what settles it: %+v", a)
			}
			if w := tt.name[:min(len(tt.name), 12)]; w == "default runs" && !strings.Contains(a.Warning, "tail is worse") {
				t.Errorf("warning %q, want it to say the tail is worse", a.Warning)
			}
			if tt.binding != "" && len(a.Relax) == 0 {
				t.Errorf("binding %s but nothing says what would relax it", tt.binding)
			}
		})
	}
}

// TestDecideRelaxFigures: what relaxes a memory constraint is the limit the
// job needs and the duration the limit allows, both of known size.
// TestDecideNoneQualifies: with no pick, the reason names the policy that
// needs the least memory and the one that lasts longest.
func TestDecideNoneQualifies(t *testing.T) {
	a, err := Decide("c", "default", []Candidate{
		pol("default", 20, "", "", 600), pol("freeze", 12, stats.Improved, stats.Same, 100),
		pol("manual:50", 14, stats.Improved, stats.Same, 200), pol("disabled", 10, stats.Improved, stats.Regressed, 1),
	}, job)
	if err != nil {
		t.Fatal(err)
	}
	if a.Pick != nil {
		t.Fatalf("picked %s, want none", a.Pick.Variant)
	}
	if !strings.Contains(a.Reason, "freeze needs the least memory") || !strings.Contains(a.Reason, "freeze lasts longest") {
		t.Errorf("reason %q does not name freeze (disabled lasts longer but its median regressed)", a.Reason)
	}
}

func TestDecideRelaxFigures(t *testing.T) {
	// 100 MiB per 1000 steps (80-120) from 1 GiB at 10 ms: 8 h = 2880
	// ksteps needs 1 GiB + 2880 * 120 MiB at the upper end; 16 GiB lasts
	// 15360/120 ksteps = 128000 steps = 21.3 min at the upper end, 32 min
	// at the lower.
	a, err := Decide("c", "default", []Candidate{def(), pol("disabled", 10, stats.Improved, stats.Same, 100)}, job)
	if err != nil {
		t.Fatal(err)
	}
	d := a.Blocked
	if d == nil || d.Variant != "disabled" {
		t.Fatalf("blocked %v, want disabled", d)
	}
	if want := 1*gib + 2880.0*120*mib; math.Abs(d.NeedBytes-want) > 1 {
		t.Errorf("needs %v bytes, want %v", d.NeedBytes, want)
	}
	if want := 15360.0 / 80 * 1000 * 10e6 / 3.6e12; math.Abs(d.LimitHours-want) > 1e-9 {
		t.Errorf("lasts %v h at the lower end, want %v", d.LimitHours, want)
	}
	if want := 15360.0 / 120 * 1000 * 10e6 / 3.6e12; math.Abs(d.SoonestHours-want) > 1e-9 {
		t.Errorf("lasts %v h at the upper end, want %v", d.SoonestHours, want)
	}
	relax := strings.Join(a.Relax, "\n")
	for _, want := range []string{stats.Bytes(d.NeedBytes), stats.Hours(d.SoonestHours)} {
		if !strings.Contains(relax, want) {
			t.Errorf("relax %q does not name %s", relax, want)
		}
	}
}

// TestDecideNeverRunsOut: over random policy sets, the pick's memory lasts
// the job, its median did not regress, and it replaces default only with a
// tail called improved or when default's own memory runs out.
func TestDecideNeverRunsOut(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	verdicts := []stats.Verdict{stats.Same, stats.Improved, stats.Regressed, stats.Unknown}
	for trial := range 2000 {
		c := Constraints{Duration: time.Duration(1+r.IntN(48)) * time.Hour, Limit: float64(1+r.IntN(64)) * gib}
		n := 1 + r.IntN(6)
		cands := []Candidate{pol("default", 20, "", "", r.Float64()*20)}
		for i := range n {
			p := pol("p"+string(rune('a'+i)), 5+r.Float64()*20, verdicts[r.IntN(4)], verdicts[r.IntN(4)], r.ExpFloat64()*50)
			p.WorstPeak = r.Float64() * 8 * gib
			p.MeanStep = (1 + r.Float64()*100) * 1e6
			p.HasMemory = r.IntN(10) > 0
			cands = append(cands, p)
		}
		a, err := Decide("c", "default", cands, c)
		if err != nil {
			t.Fatal(err)
		}
		if a.Pick == nil {
			if a.Binding == "" && !a.Undecided {
				t.Fatalf("trial %d: no pick, not undecided and no binding constraint", trial)
			}
			continue
		}
		p := a.Pick
		if p.Fate != Lasts && p.Variant != "default" || p.Fate == RunsOut || !(p.SoonestHours >= c.Duration.Hours()) && p.Fate == Lasts {
			t.Fatalf("trial %d: picked %s whose memory %s: lasts %v h of a %v job", trial, p.Variant, p.Fate, p.SoonestHours, c.Duration)
		}
		if p.Variant != "default" && p.Verdicts["p50"] == stats.Regressed {
			t.Fatalf("trial %d: picked %s whose median regressed", trial, p.Variant)
		}
		var ref *Judged
		for _, j := range a.Candidates {
			if j.Variant == "default" {
				ref = j
			}
		}
		if p != ref && p.Tail != stats.Improved && ref.Qualifies() {
			t.Fatalf("trial %d: picked %s (tail %s) over a qualifying default", trial, p.Variant, p.Tail)
		}
		if p != ref && (p.Tail == stats.Regressed || !ref.Qualifies() && p.P99 > ref.P99) && a.Warning == "" {
			t.Fatalf("trial %d: picked %s with a tail worse than default's and no warning", trial, p.Variant)
		}
		if b := a.Blocked; b != nil && (b.Qualifies() || !(b.P99 < p.P99) || a.Binding == "") {
			t.Fatalf("trial %d: blocked %s (excluded %v, p99 %v) against the pick's p99 %v, binding %q", trial, b.Variant, b.Excluded, b.P99, p.P99, a.Binding)
		}
		for _, j := range a.Candidates {
			if j.Qualifies() && j.Tail == stats.Improved && j.P99 < p.P99 {
				t.Fatalf("trial %d: %s qualifies with a calmer tail than the pick %s", trial, j.Variant, p.Variant)
			}
		}
	}
}

// TestIntervals: over manual:N variants, the largest N whose memory lasts
// the job and the N of the smallest mean step, per family.
func TestIntervals(t *testing.T) {
	m := func(policy string, growthMiB, meanMS float64) Candidate {
		c := pol(policy, 15, stats.Improved, stats.Same, growthMiB)
		c.MeanStep = meanMS * 1e6
		return c
	}
	a, err := Decide("c", "default", []Candidate{
		def(),
		m("manual:10", 0, 12), m("manual:50", 1, 10.5), m("manual:200", 100, 11), m("manual:400", 300, 13),
		m("manual:100:1", 0, 11), m("manual:20:1", 0, 10.2),
		m("freeze+manual:100", 0, 10),
	}, job)
	if err != nil {
		t.Fatal(err)
	}
	want := []Interval{
		{Family: "manual:N", Ns: []int{10, 50, 200, 400}, Largest: 50, Fastest: 50},
		{Family: "manual:N:1", Ns: []int{20, 100}, Largest: 100, Fastest: 20},
	}
	if !slices.EqualFunc(a.Intervals, want, func(x, y Interval) bool {
		return x.Family == y.Family && slices.Equal(x.Ns, y.Ns) && x.Largest == y.Largest && x.Fastest == y.Fastest
	}) {
		t.Errorf("intervals %+v, want %+v", a.Intervals, want)
	}
}

func TestDecideBadInput(t *testing.T) {
	if _, err := Decide("c", "default", []Candidate{def()}, Constraints{Duration: time.Hour}); err == nil || !strings.Contains(err.Error(), "-mem-limit") {
		t.Errorf("no limit: %v, want an error naming -mem-limit", err)
	}
	if _, err := Decide("c", "default", []Candidate{pol("freeze", 1, stats.Same, stats.Same, 0)}, job); err == nil || !strings.Contains(err.Error(), "no variant default") {
		t.Errorf("no reference: %v", err)
	}
}

// TestSettings: each policy in the words of the user's stack.
func TestSettings(t *testing.T) {
	tests := []struct{ policy, stack, want string }{
		{"manual:50", "megatron-lm", "--manual-gc --manual-gc-interval 50"},
		{"manual:50", "nemo", "GarbageCollectionCallback(gc_interval_train=50, gc_interval_val=50)"},
		{"manual:100:1", "torchtitan", "--training.gc_freq 100"},
		{"threshold:700,10,1000", "python", "gc.set_threshold(700, 10, 1000)"},
		{"freeze", "python", "gc.freeze() after the model is loaded"},
		{"disabled", "python", "gc.disable()"},
		{"freeze+manual:100", "megatron-lm", "--manual-gc-interval 100, plus the gc.freeze()"},
		{"manual:50", "lightning", "def on_train_start(self, trainer, pl_module):\n        gc.disable()"},
		{"manual:50", "lightning", "if trainer.global_step % 50 == 0:\n            gc.collect(2)"},
		{"manual:100:1", "hf-trainer", "def on_step_end(self, args, state, control, **kwargs):\n        if state.global_step % 100 == 0:\n            gc.collect(1)"},
		{"freeze", "hf-trainer", "gc.freeze()"},
	}
	for _, tt := range tests {
		got := ""
		for _, s := range Settings(tt.policy) {
			if s.Stack == tt.stack {
				got = s.How
			}
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("Settings(%s)[%s] = %q, want it to contain %q", tt.policy, tt.stack, got, tt.want)
		}
	}
}

// TestSettingsCodeIsPython: every callback advise prints compiles, with
// the frameworks' base classes and the trainer's "..." stubbed (neither
// framework is installed here: the hook names are checked in TestSettings
// against their sources' spelling).
func TestSettingsCodeIsPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	for _, policy := range []string{"freeze", "manual:50", "manual:100:1", "freeze+manual:100", "collect-every-step"} {
		for _, s := range Settings(policy) {
			if !strings.Contains(s.How, "\n") {
				continue
			}
			src := "import types\nlightning = types.SimpleNamespace(pytorch=types.SimpleNamespace(Callback=object), Trainer=lambda *a, **k: None)\n" +
				"transformers = types.SimpleNamespace(TrainerCallback=object, Trainer=lambda *a, **k: None)\n" + strings.ReplaceAll(s.How, "(...,", "(")
			out, err := exec.Command(py, "-c", src).CombinedOutput()
			if err != nil {
				t.Errorf("%s, %s: the code does not run: %v\n%s\n%s", policy, s.Stack, err, out, s.How)
			}
		}
	}
}

// mech is c with its memory decided by the collector's accounting: bounded
// (its full collections free the garbage), or growing until a first full
// collection predicted at step next with RSS peaking at peak.
func mech(c Candidate, class stats.MemClass, next int, peak float64) Candidate {
	c.Mem.Class, c.Mem.Collector, c.Mem.Why, c.Mem.NextFull, c.Mem.PeakAtNext = class, true, "the collector's reason", next, peak
	if class == stats.MemBounded {
		// RSS's own slope is as noisy as a short run leaves it: over 8 h
		// at this resolution it "could reach" far past the limit.
		c.Mem.Lo, c.Mem.Hi, c.Mem.Resolution = -200*mib, 300*mib, 20*mib
	}
	return c
}

// TestDecideFromCollector: the seed case at 4 runs x 800 steps: an
// RSS slope alone leaves freeze's memory undecided for 8 h (its noise
// over 2.9 million steps), where the collector's accounting bounds it;
// the gen-2 threshold whose first full collection is predicted past the
// runs is not picked for a tail its runs never measured, and its memory
// comes from the predicted peak, not a straight line.
func TestDecideFromCollector(t *testing.T) {
	same, imp := stats.Same, stats.Improved
	const leak = 2.9 * 1024
	base := func() []Candidate {
		d := mech(def(), stats.MemBounded, 0, 0)
		d.P99 = 101.4e6 // the figures at 4 x 800 steps
		fr := mech(pol("freeze", 36.7, imp, same, 0), stats.MemBounded, 0, 0)
		fr.Steps, d.Steps = 800, 800
		dis := pol("disabled", 25, imp, same, leak)
		dis.Mem.Collector = true
		th := mech(pol("threshold:700,10,1000", 24, imp, same, leak), stats.MemGrows, 3498, 10.2*gib)
		th.Steps = 800
		return []Candidate{d, fr, dis, th}
	}
	a, err := Decide("ascend-gpt-periodic-gc", "default", base(), job)
	if err != nil {
		t.Fatal(err)
	}
	if a.Pick == nil || a.Pick.Variant != "freeze" || a.Undecided {
		t.Fatalf("pick %v, undecided %v: %s", a.Pick, a.Undecided, a.Reason)
	}
	th := a.Candidates[slices.IndexFunc(a.Candidates, func(j *Judged) bool { return j.Variant == "threshold:700,10,1000" })]
	if th.Fate != Lasts || th.NeedBytes != 10.2*gib || !slices.Contains(th.Excluded, Unseen) {
		t.Errorf("threshold: fate %s, needs %s, excluded %v; want lasts (peak 10.2 GiB), excluded for its unseen full collection", th.Fate, stats.Bytes(th.NeedBytes), th.Excluded)
	}
	// Under 8 GiB the predicted peak is past the limit: it runs out.
	small := Constraints{Duration: 8 * time.Hour, Limit: 8 * gib}
	a, err = Decide("ascend-gpt-periodic-gc", "default", base(), small)
	if err != nil {
		t.Fatal(err)
	}
	th = a.Candidates[slices.IndexFunc(a.Candidates, func(j *Judged) bool { return j.Variant == "threshold:700,10,1000" })]
	if th.Fate != RunsOut || a.Pick == nil || a.Pick.Variant != "freeze" {
		t.Errorf("under 8 GiB: threshold %s, pick %v", th.Fate, a.Pick)
	}
	// A full collection the 25% rule holds back comes at a step the
	// counts do not show: its memory is undecided, not a straight line
	// that runs out.
	cs := base()
	cs[3].Mem.NextFull, cs[3].Mem.PeakAtNext, cs[3].Mem.Deferred = 0, 0, true
	a, _ = Decide("ascend-gpt-periodic-gc", "default", cs, job)
	th = a.Candidates[slices.IndexFunc(a.Candidates, func(j *Judged) bool { return j.Variant == "threshold:700,10,1000" })]
	if th.Fate != MemUnsure || !strings.Contains(lasts(th, job), "25% rule") {
		t.Errorf("deferred: fate %s (%s)", th.Fate, lasts(th, job))
	}
	// Without the collector's accounting, RSS's noise leaves freeze
	// undecided (what the issue saw).
	cs = base()
	cs[1].Mem.Collector = false
	a, _ = Decide("ascend-gpt-periodic-gc", "default", cs, job)
	if !a.Undecided {
		t.Errorf("RSS alone decided: %s", a.Reason)
	}
}

// TestMedianInDoubtIsNotPicked: a calmer tail whose median is in doubt
// (its p50 moved with the steps themselves, not its collections) is not
// picked: the answer is undecided on it, and advise's rounds (TailOnly)
// add runs to settle its median. (Planted: the pick ignoring
// MedianInDoubt -> freeze picked, FAIL.)
func TestMedianInDoubtIsNotPicked(t *testing.T) {
	freeze := pol("freeze", 10, stats.Improved, stats.Unknown, 0)
	freeze.MedianInDoubt = "p50 27.000 ms against default's 20.000 ms, +35.0%, while its collections add 0.450 ms to the median step against default's 0.400 ms"
	a, err := Decide("c", "default", []Candidate{def(), freeze}, job)
	if err != nil {
		t.Fatal(err)
	}
	if a.Pick != nil || !a.Undecided || a.Open == nil || a.Open.Variant != "freeze" || !a.TailOnly() {
		t.Fatalf("pick %v, undecided %v, tail only %v: %s; want undecided on freeze's median", a.Pick, a.Undecided, a.TailOnly(), a.Reason)
	}
	if !strings.Contains(a.Reason, "its median is in doubt (p50 27.000 ms") || !strings.Contains(strings.Join(a.Settle, "\n"), "median: more interleaved runs of freeze and default") {
		t.Errorf("reason %q, settle %q", a.Reason, a.Settle)
	}
	freeze.MedianInDoubt = ""
	if a, _ := Decide("c", "default", []Candidate{def(), freeze}, job); a.Pick == nil || a.Pick.Variant != "freeze" {
		t.Errorf("its median settled: pick %v, want freeze: %s", a.Pick, a.Reason)
	}
}
