package results

import (
	"math"
	"slices"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// Steps is one benchmark's step series on one side, for plots: each
// completed run's measured step times, and the collections inside each step.
type Steps struct {
	Runs [][]float64 // ns per measured step, one slice per run
	GC   [][]uint8   // per run and step: GenBit(g) set for each generation collected in the step
	// Pause and Collected are, per run and step, the in-step collections'
	// pause (ns) and the objects they freed: what a chart's tooltip says
	// about a spike. Multi-rank runs hold the slowest rank's pause and the
	// ranks' total collected.
	Pause     [][]float32
	Collected [][]int32
	// RSS is, per run and step, the worker's resident set in bytes (NaN
	// where not recorded; a multi-rank run: its largest rank's): the memory
	// timeline draws it.
	RSS [][]float32
	// RankPause, for multi-rank runs: each rank's in-step collection pause
	// (ns) at each step of run 1: who stalled the others, and when.
	RankPause [][]float64
	// Sketch stands in for Runs on a side that kept only quantiles (a
	// baseline): the quantile chart draws it.
	Sketch *stats.Sketch
}

// PooledSorted is every run's steps in one sorted slice; a sketch-only
// side (a baseline) gives none.
func (s *Steps) PooledSorted() []float64 {
	if s == nil {
		return nil
	}
	var all []float64
	for _, r := range s.Runs {
		all = append(all, r...)
	}
	slices.Sort(all)
	return all
}

// GenBit is the bit of generation g in Steps.GC.
func GenBit(g int) uint8 { return 1 << g }

// LoadSteps reads the measured steps of every completed run of a results
// directory, by benchmark name. A million steps take about 21 MB.
func LoadSteps(dir string) (map[string]*Steps, error) { return new(Cache).LoadSteps(dir) }

// LoadSteps is LoadSteps through the cache: the runs Load parsed with
// KeepSteps are not read again.
func (c *Cache) LoadSteps(dir string) (map[string]*Steps, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, &InputError{[]string{err.Error()}}
	}
	rules := map[string]stats.SpikeRule{}
	for _, cs := range m.Cases {
		rules[cs.Name] = cs.SpikeRule()
	}
	out := map[string]*Steps{}
	for _, r := range m.Runs {
		if r.Status != StatusOK {
			continue
		}
		name := BenchName(r.Case, r.Variant)
		if out[name] == nil {
			out[name] = &Steps{}
		}
		k, err := c.runSteps(dir, r, rules[r.Case])
		if err != nil {
			return nil, err
		}
		if k.series != nil {
			k.series.appendTo(out[name])
		} else {
			addRanks(out[name], k.streams)
		}
	}
	return out, nil
}

// addRanks adds a multi-rank run: its global series (the slowest rank at
// each step, with every rank's collections), and for the first run each
// rank's own series.
func addRanks(s *Steps, streams []*bench.Stream) {
	var global runSeries
	first := len(s.Runs) == 0
	for _, st := range streams {
		steps := st.Measured()
		var pause []float64
		for i, step := range steps {
			pause = append(pause, float64(global.add(i, step)))
		}
		if first {
			s.RankPause = append(s.RankPause, pause)
		}
	}
	global.appendTo(s)
}

// runSeries collects one run's steps; a multi-rank run adds every rank's
// step i at index i, and the series keeps the slowest.
type runSeries struct {
	durs      []float64
	gcs       []uint8
	pause     []float32
	collected []int32
	rss       []float32
}

// add merges step into index i (appending when i is new) and returns the
// step's in-step collection pause (ns).
func (r *runSeries) add(i int, step *bench.Step) float32 {
	if i >= len(r.durs) {
		i = len(r.durs)
		r.durs, r.gcs = append(r.durs, 0), append(r.gcs, 0)
		r.pause, r.collected = append(r.pause, 0), append(r.collected, 0)
		r.rss = append(r.rss, float32(math.NaN()))
	}
	if step.RSS != nil && !(float32(*step.RSS) <= r.rss[i]) { // NaN: the first rank's
		r.rss[i] = float32(*step.RSS)
	}
	r.durs[i] = max(r.durs[i], float64(step.DurationNS))
	var pause float32
	for _, e := range step.GC {
		if e.InStep {
			r.gcs[i] |= GenBit(e.Gen)
			pause += float32(e.PauseNS)
			r.collected[i] += int32(min(e.Collected, 1<<31-1))
		}
	}
	r.pause[i] = max(r.pause[i], pause)
	return pause
}

func (r *runSeries) appendTo(s *Steps) {
	s.Runs = append(s.Runs, r.durs)
	s.GC = append(s.GC, r.gcs)
	s.Pause = append(s.Pause, r.pause)
	s.Collected = append(s.Collected, r.collected)
	s.RSS = append(s.RSS, r.rss)
}
