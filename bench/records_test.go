package bench

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const meta = `{"type":"meta","schema":1,"policy":"default","model":"mlp","device":{"kind":"cpu"},"gc":{"thresholds":[700,10,10]}}`

func step(i int, rest string) string {
	return `{"type":"step","i":` + itoa(i) + `,"warmup":false,"ns":1000,"gc":[` + rest + `],"count":[1,2,3]}`
}

func itoa(i int) string { return strconv.Itoa(i) }

func read(t *testing.T, input string) *Stream {
	t.Helper()
	s, err := ReadStream(strings.NewReader(input), "run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func problems(s *Stream) []string {
	var out []string
	for _, p := range s.Problems {
		out = append(out, p.Error())
	}
	return out
}

func TestReadCompleteStream(t *testing.T) {
	in := strings.Join([]string{
		meta,
		step(0, `{"gen":0,"ns":500,"collected":3,"uncollectable":0,"in_step":true,"manual":false}`),
		step(1, ""),
		`{"type":"end","steps":2,"wall_ns":5000,"gc_stats":[{"collections":1,"collected":3,"uncollectable":0},{},{}],"recorded":[1,0,0]}`,
	}, "\n") + "\n"
	s := read(t, in)
	if !s.Complete() {
		t.Fatalf("stream not complete: %v", problems(s))
	}
	if got := Collections(s.Steps); got != [3]int{1, 0, 0} {
		t.Errorf("collections %v", got)
	}
	want := GCEvent{Gen: 0, PauseNS: 500, Collected: 3, InStep: true}
	if diff := cmp.Diff(want, s.Steps[0].GC[0]); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
}

// TestReadCandidatesAndDuration: CPython 3.15's fields of a collection
// are kept where a stream has them, absent (nil) where it does not.
func TestReadCandidatesAndDuration(t *testing.T) {
	in := strings.Join([]string{
		meta,
		step(0, `{"gen":1,"ns":500,"collected":3,"uncollectable":0,"in_step":true,"manual":false,"candidates":321,"duration_ns":450}`),
		step(1, `{"gen":0,"ns":500,"collected":3,"uncollectable":0,"in_step":true,"manual":false}`),
		`{"type":"end","steps":2,"wall_ns":5000,"gc_stats":[{"collections":1},{"collections":1},{}],"recorded":[1,1,0]}`,
	}, "\n") + "\n"
	s := read(t, in)
	if !s.Complete() {
		t.Fatalf("stream not complete: %v", problems(s))
	}
	if e := s.Steps[0].GC[0]; e.Candidates == nil || *e.Candidates != 321 || e.DurationNS == nil || *e.DurationNS != 450 {
		t.Errorf("3.15 event %+v: want candidates 321, duration 450 ns", e)
	}
	if e := s.Steps[1].GC[0]; e.Candidates != nil || e.DurationNS != nil {
		t.Errorf("an older interpreter's event has candidates or a duration: %+v", e)
	}
}

func TestReadReportsBadLinesAndGoesOn(t *testing.T) {
	cases := []struct {
		name, input string
		want        []string
		steps       int
	}{
		{"garbage line", meta + "\nnot json\n" + step(0, "") + "\n",
			[]string{"run.jsonl:2: not a JSON record: invalid character 'o' in literal null (expecting 'u')"}, 1},
		{"truncated last line (killed mid-write)", meta + "\n" + step(0, "") + "\n" + `{"type":"step","i":1,"warm`,
			[]string{"run.jsonl:3: not a JSON record: unexpected end of JSON input"}, 1},
		{"schema from the future", `{"type":"meta","schema":2}` + "\n",
			[]string{"run.jsonl:1: record schema version 2, this gcjitter reads version 1: use the gcjitter that wrote these records"}, 0},
		{"step before meta", step(0, "") + "\n",
			[]string{`run.jsonl:1: "step" record before the meta record`}, 0},
		{"out of order", meta + "\n" + step(0, "") + "\n" + step(2, "") + "\n" + step(1, "") + "\n",
			[]string{"run.jsonl:3: step 1 missing before step 2", "run.jsonl:4: step 1 where step 3 was due (steps out of order or repeated)"}, 2},
		// One unreadable step line costs that line and a gap, not the rest
		// of the run: the steps after it are kept.
		{"unreadable step, then more", meta + "\n" + step(0, "") + "\n" + `{"type":"step","i":1,"ns":NaN}` + "\n" + step(2, "") + "\n" + step(3, "") + "\n",
			[]string{"run.jsonl:3: not a JSON record: invalid character 'N' looking for beginning of value", "run.jsonl:4: step 1 missing before step 2"}, 3},
		{"a gap of several steps", meta + "\n" + step(0, "") + "\n" + step(4, "") + "\n",
			[]string{"run.jsonl:3: steps 1 to 3 missing before step 4"}, 2},
		{"duplicate", meta + "\n" + step(0, "") + "\n" + step(0, "") + "\n",
			[]string{"run.jsonl:3: step 0 where step 1 was due (steps out of order or repeated)"}, 1},
		{"negative duration", meta + "\n" + `{"type":"step","i":0,"ns":-5}` + "\n",
			[]string{"run.jsonl:2: step 0: negative duration -5 ns"}, 0},
		{"bad generation", meta + "\n" + step(0, `{"gen":7,"ns":1}`) + "\n",
			[]string{"run.jsonl:2: step 0: bad GC event (generation 7, pause 1 ns)"}, 0},
		{"wrong type", meta + "\n" + `{"type":"step","i":"zero"}` + "\n",
			[]string{`run.jsonl:2: bad step record: field "i": want int, got JSON string`}, 0},
		{"unknown type", meta + "\n" + `{"type":"sample"}` + "\n",
			[]string{`run.jsonl:2: unknown record type "sample"`}, 0},
		{"after end", meta + "\n" + `{"type":"end","steps":0}` + "\n" + step(0, "") + "\n",
			[]string{`run.jsonl:3: "step" record after the stream ended`}, 0},
		{"NaN", meta + "\n" + `{"type":"step","i":0,"ns":NaN}` + "\n",
			[]string{"run.jsonl:2: not a JSON record: invalid character 'N' looking for beginning of value"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := read(t, c.input)
			if diff := cmp.Diff(c.want, problems(s)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if len(s.Steps) != c.steps {
				t.Errorf("%d steps kept, want %d", len(s.Steps), c.steps)
			}
			if s.Complete() {
				t.Error("a stream with problems reads as complete")
			}
		})
	}
}

func TestReadHugeLine(t *testing.T) {
	huge := `{"type":"step","pad":"` + strings.Repeat("x", MaxLineBytes+10) + `"}`
	s := read(t, meta+"\n"+huge+"\n"+step(0, "")+"\n")
	if diff := cmp.Diff([]string{"run.jsonl:2: record longer than 16777216 bytes"}, problems(s)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if len(s.Steps) != 1 || s.Steps[0].Index != 0 {
		t.Errorf("the step after the huge line was lost: %d steps", len(s.Steps))
	}
}

// FuzzReader: no input may panic the reader, and every record it accepts
// keeps the invariants consumers rely on.
func FuzzReader(f *testing.F) {
	f.Add(meta + "\n" + step(0, `{"gen":2,"ns":9,"collected":1,"uncollectable":0,"in_step":true}`) + "\n" + `{"type":"end","steps":1}`)
	f.Add(`{"type":"error","kind":"usage","message":"bad"}`)
	f.Add(meta + "\n{\"type\":\"step\",\"i\":0,\"ns\":1e30}\n")
	f.Fuzz(func(t *testing.T, input string) {
		s, err := ReadStream(strings.NewReader(input), "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range s.Steps {
			if (i > 0 && st.Index <= s.Steps[i-1].Index) || st.DurationNS < 0 {
				t.Fatalf("accepted step %+v at position %d", st, i)
			}
			for _, e := range st.GC {
				if e.Gen < 0 || e.Gen > 2 {
					t.Fatalf("accepted generation %d", e.Gen)
				}
			}
		}
	})
}

// FuzzFastStepAgreesWithJSON: whenever the fast step parser accepts a line,
// encoding/json reads the same step from it.
func FuzzFastStepAgreesWithJSON(f *testing.F) {
	f.Add(`{"type":"step","i":3,"warmup":false,"ns":41234567,"gc":[{"gen":0,"ns":52000,"collected":812,"uncollectable":0,"in_step":true,"manual":false}],"lost":0,"sched":false,"count":[123,4,0],"rss":612345856,"dev_mem":null}`)
	f.Add(`{"type":"step","i":0,"warmup":true,"ns":5,"gc":[],"lost":0,"sched":true,"count":[1,2,3],"rss":null,"dev_mem":7}`)
	f.Add(`{"type":"step","i":4,"warmup":false,"ns":5000,"gc":[],"lost":0,"sched":false,"count":[1,2,3],"rss":1,"dev_mem":null,"dev_busy":4000,"dev_idle":1000,"dev_idle_gc":0,"dev_slack":300,"dev_lead_gc":-1}`)
	f.Add(`{"type":"step","i":4,"warmup":false,"ns":5000,"gc":[],"lost":0,"sched":false,"count":[1,2,3],"rss":1,"dev_mem":null,"dev_busy":4000,"dev_idle":1000,"dev_idle_gc":0,"dev_slack":300,"dev_lead_gc":-1,"own":4200}`)
	f.Add(`{"type":"step","i":4,"warmup":false,"ns":5000,"gc":[],"lost":0,"sched":false,"count":[1,2,3],"rss":1,"dev_mem":null,"own":4200}`)
	f.Add(`{"type":"step","i":0,"warmup":true,"ns":-5,"gc":[{"gen":2,"ns":1,"collected":0,"uncollectable":0,"in_step":false,"manual":true},{"gen":1,"ns":1,"collected":0,"uncollectable":0,"in_step":true,"manual":false}],"lost":1,"sched":true,"count":[1,2,3],"rss":1,"dev_mem":7}`)
	f.Fuzz(func(t *testing.T, line string) {
		var fast Step
		if !parseStepFast([]byte(line), &fast) {
			return
		}
		var slow Step
		if err := json.Unmarshal([]byte(line), &slow); err != nil {
			t.Fatalf("fast parser accepted what encoding/json rejects (%v): %s", err, line)
		}
		if diff := cmp.Diff(slow, fast, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("fast and encoding/json differ (-json +fast):\n%s\n%s", diff, line)
		}
	})
}
