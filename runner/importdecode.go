package runner

import (
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
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
			return cmp.Compare(x, y)
		}
		return strings.Compare(a, b)
	})
	return pids
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
