package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/results"
)

// collectTraced adds the complete streams as one run: the job's. The
// rank-N streams of a torchrun job are its ranks (all of them, or no
// run); processes without a rank (torch.multiprocessing's, each stepping
// on its own), or several of one rank, are numbered as the run's
// processes, ranks first, then by pid.
func collectTraced(opt TraceOptions, t *Traced) error {
	dir := t.Streams
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type proc struct {
		path      string
		ranked    bool
		rank, pid int
		world     int
	}
	var procs []proc
	measured, warmupOnly := false, 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		path := filepath.Join(dir, name)
		s, complete := readTraceStream(path)
		if !complete {
			t.Incomplete = append(t.Incomplete, path)
			if s != nil {
				t.IncompleteSteps += len(s.Steps)
			}
			continue
		}
		procs = append(procs, proc{path: path, ranked: strings.HasPrefix(name, "rank-"), rank: s.Meta.Rank, pid: s.Meta.PID, world: s.Meta.WorldSize})
		measured = measured || len(s.Measured()) > 0
		warmupOnly = max(warmupOnly, len(s.Steps))
	}
	if !measured {
		// A run of no measured step is no run.
		t.WarmupOnly = warmupOnly
		return nil
	}
	slices.SortFunc(procs, func(a, b proc) int {
		switch {
		case a.ranked && !b.ranked:
			return -1
		case !a.ranked && b.ranked:
			return 1
		case a.rank != b.rank:
			return a.rank - b.rank
		}
		return a.pid - b.pid
	})
	paths := make([]string, len(procs))
	asRanks := true // the streams are the ranks 0..n-1 of one world
	allRanked, ranks, seen := true, []int{}, map[int]bool{}
	for k, p := range procs {
		paths[k] = p.path
		asRanks = asRanks && (p.ranked || len(procs) == 1) && p.rank == k && p.world == len(procs)
		allRanked = allRanked && p.ranked && !seen[p.rank]
		seen[p.rank] = true
		ranks = append(ranks, p.rank)
	}
	if !asRanks && allRanked {
		// A torchrun job some of whose ranks did not finish: not a run.
		return fmt.Errorf("ranks %v of world size %d finished their streams, not all of them: no run added; the streams are kept in %s", ranks, procs[0].world, dir)
	}
	if !asRanks {
		if paths, err = asProcesses(dir, paths); err != nil {
			return err
		}
		t.Processes = len(paths)
	}
	c, err := Collect(opt.Out, opt.Case, variantOf(opt.Policy), paths, opt.Spike, opt.Tool, append([]string{"gcjitter", "trace", "--"}, opt.Command...))
	if err != nil {
		return err
	}
	t.Runs = append(t.Runs, c)
	if err := recordTraceHost(opt.Out); err != nil {
		return err
	}
	return recordTraceCommand(opt.Out, opt.Case, opt.Command)
}

// recordTraceHost gives a results directory of traced runs, which Collect
// leaves without a host (its streams may come from anywhere), this
// host's facts: the job ran here, and its memory limit is what report's
// and advise's time to the limit reckon against.
func recordTraceHost(out string) error {
	m, err := results.ReadManifest(out)
	if err != nil {
		return err
	}
	if m.Host.Hostname != "" || m.Host.MemLimit != 0 {
		return nil
	}
	m.Host = ProbeHost(context.Background())
	if err := results.WriteManifest(out, m); err != nil {
		return err
	}
	return results.WriteBench(out, m)
}

// asProcesses writes copies of the streams as processes 0..n-1 of one
// run (process-K.jsonl under dir/job): the meta's rank and world size
// rewritten, a note naming the process it was. The originals stay.
func asProcesses(dir string, paths []string) ([]string, error) {
	jobDir := filepath.Join(dir, "job")
	if err := os.MkdirAll(jobDir, 0o755); err != nil {
		return nil, err
	}
	out := make([]string, len(paths))
	for k, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		first, rest, _ := bytes.Cut(data, []byte("\n"))
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(first, &meta); err != nil {
			return nil, &results.InputError{Msgs: []string{fmt.Sprintf("%s:1: %v", p, err)}}
		}
		var notes []string
		json.Unmarshal(meta["notes"], &notes)
		var pid, rank int
		json.Unmarshal(meta["pid"], &pid)
		json.Unmarshal(meta["rank"], &rank)
		who := fmt.Sprintf("pid %d", pid)
		if strings.HasPrefix(filepath.Base(p), "rank-") {
			who += fmt.Sprintf(", RANK %d", rank)
		}
		notes = append(notes, fmt.Sprintf("process %d of %d of the job: %s (%s)", k, len(paths), who, filepath.Base(p)))
		meta["notes"], _ = json.Marshal(notes)
		meta["rank"], _ = json.Marshal(k)
		meta["world_size"], _ = json.Marshal(len(paths))
		line, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		out[k] = filepath.Join(jobDir, fmt.Sprintf("process-%d.jsonl", k))
		if err := atomicfile.Write(out[k], append(append(line, '\n'), rest...), 0o644); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readStatuses reads the processes' status-PID.json files, by pid.
func readStatuses(dir string) []TraceStatus {
	files, _ := filepath.Glob(filepath.Join(dir, "status-*.json"))
	var out []TraceStatus
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var st TraceStatus
		if json.Unmarshal(data, &st) == nil {
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b TraceStatus) int { return a.PID - b.PID })
	return out
}

// readTraceStream reads a stream and says whether it is complete (a meta
// and an end record); s is nil when it cannot be read at all.
func readTraceStream(path string) (s *bench.Stream, complete bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	s, err = bench.ReadStream(f, path)
	if err != nil {
		return nil, false
	}
	return s, s.Meta != nil && s.Complete() && len(s.Problems) == 0
}
