package runner

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// ImportWarmup is the warm-up an import marks by default: none, because a
// profiler's schedule already keeps its wait and warm-up steps out of the
// trace, and its traces hold few steps (often 1 to 5).
const ImportWarmup = 0

// Where a trace came from decides what its notes can say.
const (
	sourceKineto = "torch.profiler"
	sourceLegacy = "torch.profiler, legacy export"
	sourceNPU    = "torch_npu"
)

// traceEvent is one Chrome-trace event as profilers write it: ts and dur
// in µs, numbers or (torch_npu's ts) strings; pid and tid numbers or
// strings.
type traceEvent struct {
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Ph   string          `json:"ph"`
	TS   json.RawMessage `json:"ts"`
	Dur  json.RawMessage `json:"dur"`
	PID  json.RawMessage `json:"pid"`
	TID  json.RawMessage `json:"tid"`
	Args json.RawMessage `json:"args"`
}

// span is an event's interval in ns.
type span struct{ start, end int64 }

// TraceProcess is one process of a trace: its steps and the collections
// that fell in them or between them.
type TraceProcess struct {
	PID   string
	Steps []span
	// GC holds, per step, the collections that started in it (InStep) or
	// in the gap before it.
	GC [][]bench.GCEvent
	// Between counts the collections that started between two steps.
	Between int
}

// ImportedTrace is a profiler trace read as processes of steps and
// collections.
type ImportedTrace struct {
	Path   string
	Source string
	// Format names what the steps came from.
	Format string
	// Rank and WorldSize are the job's (-1 and 0: the trace does not say);
	// RankFrom says where they were read.
	Rank, WorldSize int
	RankFrom        string
	Procs           []*TraceProcess
	// Collections counts every collection in the trace; Outside those
	// before the first step or after the last, which no step holds.
	Collections, Outside int
	Notes                []string
}

var (
	profilerStep = regexp.MustCompile(`^ProfilerStep#\d+$`)
	// A rank in a file name, as tensorboard_trace_handler's worker names
	// and launchers' per-rank files carry it: rank-1, rank_1, worker1.
	rankInName = regexp.MustCompile(`(?i)(?:^|[^a-z])(?:rank|worker)[-_]?(\d+)`)
	// torch_npu's trace_view.json names its device timelines so.
	npuProcesses = []string{"Ascend Hardware", "CANN", "AscendCL"}
)

// npuMarked says whether ev marks a trace as torch_npu's, whatever the
// file's name: a ts written as a string (torch_npu writes every event's so,
// a CPU-only trace's too; Kineto and the legacy export write numbers), an
// Ascend device timeline, or torch_npu's GC event.
func npuMarked(ev *traceEvent) bool {
	switch {
	case len(ev.TS) > 0 && ev.TS[0] == '"':
		return true
	case ev.Ph == "M" && ev.Name == "process_name":
		var a struct {
			Name string `json:"name"`
		}
		return json.Unmarshal(ev.Args, &a) == nil && slices.Contains(npuProcesses, a.Name)
	}
	return ev.Ph == "X" && ev.Name == "GC" && ev.Cat == "GC"
}

// ReadTrace reads a Chrome-trace JSON file (gzipped or not; a top-level
// array or an object with traceEvents) written by torch.profiler (Kineto,
// or the legacy profiler's export_chrome_trace) or by torch_npu's profiler
// (trace_view.json, known by its content: npuMarked). Steps are the host-side ProfilerStep#N spans when the
// trace has them, else the intervals between the ends of host-side
// Optimizer.step spans; the device-side copies (category gpu_*) are never
// steps. A trace with steps in several processes (a merged trace) is read
// as several processes. Collections are torch_npu's "GC" events
// (gc_detect_threshold) and Kineto's "Python GC" events (torch 2.9+,
// record_python_gc_info). Every error names the file.
func ReadTrace(path string) (*ImportedTrace, error) {
	t, err := readTrace(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return t, nil
}

// gcSpan is a collection and the process and thread it ran in.
type gcSpan struct {
	span
	pid, tid string
}

func readTrace(path string) (*ImportedTrace, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("no such file")
		}
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	var gz *errReader
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, gzipProblem(err)
		}
		defer zr.Close()
		gz = &errReader{r: zr}
		r = gz
	}
	t := &ImportedTrace{Path: path, Source: sourceKineto, Rank: -1}
	profSteps, optSteps := map[string][]span{}, map[string][]span{}
	var gcs []gcSpan
	n := 0
	top, err := eachEvent(json.NewDecoder(r), func(ev *traceEvent) error {
		n++
		if t.Source != sourceNPU && npuMarked(ev) {
			t.Source = sourceNPU
		}
		if ev.Ph != "X" {
			return nil
		}
		pid := rawID(ev.PID)
		if pid == "CPU functions" || pid == "CPU Functions" {
			t.Source = sourceLegacy
		}
		host := !strings.HasPrefix(ev.Cat, "gpu_")
		isGC := ev.Name == "GC" && ev.Cat == "GC" || ev.Name == "Python GC"
		step := host && profilerStep.MatchString(ev.Name)
		opt := host && strings.HasPrefix(ev.Name, "Optimizer.step#")
		if !isGC && !step && !opt {
			return nil
		}
		s, ok, err := ev.span()
		if err != nil {
			return fmt.Errorf("event %d (%s): %v", n, ev.Name, err)
		}
		switch {
		case !ok:
		case isGC:
			gcs = append(gcs, gcSpan{s, pid, rawID(ev.TID)})
		case step:
			profSteps[pid] = append(profSteps[pid], s)
		case opt:
			optSteps[pid] = append(optSteps[pid], s)
		}
		return nil
	})
	if err == nil && gz != nil {
		// The trace may end before its gzip stream does: a file cut short
		// after the JSON still is one.
		_, err = io.Copy(io.Discard, gz)
	}
	if err != nil {
		if gz != nil && gz.err != nil {
			return nil, gzipProblem(gz.err)
		}
		return nil, err
	}
	if d := top.dist; d != nil && d.Rank != nil {
		t.Rank, t.RankFrom = *d.Rank, "distributedInfo"
		if d.WorldSize != nil {
			t.WorldSize = *d.WorldSize
		}
	} else if m := rankInName.FindStringSubmatch(filepath.Base(path)); m != nil {
		t.Rank, _ = strconv.Atoi(m[1])
		t.RankFrom = "file name"
	}
	byStart := func(a, b span) int { return cmpInt(a.start, b.start) }
	byEnd := func(a, b span) int { return cmpInt(a.end, b.end) }
	switch {
	case len(profSteps) > 0:
		t.Format = "ProfilerStep spans"
		for _, pid := range pidOrder(profSteps) {
			steps := profSteps[pid]
			slices.SortFunc(steps, byStart)
			t.Procs = append(t.Procs, &TraceProcess{PID: pid, Steps: slices.Compact(steps)})
		}
	default:
		// As gcjitter trace does: a step runs from one optimizer step's end
		// to the next one's.
		t.Format = "Optimizer.step span ends"
		for _, pid := range pidOrder(optSteps) {
			ends := optSteps[pid]
			slices.SortFunc(ends, byEnd)
			ends = slices.CompactFunc(ends, func(a, b span) bool { return a.end == b.end })
			p := &TraceProcess{PID: pid}
			for i := 1; i < len(ends); i++ {
				p.Steps = append(p.Steps, span{ends[i-1].end, ends[i].end})
			}
			if len(p.Steps) > 0 {
				t.Procs = append(t.Procs, p)
			}
		}
	}
	if len(t.Procs) == 0 {
		return nil, errors.New("no steps: the trace has no host-side ProfilerStep#N spans (torch.profiler writes them when given a schedule and prof.step() is called) and no process with 2 or more host-side Optimizer.step spans")
	}
	for _, p := range t.Procs {
		for i, s := range p.Steps {
			if s.end < s.start {
				return nil, fmt.Errorf("step %d of process %s ends before it starts", i, p.PID)
			}
		}
	}
	t.Collections = len(gcs)
	unassigned := t.assignGC(gcs)
	t.notes(unassigned)
	return t, nil
}

// assignGC puts each collection in the step it started in, or in the gap
// before a step (a collection between steps, as the worker records one),
// of its own process; it returns the collections of a multi-process trace
// whose process has no steps.
func (t *ImportedTrace) assignGC(gcs []gcSpan) (unassigned int) {
	slices.SortFunc(gcs, func(a, b gcSpan) int { return cmpInt(a.start, b.start) })
	for _, p := range t.Procs {
		p.GC = make([][]bench.GCEvent, len(p.Steps))
	}
	for _, c := range gcs {
		p := t.Procs[0]
		if len(t.Procs) > 1 {
			// Kineto's events carry the process's pid; torch_npu's carry
			// the OS pid as tid and a made-up pid.
			i := slices.IndexFunc(t.Procs, func(p *TraceProcess) bool { return p.PID == c.pid || p.PID == c.tid })
			if i < 0 {
				unassigned++
				continue
			}
			p = t.Procs[i]
		}
		i, _ := slices.BinarySearchFunc(p.Steps, c.start, func(s span, at int64) int {
			if s.end <= at {
				return -1
			}
			return 1
		})
		if i == len(p.Steps) || c.start < p.Steps[0].start {
			t.Outside++
			continue
		}
		in := c.start >= p.Steps[i].start
		if !in {
			p.Between++
		}
		p.GC[i] = append(p.GC[i], bench.GCEvent{Gen: 2, PauseNS: c.end - c.start, InStep: in, GenInferred: true})
	}
	return unassigned
}

func (t *ImportedTrace) notes(unassigned int) {
	base := filepath.Base(t.Path)
	t.Notes = append(t.Notes, fmt.Sprintf("imported from %s (%s): steps from %s", base, t.Source, t.Format))
	if len(t.Procs) > 1 {
		pids := make([]string, len(t.Procs))
		for i, p := range t.Procs {
			pids[i] = p.PID
		}
		t.Notes = append(t.Notes, fmt.Sprintf("%s holds the steps of %d processes (pids %s), imported as the ranks of one run in that order", base, len(t.Procs), strings.Join(pids, ", ")))
	}
	switch {
	case t.Collections > 0 && t.Source == sourceNPU:
		t.Notes = append(t.Notes, "the trace records no generation: its collections are counted as gen-2 and marked gen_inferred; torch_npu keeps only pauses over its gc_detect_threshold")
	case t.Collections > 0:
		t.Notes = append(t.Notes, "the trace records no generation: its collections are counted as gen-2 and marked gen_inferred")
	case t.Source == sourceNPU:
		t.Notes = append(t.Notes, "the trace has no GC events: torch_npu records them when experimental_config sets gc_detect_threshold")
	default:
		t.Notes = append(t.Notes, "the trace has no GC events: torch.profiler records them from torch 2.9 on, with experimental_config=_ExperimentalConfig(record_python_gc_info=True) and with_stack=True (the option alone records nothing)")
	}
	if t.Outside > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d collections of %s started before its first step or after its last: in no step, left out", t.Outside, base))
	}
	if unassigned > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d collections of %s ran in a process without steps: left out", unassigned, base))
	}
}

// Between counts the trace's collections between two steps.
func (t *ImportedTrace) Between() int {
	n := 0
	for _, p := range t.Procs {
		n += p.Between
	}
	return n
}

// Steps is the number of steps of the trace's first process.
func (t *ImportedTrace) Steps() int { return len(t.Procs[0].Steps) }

// topLevel is what a trace says outside its events.
type topLevel struct {
	dist *struct {
		Rank      *int `json:"rank"`
		WorldSize *int `json:"world_size"`
	}
}

// eachEvent calls fn for every element of the top-level array, or of the
// traceEvents array of a top-level object, decoding one event at a time.
// Its errors say what the file is instead of a decoder's words.
func eachEvent(dec *json.Decoder, fn func(*traceEvent) error) (topLevel, error) {
	var top topLevel
	notTrace := func(what string) error { return fmt.Errorf("not a Chrome/Kineto trace (%s)", what) }
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return top, notTrace("the file is empty")
	}
	if err != nil {
		return top, jsonProblem(err)
	}
	events := func() error {
		for i := 1; dec.More(); i++ {
			var ev traceEvent
			if err := dec.Decode(&ev); err != nil {
				var te *json.UnmarshalTypeError
				switch {
				case errors.As(err, &te) && te.Field == "":
					return notTrace(fmt.Sprintf("event %d is a JSON %s, not an object", i, te.Value))
				case errors.As(err, &te):
					return fmt.Errorf("event %d: %q is a JSON %s", i, te.Field, te.Value)
				}
				return jsonProblem(err)
			}
			if err := fn(&ev); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return jsonProblem(err)
	}
	switch tok {
	case json.Delim('['):
		return top, events()
	case json.Delim('{'):
		seen := false
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return top, jsonProblem(err)
			}
			switch key {
			case "traceEvents":
				if t, err := dec.Token(); err != nil {
					return top, jsonProblem(err)
				} else if t != json.Delim('[') {
					return top, notTrace("traceEvents is not an array")
				}
				if err := events(); err != nil {
					return top, err
				}
				seen = true
			case "distributedInfo":
				// Read leniently: a rank that is not a number is no rank.
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return top, jsonProblem(err)
				}
				if json.Unmarshal(raw, &top.dist) != nil {
					top.dist = nil
				}
			default:
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return top, jsonProblem(err)
				}
			}
		}
		if !seen {
			return top, notTrace("a JSON object without traceEvents")
		}
		return top, nil
	}
	return top, notTrace(fmt.Sprintf("a JSON %s, want an array of events or an object with traceEvents", jsonKind(tok)))
}

func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// jsonProblem says what a decoder error means for a trace file.
func jsonProblem(err error) error {
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("truncated JSON: the file ends inside the trace (was it copied or written only in part?)")
	case errors.As(err, &se):
		return fmt.Errorf("not valid JSON at byte %d: %v", se.Offset, err)
	}
	return err
}

// gzipProblem says what a gzip reader's error means.
func gzipProblem(err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("truncated gzip: the file ends inside its compressed data (was it copied or written only in part?)")
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
		return fmt.Errorf("corrupt gzip: %v", err)
	}
	return fmt.Errorf("unreadable gzip: %v", err)
}

// errReader keeps its reader's first error other than io.EOF, so that a
// JSON error can be told from the gzip error that caused it.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// rawID is a pid or tid as text, whether the trace wrote it as a number
// or a string.
func rawID(raw json.RawMessage) string {
	s := string(raw)
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// pidOrder is the processes in pid order, numerically where the pids are
// numbers.
func pidOrder[V any](m map[string]V) []string {
	pids := make([]string, 0, len(m))
	for pid := range m {
		pids = append(pids, pid)
	}
	slices.SortFunc(pids, func(a, b string) int {
		x, errA := strconv.ParseInt(a, 10, 64)
		y, errB := strconv.ParseInt(b, 10, 64)
		if errA == nil && errB == nil {
			return cmpInt(x, y)
		}
		return strings.Compare(a, b)
	})
	return pids
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// span is the event's interval in ns; ok is false for an event without a
// time.
func (ev *traceEvent) span() (span, bool, error) {
	ts, ok, err := micros(ev.TS)
	if err != nil || !ok {
		return span{}, false, err
	}
	dur, _, err := micros(ev.Dur)
	if err != nil {
		return span{}, false, err
	}
	if dur < 0 {
		return span{}, false, fmt.Errorf("negative dur %s", ev.Dur)
	}
	start := int64(ts * 1e3)
	return span{start, start + int64(dur*1e3)}, true, nil
}

// micros reads a time in µs written as a number or as a string.
func micros(raw json.RawMessage) (float64, bool, error) {
	s := strings.Trim(string(raw), `"`)
	if s == "" || s == "null" {
		return 0, false, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false, fmt.Errorf("bad time %s", raw)
	}
	return v, true, nil
}

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
