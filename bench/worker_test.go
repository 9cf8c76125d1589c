package bench_test

// End-to-end tests of the worker under the real interpreter and real torch.
// They assert on the exact GC schedule (deterministic for a seeded run) and
// on structure, never on timings, which are noisy on shared machines.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/testpython"
	"github.com/google/go-cmp/cmp"
)

// small is a quick cpu configuration for a model.
func small(model string) bench.Config {
	c := bench.DefaultConfig()
	c.Model, c.Device = model, "cpu"
	c.Steps, c.Warmup = 50, 2
	c.Batch, c.Hidden, c.Layers, c.Seq, c.Vocab, c.Image, c.Work = 4, 64, 2, 32, 256, 32, 2000
	c.Threads = 1
	c.Garbage, c.Cycles = "ring", 50
	return c
}

func TestEachModelRuns50Steps(t *testing.T) {
	py := testpython.Torch(t)
	for _, model := range []string{"mlp", "gpt", "resnet", "none"} {
		t.Run(model, func(t *testing.T) {
			s := testpython.MustComplete(t, testpython.RunWorker(t, py, small(model), "0"))
			if s.Meta.Model != model || s.Meta.Device.Kind != "cpu" {
				t.Errorf("meta says model %q on %q, want %q on cpu", s.Meta.Model, s.Meta.Device.Kind, model)
			}
			if got := len(s.Measured()); got != 50 {
				t.Errorf("%d measured steps, want 50", got)
			}
			if got := len(s.Steps) - len(s.Measured()); got != 2 {
				t.Errorf("%d warm-up steps, want 2", got)
			}
			for _, st := range s.Steps {
				if st.DurationNS <= 0 {
					t.Fatalf("step %d: duration %d ns", st.Index, st.DurationNS)
				}
				if st.RSS == nil || *st.RSS <= 0 {
					t.Fatalf("step %d: no RSS recorded", st.Index)
				}
			}
			if model != "none" && s.Meta.Torch == "" {
				t.Error("meta has no torch version")
			}
		})
	}
}

// policyCase is one policy and what its record stream must show.
type policyCase struct {
	policy string
	check  func(t *testing.T, s *bench.Stream)
}

func TestEveryPolicy(t *testing.T) {
	py := testpython.Torch(t)
	cases := []policyCase{
		{"default", func(t *testing.T, s *bench.Stream) {
			if n := bench.Collections(s.Steps); n[0] == 0 {
				t.Errorf("default policy recorded no gen-0 collection: %v", n)
			}
		}},
		{"disabled", func(t *testing.T, s *bench.Stream) {
			if n := bench.Collections(s.Steps); n != [3]int{} {
				t.Errorf("disabled recorded collections %v, want none", n)
			}
			for g, st := range s.End.GCStats {
				if st.Collections != 0 {
					t.Errorf("disabled: gc.get_stats() counts %d gen-%d collections, want 0", st.Collections, g)
				}
			}
		}},
		{"threshold:700,10,1000", func(t *testing.T, s *bench.Stream) {
			if diff := cmp.Diff([]int{700, 10, 1000}, s.Meta.GC.Thresholds); diff != "" {
				t.Errorf("thresholds (-want +got):\n%s", diff)
			}
		}},
		{"threshold:5000", func(t *testing.T, s *bench.Stream) {
			if got := s.Meta.GC.Thresholds[0]; got != 5000 {
				t.Errorf("threshold 0 is %d, want 5000", got)
			}
		}},
		{"freeze", func(t *testing.T, s *bench.Stream) {
			if s.End.FreezeCount == 0 {
				t.Error("freeze: no objects in the permanent generation at the end")
			}
		}},
		{"manual:5", checkManual(5, 2)},
		{"manual:4:1", checkManual(4, 1)},
		{"freeze+manual:10", func(t *testing.T, s *bench.Stream) {
			checkManual(10, 2)(t, s)
			if s.End.FreezeCount == 0 {
				t.Error("freeze+manual: nothing frozen")
			}
		}},
		{"collect-every-step", func(t *testing.T, s *bench.Stream) {
			for _, st := range s.Measured() {
				if !hasManual(st, 2) || !st.Scheduled {
					t.Fatalf("step %d has no scheduled full collection: %+v", st.Index, st.GC)
				}
			}
		}},
		{"empty-cache-every-step", func(t *testing.T, s *bench.Stream) {
			if !strings.Contains(strings.Join(s.Meta.Notes, "\n"), "not applicable on cpu") {
				t.Errorf("empty-cache-every-step on cpu: notes %q do not say it is not applicable", s.Meta.Notes)
			}
		}},
		{"threshold:100,5,5+collect-every-step+empty-cache-every-step", func(t *testing.T, s *bench.Stream) {
			if s.Meta.GC.Thresholds[0] != 100 {
				t.Errorf("threshold not applied: %v", s.Meta.GC.Thresholds)
			}
		}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.policy, ":", "="), func(t *testing.T) {
			t.Parallel()
			cfg := small("mlp")
			cfg.Steps, cfg.Warmup, cfg.Policy = 30, 2, c.policy
			s := testpython.MustComplete(t, testpython.RunWorker(t, py, cfg, "0"))
			if s.Meta.Policy != c.policy {
				t.Errorf("meta policy %q, want %q", s.Meta.Policy, c.policy)
			}
			c.check(t, s)
		})
	}
}

// checkManual: automatic GC off, and a collection of gen on every every-th
// step (1-based) and on no other.
func checkManual(every, gen int) func(t *testing.T, s *bench.Stream) {
	return func(t *testing.T, s *bench.Stream) {
		if s.Meta.GC.Enabled {
			t.Error("manual policy left automatic GC enabled")
		}
		for _, st := range s.Steps {
			due := (st.Index+1)%every == 0
			if due != st.Scheduled || due != hasManual(st, gen) {
				t.Errorf("step %d: scheduled=%v, manual gen-%d collection=%v, want both %v", st.Index, st.Scheduled, gen, hasManual(st, gen), due)
			}
			for _, e := range st.GC {
				if !e.Manual {
					t.Errorf("step %d: automatic collection %+v under a manual policy", st.Index, e)
				}
			}
		}
	}
}

func hasManual(st *bench.Step, gen int) bool {
	for _, e := range st.GC {
		if e.Manual && e.Gen == gen && e.InStep {
			return true
		}
	}
	return false
}

// gen2Config makes objects survive young collections (retain) so CPython's
// 25% rule triggers full collections over a 200k-object heap.
func gen2Config() bench.Config {
	c := small("mlp")
	c.Steps, c.Warmup = 200, 0
	c.Garbage, c.Cycles, c.Objects = "ring", 200, 4
	c.LongLived, c.Retain = 200_000, 8
	return c
}

func TestLongLivedHeapGetsFullCollections(t *testing.T) {
	py := testpython.Torch(t)
	s := testpython.MustComplete(t, testpython.RunWorker(t, py, gen2Config(), "0"))
	n := bench.Collections(s.Steps)
	if n[2] < 1 {
		t.Fatalf("no gen-2 collection with a 200k-object heap under the default policy: %v", n)
	}
	if int64(n[2]) != s.End.GCStats[2].Collections {
		t.Errorf("recorder saw %d gen-2 collections, gc.get_stats() %d", n[2], s.End.GCStats[2].Collections)
	}
}

// schedule is a run's per-generation collection counts, from the
// interpreter's own gc.get_stats().
func schedule(s *bench.Stream) [3]int64 {
	var c [3]int64
	for g := range 3 {
		c[g] = s.End.GCStats[g].Collections
	}
	return c
}

func mixedGarbageConfig() bench.Config {
	c := small("mlp")
	c.Steps, c.Warmup = 150, 5
	c.Garbage = "pairs+ring+graph+tensor-holders+traceback+logdict"
	c.Cycles, c.Objects, c.LongLived, c.Retain = 40, 5, 100_000, 6
	return c
}

func TestScheduleIsDeterministicAcrossHashSeeds(t *testing.T) {
	py := testpython.Torch(t)
	cfg := mixedGarbageConfig()
	a := testpython.MustComplete(t, testpython.RunWorker(t, py, cfg, "1"))
	b := testpython.MustComplete(t, testpython.RunWorker(t, py, cfg, "2"))
	if a.Meta.HashSeed == b.Meta.HashSeed {
		t.Fatalf("both runs had PYTHONHASHSEED %q", a.Meta.HashSeed)
	}
	if schedule(a) == [3]int64{} {
		t.Fatal("no collections at all: the test would prove nothing")
	}
	if diff := cmp.Diff(schedule(a), schedule(b)); diff != "" {
		t.Errorf("per-generation collections differ between hash seeds (-seed1 +seed2):\n%s", diff)
	}
	if diff := cmp.Diff(bench.Collections(a.Steps), bench.Collections(b.Steps)); diff != "" {
		t.Errorf("recorded collections differ between hash seeds (-seed1 +seed2):\n%s", diff)
	}
}

func TestRecorderDoesNotMoveTheSchedule(t *testing.T) {
	py := testpython.Torch(t)
	for _, cfg := range []bench.Config{mixedGarbageConfig(), gen2Config()} {
		t.Run(cfg.Garbage, func(t *testing.T) {
			on := testpython.MustComplete(t, testpython.RunWorker(t, py, cfg, "0"))
			cfg.NoRecorder = true
			off := testpython.MustComplete(t, testpython.RunWorker(t, py, cfg, "0"))
			if off.Meta.Recorder || bench.Collections(off.Steps) != [3]int{} {
				t.Fatal("-no-recorder still recorded events")
			}
			if diff := cmp.Diff(schedule(on), schedule(off)); diff != "" {
				t.Errorf("gc.get_stats() collections differ, recorder on vs off (-on +off):\n%s", diff)
			}
			rec := bench.Collections(on.Steps)
			for g := range 3 {
				if int64(rec[g]) != schedule(on)[g] {
					t.Errorf("gen %d: recorder saw %d collections, the interpreter counted %d", g, rec[g], schedule(on)[g])
				}
			}
		})
	}
}

func TestBadArgumentsFailWithOneLine(t *testing.T) {
	py := testpython.Torch(t)
	script, err := bench.WriteWorker(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--policy", "manual:0"},
		{"--policy", "threshold:a,b"},
		{"--policy", "default+freeze"},
		{"--policy", "disabled+manual:5"},
		{"--model", "bert"},
		{"--garbage", "rings"},
		{"--device", "tpu"},
		{"--steps", "-1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			records := filepath.Join(t.TempDir(), "r.jsonl")
			cmd := exec.Command(py, append([]string{script, "--records", records}, args...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
				t.Fatalf("exit: %v, want status 2", err)
			}
			msg := strings.TrimRight(stderr.String(), "\n")
			if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "gcjitter-worker: ") {
				t.Errorf("stderr is not one gcjitter-worker line:\n%s", msg)
			}
			f, err := os.Open(records)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := bench.ReadStream(f, records)
			if err != nil {
				t.Fatal(err)
			}
			if s.Error == nil || s.Error.Kind != "usage" || len(s.Steps) != 0 {
				t.Errorf("want one usage error record and no steps, got error %+v, %d steps", s.Error, len(s.Steps))
			}
		})
	}
}

// TestOtherPythons runs the torch-free workload under every CPython 3.8+
// this machine has, so the worker's syntax and gc use stay portable.
func TestOtherPythons(t *testing.T) {
	seen := map[string]bool{}
	var found []string
	cands, _ := filepath.Glob("/root/.pyenv/versions/3.*/bin/python3")
	for minor := 8; minor <= 14; minor++ {
		cands = append(cands, fmt.Sprintf("python3.%d", minor), fmt.Sprintf("python3.%dt", minor))
	}
	for _, c := range cands {
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		out, err := exec.Command(p, "-c", "import sys; print('%d.%d' % sys.version_info[:2], sys.version_info >= (3, 8))").Output()
		if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "True") || seen[string(out)] {
			continue
		}
		seen[string(out)] = true
		found = append(found, p)
	}
	if len(found) == 0 {
		t.Skip("no other CPython 3.8+ on this machine")
	}
	for _, py := range found {
		t.Run(py, func(t *testing.T) {
			t.Parallel()
			cfg := small("none")
			cfg.Device, cfg.Policy = "auto", "freeze+manual:10:1"
			cfg.Garbage, cfg.LongLived, cfg.Retain = "pairs+ring+graph+tensor-holders+traceback+logdict", 10_000, 3
			s := testpython.MustComplete(t, testpython.RunWorker(t, py, cfg, "0"))
			checkManual(10, 1)(t, s)
			cfg.Policy = "default"
			s = testpython.MustComplete(t, testpython.RunWorker(t, py, cfg, "0"))
			if n := bench.Collections(s.Steps); n[0] == 0 {
				t.Errorf("%s (python %s): no collections recorded: %v", py, s.Meta.Python.Version, n)
			}
		})
	}
}

// A planted leak grows RSS by its size per step and moves nothing the
// collector sees: the same collections, the same objects collected.
func TestPlantedLeakGrowsRSSOnly(t *testing.T) {
	py := testpython.Torch(t)
	c := small("none")
	c.Steps = 200
	plain := testpython.MustComplete(t, testpython.RunWorker(t, py, c, "0"))
	c.LeakKiBPerStep = 512
	leaky := testpython.MustComplete(t, testpython.RunWorker(t, py, c, "0"))
	if leaky.Meta.Garbage.LeakKiBPerStep != 512 {
		t.Errorf("meta garbage.leak_kib_per_step = %d, want 512", leaky.Meta.Garbage.LeakKiBPerStep)
	}
	if a, b := schedule(plain), schedule(leaky); a != b {
		t.Errorf("collections %v without the leak, %v with it: the leak moved the GC schedule", a, b)
	}
	growth := func(s *bench.Stream) float64 {
		m := s.Measured()
		return float64(*m[len(m)-1].RSS-*m[0].RSS) / float64(len(m)-1)
	}
	// 512 KiB per step, give or take the allocator's rounding.
	if g := growth(leaky) - growth(plain); g < 0.9*(512<<10) || g > 1.2*(512<<10) {
		t.Errorf("the leak grew RSS by %.0f bytes per step over the plain run's, want about %d", g, 512<<10)
	}
}
