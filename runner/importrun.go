package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Stream is one process of the trace as a gcjitter record stream: one
// step record per step with the collections that started in it or in the
// gap before it; the process is rank rank of a run of world ranks.
func (t *ImportedTrace) Stream(p *TraceProcess, rank, world, warmup int, notes []string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.Encode(map[string]any{"type": "meta", "schema": bench.SchemaVersion, "python": map[string]any{},
		"device": map[string]any{"kind": "unknown"}, "gc": map[string]any{"thresholds": []int{}},
		"policy": cases.ImportVariant, "model": cases.ImportVariant, "sizes": map[string]any{}, "garbage": map[string]any{"pattern": cases.ImportVariant},
		"allocator": map[string]any{}, "rank": rank, "world_size": world, "steps": max(len(p.Steps)-warmup, 0), "warmup": warmup,
		"recorder": t.Collections > 0, "notes": append(slices.Clone(t.Notes), notes...)})
	var counts [3]int64
	for i, s := range p.Steps {
		events := p.GC[i]
		if events == nil {
			events = []bench.GCEvent{}
		}
		counts[2] += int64(len(events))
		enc.Encode(map[string]any{"type": "step", "i": i, "warmup": i < warmup, "ns": s.end - s.start, "gc": events,
			"lost": 0, "sched": false, "count": []int{0, 0, 0}, "rss": nil, "dev_mem": nil})
	}
	enc.Encode(map[string]any{"type": "end", "steps": len(p.Steps), "wall_ns": 0, "gc_stats": []any{}, "recorded": counts[:], "freeze_count": 0})
	return b.Bytes()
}

// ImportedRun is one run made by ImportTraces: its traces (several when
// they are ranks of one job) and what Collect made of them.
type ImportedRun struct {
	Traces []*ImportedTrace
	*Collected
}

// ImportTraces adds profiler traces to the results directory out as runs
// of variant "imported" of case caseName: traces that are distinct ranks
// of one job (distributedInfo, or a rank in the file name) as one
// multi-rank run, as gcjitter collect makes one; otherwise one run per
// trace, a merged trace's processes as its ranks. It is all or nothing:
// when any trace fails, out is left as it was (absent if it was).
func ImportTraces(out, caseName string, paths []string, warmup int, rule stats.SpikeRule, tool string) ([]*ImportedRun, error) {
	bad := func(format string, args ...any) error {
		return &results.InputError{Msgs: []string{fmt.Sprintf(format, args...)}}
	}
	var traces []*ImportedTrace
	for _, p := range paths {
		t, err := ReadTrace(p)
		if err != nil {
			return nil, &results.InputError{Msgs: []string{err.Error()}}
		}
		traces = append(traces, t)
	}
	type rankStream struct {
		trace *ImportedTrace
		data  []byte
	}
	var runs []*ImportedRun
	var streams [][]rankStream
	for _, group := range groupRanks(traces) {
		world := 0
		for _, t := range group {
			world += len(t.Procs)
		}
		var ranks []rankStream
		for _, t := range group {
			for _, p := range t.Procs {
				if len(p.Steps) <= warmup {
					return nil, bad("%s: %d steps in process %s, not more than -warmup %d: nothing left to measure (imports mark no warm-up unless -warmup says so: the profiler kept its own out of the trace)",
						t.Path, len(p.Steps), p.PID, warmup)
				}
				k := len(ranks)
				data := t.Stream(p, k, world, warmup, rankNote(group, t, p, k))
				s, err := bench.ReadStream(bytes.NewReader(data), t.Path)
				if err != nil || len(s.Problems) > 0 || !s.Complete() {
					return nil, fmt.Errorf("%s: the record stream made from it does not read back (a gcjitter bug): %v %v", t.Path, err, s.Problems)
				}
				ranks = append(ranks, rankStream{t, data})
			}
		}
		runs = append(runs, &ImportedRun{Traces: group})
		streams = append(streams, ranks)
	}
	err := stageDir(out, func(stage, scratch string) error {
		for i, run := range runs {
			var files []string
			for k, r := range streams[i] {
				f := filepath.Join(scratch, fmt.Sprintf("run-%d-rank-%d.jsonl", i, k))
				if err := os.WriteFile(f, r.data, 0o644); err != nil {
					return err
				}
				files = append(files, f)
			}
			c, err := Collect(stage, caseName, cases.ImportVariant, files, rule, tool, append([]string{"gcjitter", "import"}, paths...))
			if err != nil {
				return err
			}
			run.Collected = c
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// groupRanks makes the runs: traces that each hold one process and name
// distinct ranks of one world size are the ranks of one job, in rank
// order; any other trace is a run of its own. Runs come in the order of
// their first trace.
func groupRanks(traces []*ImportedTrace) [][]*ImportedTrace {
	jobs := map[int][]*ImportedTrace{} // by world size
	for _, t := range traces {
		if len(t.Procs) == 1 && t.Rank >= 0 {
			jobs[t.WorldSize] = append(jobs[t.WorldSize], t)
		}
	}
	distinct := func(g []*ImportedTrace) bool {
		seen := map[int]bool{}
		for _, t := range g {
			if seen[t.Rank] {
				return false
			}
			seen[t.Rank] = true
		}
		return len(g) > 1
	}
	var runs [][]*ImportedTrace
	done := map[int]bool{}
	for _, t := range traces {
		g := jobs[t.WorldSize]
		switch {
		case len(t.Procs) != 1 || t.Rank < 0 || !distinct(g):
			runs = append(runs, []*ImportedTrace{t})
		case !done[t.WorldSize]:
			done[t.WorldSize] = true
			g = slices.Clone(g)
			slices.SortStableFunc(g, func(a, b *ImportedTrace) int { return a.Rank - b.Rank })
			runs = append(runs, g)
		}
	}
	return runs
}

// rankNote says which trace and process rank k of the run is, and which
// rank of the job.
func rankNote(group []*ImportedTrace, t *ImportedTrace, p *TraceProcess, k int) []string {
	job := ""
	if t.Rank >= 0 && len(t.Procs) == 1 {
		job = fmt.Sprintf(", the job's rank %d", t.Rank)
		if t.WorldSize > 0 {
			job += fmt.Sprintf(" of %d", t.WorldSize)
		}
		job += " (" + t.RankFrom + ")"
	}
	if len(group) == 1 && len(t.Procs) == 1 {
		if job == "" {
			return nil
		}
		return []string{"this trace is" + strings.TrimPrefix(job, ",")}
	}
	return []string{fmt.Sprintf("rank %d of this run: %s, process %s%s", k, filepath.Base(t.Path), p.PID, job)}
}

// stageDir runs fill on a copy of dir (empty when dir does not exist) in a
// scratch directory beside it, with a second scratch directory for files
// that are not to be kept, and puts the copy in dir's place only when fill
// succeeds: a failure leaves dir as it was, absent if it was.
func stageDir(dir string, fill func(stage, scratch string) error) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".import-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	stage, scratch := filepath.Join(tmp, "new"), filepath.Join(tmp, "scratch")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	existed := err == nil
	switch {
	case existed && !fi.IsDir():
		return &results.InputError{Msgs: []string{fmt.Sprintf("%s: not a directory: give -o a results directory", dir)}}
	case existed:
		err = copyTree(dir, stage)
	case errors.Is(err, os.ErrNotExist):
		err = os.Mkdir(stage, 0o755)
	}
	if err != nil {
		return err
	}
	if err := fill(stage, scratch); err != nil {
		return err
	}
	if !existed {
		return os.Rename(stage, dir)
	}
	old := filepath.Join(tmp, "old")
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(stage, dir); err != nil {
		os.Rename(old, dir)
		return err
	}
	return nil
}

// copyTree copies the directory src to dst (which must not exist): files,
// directories and symbolic links, with their permissions.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm())
		case d.Type()&os.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, info.Mode().Perm())
	})
}
