package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// SchemaVersion is the record-stream version this package reads and the
// worker writes (the worker's SCHEMA). Bump both together, and only for a
// change an old reader would misread.
const SchemaVersion = 1

// MaxLineBytes bounds one record line. A meta record is a few kilobytes and a
// step with thousands of GC events well under a megabyte; anything longer is
// a broken worker, reported as a syntax error instead of exhausting memory.
const MaxLineBytes = 16 << 20

// A Record is one line of the stream: *Meta, *Step, *End, *ErrorRecord, or a
// *SyntaxError for a line that could not be read.
type Record interface{ recordType() string }

// Meta opens every stream: where and how the run was made.
type Meta struct {
	Schema    int               `json:"schema"`
	Python    PythonInfo        `json:"python"`
	Torch     string            `json:"torch,omitempty"`
	TorchNPU  string            `json:"torch_npu,omitempty"`
	CUDA      string            `json:"cuda,omitempty"`
	CANN      string            `json:"cann,omitempty"`
	Device    DeviceInfo        `json:"device"`
	GC        GCState           `json:"gc"`
	Policy    string            `json:"policy"`
	Model     string            `json:"model"`
	Sizes     Sizes             `json:"sizes"`
	Garbage   GarbageInfo       `json:"garbage"`
	Allocator map[string]string `json:"allocator"`
	Threads   int               `json:"threads"`
	// Affinity is the CPUs the worker could run on (sched_getaffinity);
	// nil where the platform or the stream's writer does not say.
	Affinity  []int    `json:"affinity,omitempty"`
	Seed      int64    `json:"seed"`
	HashSeed  string   `json:"hash_seed"`
	PID       int      `json:"pid"`
	Rank      int      `json:"rank"`
	WorldSize int      `json:"world_size"`
	Host      string   `json:"host"`
	CPUModel  string   `json:"cpu_model"`
	Steps     int      `json:"steps"`
	Warmup    int      `json:"warmup"`
	Recorder  bool     `json:"recorder"`
	Notes     []string `json:"notes"`
	// Start is how the process started: "cold" (an interpreter of its
	// own) or "warm" (forked from a server that imported torch once:
	// docs/worker.md); "" in streams from workers older than warm starts.
	Start string `json:"start,omitempty"`

	// ComputeScale and DeviceWaitMS are the worker's --compute-scale and
	// --device-wait-ms (Sizes already hold the scaled batch or work); 0 in
	// streams from workers older than the flags.
	ComputeScale float64 `json:"compute_scale,omitempty"`
	DeviceWaitMS float64 `json:"device_wait_ms,omitempty"`
	// EmulatedDevice is the emulated asynchronous device's configuration
	// as the worker ran it; nil without one.
	EmulatedDevice *EmulatedDeviceInfo `json:"emulated_device,omitempty"`

	// Heap is, in a traced stream (gcjitter trace), the objects the
	// collector tracked per generation when the first step ended: the
	// script's long-lived heap is generation 2's. Nil from the worker.
	Heap []int64 `json:"heap,omitempty"`
}

// EmulatedDeviceInfo is the emulated device a run used: each kernel's
// device time, kernels per step, the launch queue's depth and the mid-step
// syncs.
type EmulatedDeviceInfo struct {
	KernelNS   int64 `json:"kernel_ns"`
	Kernels    int   `json:"kernels"`
	QueueDepth int   `json:"queue_depth"`
	MidSyncs   int   `json:"mid_syncs"`
}

// PythonInfo identifies the interpreter; Version plus Build is the key a
// deterministic GC schedule depends on.
type PythonInfo struct {
	Version        string `json:"version"`
	Implementation string `json:"implementation"`
	Build          string `json:"build"`
	Compiler       string `json:"compiler"`
	Executable     string `json:"executable"`
	FreeThreaded   bool   `json:"free_threaded"`
}

// DeviceInfo is the device the model ran on.
type DeviceInfo struct {
	Kind  string `json:"kind"` // cpu, cuda or npu
	Index int    `json:"index"`
	Name  string `json:"name"`
}

// GCState is the collector's configuration once the policy was applied.
type GCState struct {
	Enabled     bool      `json:"enabled"`
	Thresholds  []int     `json:"thresholds"`
	FreezeCount int       `json:"freeze_count"`
	Stats       []GenStat `json:"stats"`
}

// GenStat is one generation's entry of gc.get_stats().
type GenStat struct {
	Collections   int64 `json:"collections"`
	Collected     int64 `json:"collected"`
	Uncollectable int64 `json:"uncollectable"`
}

// Sizes are the model's size parameters; each model uses some of them.
type Sizes struct {
	Batch  int `json:"batch"`
	Hidden int `json:"hidden"`
	Layers int `json:"layers"`
	Heads  int `json:"heads"`
	Seq    int `json:"seq"`
	Vocab  int `json:"vocab"`
	Image  int `json:"image"`
	Work   int `json:"work"`
}

// GarbageInfo describes the cyclic garbage made per step and the heap kept.
type GarbageInfo struct {
	Pattern   string `json:"pattern"`
	Cycles    int    `json:"cycles"`
	Objects   int    `json:"objects"`
	LongLived int    `json:"long_lived"`
	Retain    int    `json:"retain"`
	// LongLivedRefs: each long-lived object a list of this many
	// references (0: plain objects).
	LongLivedRefs int `json:"long_lived_refs,omitempty"`
	// Every: the garbage is made on one step in this many (0 or 1: every).
	Every int `json:"every,omitempty"`
	// LeakKiBPerStep: KiB kept alive for good after every step (a planted
	// leak).
	LeakKiBPerStep int `json:"leak_kib_per_step,omitempty"`
}

// Step is one training step. DurationNS spans the step, its garbage, the
// policy's step-boundary action and the device synchronize.
type Step struct {
	Index      int       `json:"i"`
	Warmup     bool      `json:"warmup"`
	DurationNS int64     `json:"ns"`
	GC         []GCEvent `json:"gc"`
	Lost       int       `json:"lost"`  // events dropped because the worker's buffer was full
	Scheduled  bool      `json:"sched"` // the policy ran a scheduled collection in this step
	Count      [3]int64  `json:"count"` // gc.get_count() after the step
	RSS        *int64    `json:"rss"`
	DeviceMem  *int64    `json:"dev_mem"`
	// DeviceTiming is the device's side of the step, present when the
	// worker knows it: an emulated asynchronous device, or CUDA/NPU events.
	*DeviceTiming
	// OwnNS is, in a multi-rank run, the rank's own part of the step: from
	// its start to the collective, so DurationNS-OwnNS is its wait for the
	// slowest rank. Nil in single-rank runs.
	OwnNS *int64 `json:"own,omitempty"`
}

// DeviceTiming is how the step met the device, all in ns of the host's
// clock: the device's busy time inside the step, its idle time (the step's
// wall time minus busy), the idle time that fell inside the step's GC
// pauses, the host's lead at the step's final sync (device work still
// queued when the host got there: the slack a pause can hide in), and the
// device's lead when the step's longest collection began (-1 when no
// collection ran in the step).
type DeviceTiming struct {
	BusyNS   int64 `json:"dev_busy"`
	IdleNS   int64 `json:"dev_idle"`
	IdleGCNS int64 `json:"dev_idle_gc"`
	SlackNS  int64 `json:"dev_slack"`
	LeadGCNS int64 `json:"dev_lead_gc"`
}

// GCEvent is one collection, as seen by gc.callbacks.
type GCEvent struct {
	Gen           int   `json:"gen"`
	PauseNS       int64 `json:"ns"`
	Collected     int64 `json:"collected"`
	Uncollectable int64 `json:"uncollectable"`
	// InStep is false for a collection that ran between two steps (while
	// the harness wrote the previous record); it is not in DurationNS.
	InStep bool `json:"in_step"`
	Manual bool `json:"manual"` // started by the policy's gc.collect, not by allocation
	// GenInferred: the source recorded no generation (an imported profiler
	// trace); Gen is runner.InferGenerations' label: 2 only for pauses far
	// above all the others, else 0.
	GenInferred bool `json:"gen_inferred,omitempty"`
	// Objects is, in a census run (--census), the objects in the
	// generations the collection walked, counted at its start; 0
	// otherwise.
	Objects int64 `json:"objects,omitempty"`
	// Candidates and DurationNS are, where the interpreter reports them
	// (CPython 3.15's gc.callbacks info), the objects the collection
	// examined and its own measure of its duration; nil elsewhere.
	Candidates *int64 `json:"candidates,omitempty"`
	DurationNS *int64 `json:"duration_ns,omitempty"`
}

// End closes a stream that completed.
type End struct {
	Steps  int   `json:"steps"`
	WallNS int64 `json:"wall_ns"`
	// GCStats is the change of gc.get_stats() over the loop, per generation:
	// counted by the interpreter, with or without the recorder.
	GCStats []GenStat `json:"gc_stats"`
	// Recorded is the recorder's count of collections per generation (nil
	// when the recorder was off).
	Recorded    []int64 `json:"recorded"`
	FreezeCount int     `json:"freeze_count"`
	// Heap is, in a traced stream, the objects the collector tracked per
	// generation when recording ended (nil from the worker).
	Heap []int64 `json:"heap,omitempty"`
}

// ErrorRecord ends a stream whose worker failed; Kind is usage, runtime or
// interrupted.
type ErrorRecord struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// SyntaxError is a line that is not a valid record. Reading goes on.
type SyntaxError struct {
	FileName string
	Line     int
	Msg      string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.FileName, e.Line, e.Msg) }

func (*Meta) recordType() string        { return "meta" }
func (*Step) recordType() string        { return "step" }
func (*End) recordType() string         { return "end" }
func (*ErrorRecord) recordType() string { return "error" }
func (*SyntaxError) recordType() string { return "syntax-error" }

// Reader reads a record stream, modelled on bufio.Scanner:
//
//	r := bench.NewReader(f, "run-3.jsonl")
//	for r.Scan() {
//		switch rec := r.Record().(type) { ... }
//	}
//	if err := r.Err(); err != nil { ... } // I/O errors only
//
// It checks what a consumer would otherwise trip over later: the first record
// is a meta of a supported schema, step indices increase by one, durations
// are finite and not negative, nothing follows end or error.
type Reader struct {
	br       *bufio.Reader
	fileName string
	line     int
	rec      Record
	err      error

	sawMeta  bool
	done     bool // an end or error record was read
	nextStep int
	// pending is a record to return at the next Scan: the step that
	// follows a gap, after the gap's problem.
	pending Record
}

// NewReader reads records from r; fileName is used in error messages.
func NewReader(r io.Reader, fileName string) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), fileName: fileName}
}

// Scan advances to the next record. It returns false at the end of input or
// on an I/O error.
func (r *Reader) Scan() bool {
	if r.pending != nil {
		r.rec, r.pending = r.pending, nil
		return true
	}
	for {
		line, tooLong, err := r.readLine()
		if err != nil {
			if err != io.EOF {
				r.err = err
			}
			return false
		}
		r.line++
		if tooLong {
			r.rec = r.syntaxf("record longer than %d bytes", MaxLineBytes)
			return true
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r.rec = r.parse(line)
		return true
	}
}

// Record returns the record Scan read. It is valid until the next Scan.
func (r *Reader) Record() Record { return r.rec }

// Err returns the first I/O error. Bad lines are records, not errors.
func (r *Reader) Err() error { return r.err }

// Line is the line number of the current record.
func (r *Reader) Line() int { return r.line }

// readLine returns the next line without its newline. A line longer than
// MaxLineBytes is consumed and reported as tooLong. A last line without a
// newline (a worker killed mid-write) is returned like any other line and
// fails to parse if it is incomplete.
func (r *Reader) readLine() (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxLineBytes+1 {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(buf) > 0 || tooLong):
			return bytes.TrimSuffix(buf, []byte("\n")), tooLong, nil
		case err != nil:
			return nil, false, err
		}
		return bytes.TrimSuffix(buf, []byte("\n")), tooLong, nil
	}
}

func (r *Reader) syntaxf(format string, args ...any) *SyntaxError {
	return &SyntaxError{FileName: r.fileName, Line: r.line, Msg: fmt.Sprintf(format, args...)}
}

func (r *Reader) parse(line []byte) Record {
	if r.sawMeta && !r.done && bytes.HasPrefix(line, []byte(`{"type":"step",`)) {
		var s Step
		if parseStepFast(line, &s) {
			return r.checkStep(&s)
		}
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return r.syntaxf("not a JSON record: %v", jsonErrText(err))
	}
	if r.done {
		return r.syntaxf("%q record after the stream ended", head.Type)
	}
	if !r.sawMeta && head.Type != "meta" && head.Type != "error" {
		return r.syntaxf("%q record before the meta record", head.Type)
	}
	switch head.Type {
	case "meta":
		var m Meta
		if err := json.Unmarshal(line, &m); err != nil {
			return r.syntaxf("bad meta record: %v", jsonErrText(err))
		}
		if r.sawMeta {
			return r.syntaxf("second meta record")
		}
		if m.Schema != SchemaVersion {
			return r.syntaxf("record schema version %d, this gcjitter reads version %d: use the gcjitter that wrote these records", m.Schema, SchemaVersion)
		}
		r.sawMeta = true
		return &m
	case "step":
		var s Step
		if err := json.Unmarshal(line, &s); err != nil {
			return r.syntaxf("bad step record: %v", jsonErrText(err))
		}
		return r.checkStep(&s)
	case "end":
		var e End
		if err := json.Unmarshal(line, &e); err != nil {
			return r.syntaxf("bad end record: %v", jsonErrText(err))
		}
		r.done = true
		return &e
	case "error":
		var e ErrorRecord
		if err := json.Unmarshal(line, &e); err != nil {
			return r.syntaxf("bad error record: %v", jsonErrText(err))
		}
		r.done = true
		return &e
	case "":
		return r.syntaxf("record without a type")
	default:
		return r.syntaxf("unknown record type %q", head.Type)
	}
}

// checkStep enforces what consumers rely on: steps in order, durations and
// pauses not negative, generations 0 to 2.
func (r *Reader) checkStep(s *Step) Record {
	if s.Index < r.nextStep {
		return r.syntaxf("step %d where step %d was due (steps out of order or repeated)", s.Index, r.nextStep)
	}
	if s.Index > r.nextStep {
		// The steps due were lost or unreadable (a bad line reported on its
		// own): report the gap and keep this step, so that one bad line is
		// one or two problems, not a rejection of every step after it.
		gap := r.syntaxf("steps %d to %d missing before step %d", r.nextStep, s.Index-1, s.Index)
		if s.Index == r.nextStep+1 {
			gap = r.syntaxf("step %d missing before step %d", r.nextStep, s.Index)
		}
		r.nextStep = s.Index
		r.pending = r.checkStep(s)
		return gap
	}
	// The index was the one due: a step with bad values is rejected, but
	// the steps after it are still in order.
	r.nextStep++
	if s.DurationNS < 0 {
		return r.syntaxf("step %d: negative duration %d ns", s.Index, s.DurationNS)
	}
	for _, e := range s.GC {
		if e.Gen < 0 || e.Gen > 2 || e.PauseNS < 0 {
			return r.syntaxf("step %d: bad GC event (generation %d, pause %d ns)", s.Index, e.Gen, e.PauseNS)
		}
	}
	return s
}

// jsonErrText shortens encoding/json's messages, which quote Go type names,
// to what a user can act on.
func jsonErrText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q: want %s, got JSON %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}

// Stream is a whole record stream read into memory.
type Stream struct {
	Meta  *Meta
	Steps []*Step
	End   *End
	Error *ErrorRecord
	// Problems are the stream's bad lines, in order.
	Problems []*SyntaxError
}

// ReadStream reads every record of r. Only I/O errors are returned; bad lines
// are collected in Problems so that what was measured is never thrown away.
func ReadStream(r io.Reader, fileName string) (*Stream, error) {
	rd := NewReader(r, fileName)
	s := new(Stream)
	for rd.Scan() {
		switch rec := rd.Record().(type) {
		case *Meta:
			s.Meta = rec
		case *Step:
			s.Steps = append(s.Steps, rec)
		case *End:
			s.End = rec
		case *ErrorRecord:
			s.Error = rec
		case *SyntaxError:
			s.Problems = append(s.Problems, rec)
		}
	}
	return s, rd.Err()
}

// Complete reports whether the worker finished: a meta, every step and an end.
func (s *Stream) Complete() bool {
	return s.Meta != nil && s.End != nil && len(s.Steps) == s.End.Steps && len(s.Problems) == 0
}

// Measured returns the steps after warm-up.
func (s *Stream) Measured() []*Step {
	out := make([]*Step, 0, len(s.Steps))
	for _, st := range s.Steps {
		if !st.Warmup {
			out = append(out, st)
		}
	}
	return out
}

// Collections counts the recorded GC events per generation over the given
// steps.
func Collections(steps []*Step) [3]int {
	var n [3]int
	for _, st := range steps {
		for _, e := range st.GC {
			n[e.Gen]++
		}
	}
	return n
}
