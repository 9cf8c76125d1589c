package results

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gcjitter/gcjitter/bench"
)

// Steps is one benchmark's step series on one side, for plots: each
// completed run's measured step times, and the collections inside each step.
type Steps struct {
	Runs [][]float64 // ns per measured step, one slice per run
	GC   [][]uint8   // per run and step: GenBit(g) set for each generation collected in the step
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
		name := BenchName(r.Case, r.Variant)
		if out[name] == nil {
			out[name] = &Steps{}
		}
		out[name].Runs = append(out[name].Runs, durs)
		out[name].GC = append(out[name].GC, gcs)
	}
	return out, nil
}
