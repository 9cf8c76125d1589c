package results

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// Steps is one benchmark's step series on one side, for plots: each
// completed run's measured step times, and the collections inside each step.
type Steps struct {
	Runs [][]float64 // ns per measured step, one slice per run
	GC   [][]uint8   // per run and step: GenBit(g) set for each generation collected in the step
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
// directory, by benchmark name. Reading is streamed; a million steps take
// about 9 MB.
func LoadSteps(dir string) (map[string]*Steps, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, &InputError{[]string{err.Error()}}
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
		if r.Ranks > 1 {
			if err := addRanks(out[name], dir, r); err != nil {
				return nil, err
			}
			continue
		}
		path := filepath.Join(dir, r.Records)
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		rd := bench.NewReader(f, path)
		var durs []float64
		var gcs []uint8
		for rd.Scan() {
			st, ok := rd.Record().(*bench.Step)
			if !ok || st.Warmup {
				continue
			}
			var bits uint8
			for _, e := range st.GC {
				if e.InStep {
					bits |= GenBit(e.Gen)
				}
			}
			durs = append(durs, float64(st.DurationNS))
			gcs = append(gcs, bits)
		}
		f.Close()
		if err := rd.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out[name].Runs = append(out[name].Runs, durs)
		out[name].GC = append(out[name].GC, gcs)
	}
	return out, nil
}

// addRanks adds a multi-rank run: its global series (the slowest rank at
// each step, with every rank's collections), and for the first run each
// rank's own series.
func addRanks(s *Steps, dir string, r *Run) error {
	streams, err := readRanks(dir, r)
	if err != nil {
		return err
	}
	var global []float64
	var gcs []uint8
	first := len(s.Runs) == 0
	for _, st := range streams {
		steps := st.Measured()
		var pause []float64
		for i, step := range steps {
			if i >= len(global) {
				global = append(global, 0)
				gcs = append(gcs, 0)
			}
			global[i] = max(global[i], float64(step.DurationNS))
			p := 0.0
			for _, e := range step.GC {
				if e.InStep {
					gcs[i] |= GenBit(e.Gen)
					p += float64(e.PauseNS)
				}
			}
			pause = append(pause, p)
		}
		if first {
			s.RankPause = append(s.RankPause, pause)
		}
	}
	s.Runs = append(s.Runs, global)
	s.GC = append(s.GC, gcs)
	return nil
}
