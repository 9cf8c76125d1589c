package runner

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// ImportVariant is the variant name of a run imported from a profiler
// trace.
const ImportVariant = "imported"

// traceEvent is one Chrome-trace event as profilers write it: ts and dur
// in µs, numbers or (torch_npu's ts) strings; pid and tid numbers or
// strings.
type traceEvent struct {
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Ph   string          `json:"ph"`
	TS   json.RawMessage `json:"ts"`
	Dur  json.RawMessage `json:"dur"`
}

// span is an event's interval in ns.
type span struct{ start, end int64 }

// ImportedTrace is a profiler trace read as steps and collections.
type ImportedTrace struct {
	Path string
	// Format names what the steps and collections came from.
	Format string
	Steps  []span
	GC     []span
	// Notes say what the trace lacked (no generations, a threshold).
	Notes []string
}

var profilerStep = regexp.MustCompile(`^ProfilerStep#\d+$`)

// ReadTrace reads a Chrome-trace JSON file (gzipped or not; a top-level
// array or an object with traceEvents) written by torch.profiler (Kineto,
// or the legacy profiler's export_chrome_trace) or by torch_npu's profiler
// (trace_view.json). Steps are the ProfilerStep#N spans when the trace has
// them, else the intervals between the ends of Optimizer.step spans;
// collections are torch_npu's "GC" events (gc_detect_threshold) and
// Kineto's "Python GC" events (torch 2.9+, record_python_gc_info).
func ReadTrace(path string) (*ImportedTrace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		defer gz.Close()
		r = gz
	}
	t := &ImportedTrace{Path: path}
	var profSteps, optSteps []span
	err = eachEvent(json.NewDecoder(r), func(ev *traceEvent) error {
		if ev.Ph != "X" {
			return nil
		}
		s, ok, err := ev.span()
		if err != nil || !ok {
			return err
		}
		switch {
		case profilerStep.MatchString(ev.Name) && !strings.HasPrefix(ev.Cat, "gpu"):
			profSteps = append(profSteps, s)
		case strings.HasPrefix(ev.Name, "Optimizer.step#"):
			optSteps = append(optSteps, s)
		case ev.Name == "GC" && ev.Cat == "GC", ev.Name == "Python GC":
			t.GC = append(t.GC, s)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	byStart := func(a, b span) int { return int(a.start - b.start) }
	slices.SortFunc(profSteps, byStart)
	slices.SortFunc(optSteps, byStart)
	slices.SortFunc(t.GC, byStart)
	profSteps = slices.Compact(profSteps)
	switch {
	case len(profSteps) > 0:
		t.Format, t.Steps = "ProfilerStep spans", profSteps
	case len(optSteps) > 1:
		// As gcjitter trace does: a step runs from one optimizer step's end
		// to the next one's.
		t.Format = "Optimizer.step span ends"
		for i := 1; i < len(optSteps); i++ {
			t.Steps = append(t.Steps, span{optSteps[i-1].end, optSteps[i].end})
		}
	default:
		return nil, fmt.Errorf("%s: no steps: the trace has no ProfilerStep#N spans (torch.profiler writes them when given a schedule and prof.step() is called) and fewer than 2 Optimizer.step spans", path)
	}
	t.Notes = append(t.Notes, fmt.Sprintf("imported from %s: steps from %s", filepath.Base(path), t.Format))
	if len(t.GC) > 0 {
		t.Notes = append(t.Notes, "the trace records no generation: its collections are counted as gen-2 and marked gen_inferred; torch_npu keeps only pauses over its gc_detect_threshold")
	} else {
		t.Notes = append(t.Notes, "the trace has no GC events (torch_npu: experimental_config gc_detect_threshold; torch 2.9+: record_python_gc_info)")
	}
	return t, nil
}

// eachEvent calls fn for every element of the top-level array, or of the
// traceEvents array of a top-level object, decoding one event at a time.
func eachEvent(dec *json.Decoder, fn func(*traceEvent) error) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not a JSON trace: %v", err)
	}
	events := func() error {
		for dec.More() {
			var ev traceEvent
			if err := dec.Decode(&ev); err != nil {
				return fmt.Errorf("bad trace event: %v", err)
			}
			if err := fn(&ev); err != nil {
				return err
			}
		}
		return nil
	}
	switch tok {
	case json.Delim('['):
		return events()
	case json.Delim('{'):
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			if key != "traceEvents" {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return err
				}
				continue
			}
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return fmt.Errorf("traceEvents is not an array")
			}
			if err := events(); err != nil {
				return err
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("not a Chrome trace: want a JSON array or an object with traceEvents")
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

// Stream is the trace as a gcjitter record stream: one step record per
// step with the collections that started in it.
func (t *ImportedTrace) Stream(warmup int) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	measured := max(len(t.Steps)-warmup, 0)
	enc.Encode(map[string]any{"type": "meta", "schema": bench.SchemaVersion, "python": map[string]any{},
		"device": map[string]any{"kind": "unknown"}, "gc": map[string]any{"thresholds": []int{}},
		"policy": ImportVariant, "model": ImportVariant, "sizes": map[string]any{}, "garbage": map[string]any{"pattern": ImportVariant},
		"allocator": map[string]any{}, "rank": 0, "world_size": 1, "steps": measured, "warmup": warmup, "recorder": len(t.GC) > 0,
		"notes": t.Notes})
	g := 0
	var counts [3]int64
	for i, s := range t.Steps {
		events := []map[string]any{}
		for g < len(t.GC) && t.GC[g].start < s.end {
			if t.GC[g].start >= s.start {
				events = append(events, map[string]any{"gen": 2, "ns": t.GC[g].end - t.GC[g].start, "collected": 0, "uncollectable": 0,
					"in_step": true, "manual": false, "gen_inferred": true})
				counts[2]++
			}
			g++
		}
		enc.Encode(map[string]any{"type": "step", "i": i, "warmup": i < warmup, "ns": s.end - s.start, "gc": events,
			"lost": 0, "sched": false, "count": []int{0, 0, 0}, "rss": nil, "dev_mem": nil})
	}
	enc.Encode(map[string]any{"type": "end", "steps": len(t.Steps), "wall_ns": 0, "gc_stats": []any{}, "recorded": counts[:], "freeze_count": 0})
	return b.Bytes()
}

// ImportTrace adds a profiler trace to the results directory out as a run
// of variant "imported" of case caseName.
func ImportTrace(out, caseName, path string, warmup int, rule stats.SpikeRule, tool string) (*Collected, *ImportedTrace, error) {
	t, err := ReadTrace(path)
	if err != nil {
		return nil, nil, &results.InputError{Msgs: []string{err.Error()}}
	}
	dir := filepath.Join(out, "trace", "import-"+time.Now().UTC().Format("20060102-150405.000000000"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	stream := filepath.Join(dir, "rank-0.jsonl")
	if err := os.WriteFile(stream, t.Stream(warmup), 0o644); err != nil {
		return nil, nil, err
	}
	c, err := Collect(out, caseName, ImportVariant, []string{stream}, rule, tool, []string{"gcjitter", "import", path})
	return c, t, err
}
