package runner

import (
	"bufio"
	"bytes"
	"cmp"
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
	// Full and Young are the collections in steps InferGenerations called
	// full and young.
	Full, Young int
	Notes       []string
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
	byStart := func(a, b span) int { return cmp.Compare(a.start, b.start) }
	byEnd := func(a, b span) int { return cmp.Compare(a.end, b.end) }
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
	slices.SortFunc(gcs, func(a, b gcSpan) int { return cmp.Compare(a.start, b.start) })
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
		p.GC[i] = append(p.GC[i], bench.GCEvent{Gen: 0, PauseNS: c.end - c.start, InStep: in, GenInferred: true})
	}
	for _, p := range t.Procs {
		full, young := InferGenerations(p.GC)
		t.Full += full
		t.Young += young
	}
	return unassigned
}

// FullGap is how far the pauses of a trace's full collections must stand
// above all its other collections' for InferGenerations to call them full.
// A full collection walks every tracked object (97k after import torch on
// torch 1.13, 185k on 2.15: BENCHMARKS.md), a young one the young
// generations; but pauses are not walks alone (freeing what a collection
// finds costs too): in the shipped ci-cpu baselines the largest gen-1
// pause of a run is up to 19.8x its largest gen-0 pause (smoke's default),
// and the largest full one 11.7-110x its largest gen-1 pause. 40x, twice
// the young generations' widest measured gap, keeps gen-1 collections from
// passing for full ones; full ones nearer the young than that are left
// young (the error the notes say can be left).
const FullGap = 40

// InferGenerations labels the collections of one process of a trace that
// records no generation (its events' Gen is 0 and GenInferred set): sorted
// by pause, where the widest ratio between two neighbours is FullGap or
// more, those above it are full (Gen 2) and the others young (Gen 0: gen 0
// and 1 are not told apart). Without such a gap every collection stays
// young: its generation is unknown, and a young collection must never be
// called a full one (a full one called young is the error left, said in
// the notes). It returns the counts.
func InferGenerations(gcs [][]bench.GCEvent) (full, young int) {
	var pauses []int64
	for _, step := range gcs {
		for _, e := range step {
			if e.GenInferred {
				pauses = append(pauses, e.PauseNS)
			}
		}
	}
	if len(pauses) == 0 {
		return 0, 0
	}
	slices.Sort(pauses)
	cut := int64(-1) // the smallest full pause; none when -1
	best := float64(FullGap)
	for i := 1; i < len(pauses); i++ {
		if lo := max(pauses[i-1], 1); float64(pauses[i])/float64(lo) >= best {
			best, cut = float64(pauses[i])/float64(lo), pauses[i]
		}
	}
	for _, step := range gcs {
		for k := range step {
			e := &step[k]
			if !e.GenInferred {
				continue
			}
			if cut >= 0 && e.PauseNS >= cut {
				e.Gen = 2
				full++
			} else {
				e.Gen = 0
				young++
			}
		}
	}
	return full, young
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
	case t.Collections > 0:
		note := fmt.Sprintf("the trace records no generation: %d collections whose pauses stand %dx or more above the others' are counted as full (gen 2), the other %d as young (gen 0; gen 0 and 1 not told apart), all marked gen_inferred", t.Full, FullGap, t.Young)
		if t.Full == 0 {
			note = fmt.Sprintf("the trace records no generation, and no pauses stand %dx above the others' (what marks full collections): the generation of its %d collections is unknown; they are counted as young (gen 0) and marked gen_inferred, so none is called full", FullGap, t.Young)
		}
		if t.Source == sourceNPU {
			note += "; torch_npu keeps only pauses over its gc_detect_threshold"
		}
		t.Notes = append(t.Notes, note)
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
