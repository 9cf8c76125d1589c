package runner

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/stats"
)

// TestWarmProof is the measurement behind BENCHMARKS.md's table of warm
// against cold starts, not a check that runs by default (it takes
// minutes): GCJITTER_WARM_PROOF=N runs, for every built-in case but
// torchrun's matching GCJITTER_WARM_PROOF_CASES (a regular expression; all by
// default) at its reduced size (cases without one capped at 300 steps,
// every case at GCJITTER_WARM_PROOF_STEPS when set):
// every variant once warm and once cold with --census, whose schedules
// and censuses must be identical, then N interleaved rounds of the first
// variant a side (the order alternating), and logs one table row per case.
// A multi-rank case compares each rank's schedule and census, and its
// global steps (each the slowest rank's) for the p50.
//
//	GCJITTER_WARM_PROOF=20 go test ./runner -run TestWarmProof -v -timeout 60m
func TestWarmProof(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GCJITTER_WARM_PROOF"))
	if n <= 0 {
		t.Skip("set GCJITTER_WARM_PROOF=N (runs a side) to measure warm against cold")
	}
	if !WarmSupported() {
		t.Skip("no warm starts on this platform")
	}
	match := regexp.MustCompile(os.Getenv("GCJITTER_WARM_PROOF_CASES"))
	py := torchPython(t)
	script, err := bench.WriteWorker(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	all, err := cases.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("| case | size | variants with identical schedule, census | p50 cold (spread) | p50 warm (spread) | warm/cold p50 [interval] verdict | collections/run cold, warm | peak RSS cold, warm | RSS growth/1k steps cold, warm |")
	for _, c := range all {
		if c.Launcher != "" || !match.MatchString(c.Name) {
			continue
		}
		if c.Reduced != nil {
			c.ApplyReduced()
		} else {
			c.Steps, c.Warmup = min(c.Steps, 300), min(c.Warmup, 20)
		}
		if cap, _ := strconv.Atoi(os.Getenv("GCJITTER_WARM_PROOF_STEPS")); cap > 0 {
			c.Steps, c.Warmup = min(c.Steps, cap), min(c.Warmup, cap/10)
		}
		pool := NewWarm(nil)
		same, sameCensus := 0, 0
		// One run: a single-rank run's stream, or a multi-rank run's
		// ranks' (rank 0 first).
		run := func(p *Warm, v cases.Variant, seed uint32, census bool, name string) []*bench.Stream {
			var res []*Result
			if c.Ranks > 1 {
				res = startGroup(t, context.Background(), p, py, script, c, v, seed, census, name, nil)
			} else {
				res = []*Result{startRun(t, p, py, script, c, v, seed, census, name)}
			}
			var out []*bench.Stream
			for k, r := range res {
				if r.Failed() {
					t.Fatalf("%s rank %d: %s\n%s", name, k, r.Reason(), r.StderrTail)
				}
				out = append(out, r.Stream)
			}
			return out
		}
		for _, v := range c.Variants {
			cold := run(nil, v, 1, true, v.Name+"-census-cold")
			warm := run(pool, v, 1, true, v.Name+"-census-warm")
			schedules, censuses := true, true
			for k := range cold {
				if d := firstDiff(schedule(cold[k]), schedule(warm[k])); d != "" {
					t.Errorf("%s/%s rank %d: warm and cold schedules differ:\n%s", c.Name, v.Name, k, d)
					schedules = false
				}
				if a, b := census(cold[k]), census(warm[k]); a != b {
					t.Logf("%s/%s rank %d: objects walked per generation: cold %v, warm %v", c.Name, v.Name, k, a, b)
					censuses = false
				}
			}
			same += b2i(schedules)
			sameCensus += b2i(censuses)
		}
		var sides [2][]*bench.Stream // cold, warm
		v := c.Variants[0]
		for round := range n {
			seed := hashSeed(c.Seed, round)
			for k := range 2 {
				warm := (round+k)%2 == 1
				p := (*Warm)(nil)
				if warm {
					p = pool
				}
				ranks := run(p, v, seed, false, fmt.Sprintf("%s-%d-%v", v.Name, round, warm))
				sides[b2i(warm)] = append(sides[b2i(warm)], globalSteps(ranks))
			}
		}
		pool.Close()
		var p50 [2]string
		var mid [2]float64
		var colls, rss, growth [2]string
		var runP50 [2][]float64
		for k, runs := range sides {
			var p []float64
			var peak, grow []float64
			for _, s := range runs {
				var ns []float64
				var first, last, top int64
				for _, st := range s.Steps {
					if st.Warmup {
						continue
					}
					ns = append(ns, float64(st.DurationNS)/1e6)
					if st.RSS != nil {
						if first == 0 {
							first = *st.RSS
						}
						last, top = *st.RSS, max(top, *st.RSS)
					}
				}
				p = append(p, median(ns))
				peak = append(peak, float64(top)/(1<<20))
				grow = append(grow, float64(last-first)/(1<<20)/float64(len(ns))*1000)
			}
			runP50[k] = p
			mid[k] = median(p)
			p50[k] = fmt.Sprintf("%.3f ms (%.1f%%)", mid[k], 100*iqr(p)/mid[k])
			g := runs[0].End.GCStats
			colls[k] = fmt.Sprintf("%d/%d/%d", g[0].Collections, g[1].Collections, g[2].Collections)
			for _, s := range runs[1:] {
				if h := s.End.GCStats; h[0].Collections != g[0].Collections || h[1].Collections != g[1].Collections || h[2].Collections != g[2].Collections {
					colls[k] += " (varies)"
					break
				}
			}
			rss[k] = fmt.Sprintf("%.0f MiB", median(peak))
			growth[k] = fmt.Sprintf("%.1f MiB", median(grow))
		}
		// The p50s warm against cold by the comparison gcjitter makes
		// between two sides of one session (stats.Compare, a 2% floor):
		// "same" when its interval lies within ±2%.
		row := stats.Compare([]stats.Pair{{Bench: c.Name, Metric: "p50", Unit: "ms", Better: -1, Old: runP50[0], New: runP50[1]}}, stats.Options{DefaultFloor: 0.02})[0]
		t.Logf("| %s | %d+%d steps, %d a side | %d/%d, %d/%d | %s | %s | %.3f [%.3f, %.3f] %s | %s, %s | %s, %s | %s, %s |", c.Name, c.Steps, c.Warmup, n,
			same, len(c.Variants), sameCensus, len(c.Variants), p50[0], p50[1], mid[1]/mid[0], 1+row.ChangeLo, 1+row.ChangeHi, row.Verdict, colls[0], colls[1], rss[0], rss[1], growth[0], growth[1])
	}
}

// globalSteps is a multi-rank run as one stream: rank 0's, each step
// lasting as long as its slowest rank's (the collective waits for it),
// as stats.MultiRank's global step; a single rank's stream as it is.
func globalSteps(ranks []*bench.Stream) *bench.Stream {
	if len(ranks) == 1 {
		return ranks[0]
	}
	g := *ranks[0]
	g.Steps = nil
	for i, st := range ranks[0].Steps {
		s := *st
		for _, r := range ranks[1:] {
			if i < len(r.Steps) {
				s.DurationNS = max(s.DurationNS, r.Steps[i].DurationNS)
			}
		}
		g.Steps = append(g.Steps, &s)
	}
	return &g
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func median(x []float64) float64 { return quantile(x, 0.5) }

// iqr is the interquartile range: the runs' spread.
func iqr(x []float64) float64 { return quantile(x, 0.75) - quantile(x, 0.25) }

func quantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[i]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}
