package scale

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Load reads results directories into groups: one per case, variant and
// world size, in the order met. Bad input is a *results.InputError naming
// the file and what to do. Warnings say what was left out or assumed.
func Load(dirs []string) ([]*Group, []string, error) {
	var groups []*Group
	byKey := map[string]*Group{}
	var warnings []string
	for _, dir := range dirs {
		m, err := readManifest(dir)
		if err != nil {
			return nil, nil, err
		}
		rules := map[string]stats.SpikeRule{}
		for _, c := range m.Cases {
			rules[c.Name] = c.SpikeRule()
		}
		skipped := 0
		for _, r := range m.Runs {
			if r.Status != results.StatusOK {
				skipped++
				continue
			}
			run, noOwn, err := readRun(dir, r, rules[r.Case])
			if err != nil {
				return nil, nil, err
			}
			ranks := max(1, r.Ranks)
			key := fmt.Sprintf("%s\x00%s\x00%d", r.Case, r.Variant, ranks)
			g := byKey[key]
			if g == nil {
				g = &Group{Case: r.Case, Variant: r.Variant, Policy: r.Policy, Ranks: ranks, Rule: rules[r.Case]}
				byKey[key] = g
				groups = append(groups, g)
			}
			if len(g.Runs) > 0 && run.steps() != g.Runs[0].steps() {
				// Runs of different lengths pool fine; only the block
				// bootstrap uses the shortest.
				warnings = append(warnings, fmt.Sprintf("%s: %d measured steps, other runs of %s/%s have %d", run.Path, run.steps(), r.Case, r.Variant, g.Runs[0].steps()))
			}
			g.Runs = append(g.Runs, run)
			if noOwn && !g.NoOwn {
				g.NoOwn = true
				warnings = append(warnings, fmt.Sprintf("%s: no \"own\" time in the step records (an older worker wrote these records): each rank's step time, which holds its wait for the slowest rank, stands in for its own time, so %s/%s's predictions run high; rerun the case for a sound prediction", run.Path, r.Case, r.Variant))
			}
		}
		if skipped > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: %d runs did not complete and are left out", dir, skipped))
		}
	}
	if len(groups) == 0 {
		return nil, nil, &results.InputError{Msgs: []string{fmt.Sprintf("%s: no completed runs to predict from; run a case first (gcjitter run -o DIR CASE)", dirs[0])}}
	}
	return groups, warnings, nil
}

func readManifest(dir string) (*results.Manifest, error) {
	if st, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &results.InputError{Msgs: []string{fmt.Sprintf("%s: no such directory; give results directories written by gcjitter run, collect or import", dir)}}
		}
		return nil, err
	} else if !st.IsDir() {
		return nil, &results.InputError{Msgs: []string{fmt.Sprintf("%s: not a directory; gcjitter scale reads results directories (their record streams), not benchfmt files", dir)}}
	}
	m, err := results.ReadManifest(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &results.InputError{Msgs: []string{fmt.Sprintf("%s: a directory without %s is not a gcjitter results directory; give one written by gcjitter run, collect or import", dir, results.ManifestFile)}}
		}
		return nil, &results.InputError{Msgs: []string{err.Error()}}
	}
	return m, nil
}

// readRun reads a run's rank streams (one for a single-rank run) into a
// Run; noOwn when a multi-rank stream lacks the own time.
func readRun(dir string, r *results.Run, rule stats.SpikeRule) (*Run, bool, error) {
	nr := max(1, r.Ranks)
	streams := make([]*bench.Stream, nr)
	for k := range nr {
		path := filepath.Join(dir, r.RankRecords(k))
		f, err := os.Open(path)
		if err != nil {
			return nil, false, &results.InputError{Msgs: []string{fmt.Sprintf("%s: %v; the manifest lists this run as completed: restore the file or rerun the case", path, err)}}
		}
		s, err := bench.ReadStream(f, path)
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		if len(s.Problems) > 0 {
			return nil, false, &results.InputError{Msgs: []string{fmt.Sprintf("%s; the stream is damaged: rerun the case", s.Problems[0].Error())}}
		}
		streams[k] = s
	}
	run := &Run{Path: filepath.Join(dir, r.RankRecords(0)), Contention: contention(streams)}
	measured := make([][]*bench.Step, nr)
	n := -1
	for k, s := range streams {
		measured[k] = s.Measured()
		if n < 0 || len(measured[k]) < n {
			n = len(measured[k])
		}
	}
	if n < 10 {
		return nil, false, &results.InputError{Msgs: []string{fmt.Sprintf("%s: %d measured steps, too few to predict from; rerun with more -steps", run.Path, n)}}
	}
	noOwn := false
	run.Ranks = make([]Rank, nr)
	run.Global, run.Resid = make([]float64, n), make([]float64, n)
	for q := range nr {
		rk := Rank{Own: make([]float64, n), Auto: make([]float64, n), Sched: make([]float64, n)}
		for k, st := range measured[q][:n] {
			rk.Own[k] = float64(st.DurationNS)
			if st.OwnNS != nil {
				rk.Own[k] = float64(*st.OwnNS)
			} else if nr > 1 {
				noOwn = true
			}
			for _, e := range st.GC {
				if !e.InStep {
					continue // between steps: not in the step's time
				}
				if e.Manual {
					rk.Sched[k] += float64(e.PauseNS)
				} else {
					rk.Auto[k] += float64(e.PauseNS)
				}
			}
			run.Global[k] = max(run.Global[k], float64(st.DurationNS))
		}
		run.Ranks[q] = rk
	}
	for k := range n {
		most := 0.0
		for q := range nr {
			most = max(most, run.Ranks[q].Own[k])
		}
		run.Resid[k] = max(0, run.Global[k]-most)
	}
	if nr > 1 {
		_, rs := stats.MultiRank(streams, rule)
		run.SpikeRate = rs.GlobalSpikeRate
	} else {
		sum := stats.Summarize(streams[0], rule)
		run.SpikeRate = 1000 * float64(sum.Spikes) / float64(max(1, sum.Steps))
	}
	return run, noOwn, nil
}

// contention says how a run's ranks outnumbered their host's CPUs: the
// ranks of each host (by name) against the CPUs their affinities allow,
// each rank wanting its torch threads. Empty when every host had CPUs
// enough, or a stream does not say (older streams, imports).
func contention(streams []*bench.Stream) string {
	type host struct {
		ranks, threads int
		cpus           map[int]bool
	}
	hosts := map[string]*host{}
	var names []string
	for _, s := range streams {
		m := s.Meta
		if m == nil || len(m.Affinity) == 0 {
			return ""
		}
		h := hosts[m.Host]
		if h == nil {
			h = &host{cpus: map[int]bool{}}
			hosts[m.Host] = h
			names = append(names, m.Host)
		}
		h.ranks++
		h.threads += max(1, m.Threads)
		for _, c := range m.Affinity {
			h.cpus[c] = true
		}
	}
	for _, name := range names {
		if h := hosts[name]; h.threads > len(h.cpus) {
			per, unit := h.threads/h.ranks, "threads"
			if per == 1 {
				unit = "thread"
			}
			return fmt.Sprintf("%d ranks x %d %s on %d CPUs", h.ranks, per, unit, len(h.cpus))
		}
	}
	return ""
}

// sortGroups orders groups by case, then variant as met, then world size.
func sortGroups(gs []*Group) {
	sort.SliceStable(gs, func(i, j int) bool {
		if gs[i].Case != gs[j].Case {
			return gs[i].Case < gs[j].Case
		}
		return false
	})
}
