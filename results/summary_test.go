package results

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// smallDir is a synthetic results directory of 3 runs x 400 steps.
func smallDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeSyntheticDir(t, dir, 3, 400, 7, 0.3)
	return dir
}

// reads is how many streams f read.
func reads(t *testing.T, f func()) int64 {
	t.Helper()
	before := StreamReads()
	f()
	return StreamReads() - before
}

func mustLoad(t *testing.T, dir string, spike stats.SpikeRule) *Data {
	t.Helper()
	d, err := Load(dir, spike)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fresh loads a copy of dir without its summaries: what the streams say.
func fresh(t *testing.T, dir string, spike stats.SpikeRule) *Data {
	t.Helper()
	cp := t.TempDir()
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	sums, _ := filepath.Glob(filepath.Join(cp, "runs", "*", "*", "*"+SummaryExt))
	for _, s := range sums {
		os.Remove(s)
	}
	d := mustLoad(t, cp, spike)
	d.Path = dir
	return d
}

var equateData = cmp.Options{cmpopts.EquateNaNs(), cmpopts.EquateEmpty()}

func runRecords(dir string, i int) string {
	return filepath.Join(dir, "runs", "big", "default", fmt.Sprintf("run-%02d.jsonl", i+1))
}

// TestSummaryWrittenThenRead: the first load summarises every stream and
// writes its summary beside it; the next reads no stream and gives the
// same data.
func TestSummaryWrittenThenRead(t *testing.T) {
	dir := smallDir(t)
	var cold, warm *Data
	if n := reads(t, func() { cold = mustLoad(t, dir, stats.SpikeRule{}) }); n != 3 {
		t.Errorf("cold load read %d streams, want 3", n)
	}
	for i := range 3 {
		if _, err := os.Stat(runRecords(dir, i) + SummaryExt); err != nil {
			t.Errorf("no summary beside run %d: %v", i+1, err)
		}
	}
	if n := reads(t, func() { warm = mustLoad(t, dir, stats.SpikeRule{}) }); n != 0 {
		t.Errorf("warm load read %d streams, want 0", n)
	}
	if diff := cmp.Diff(cold, warm, equateData); diff != "" {
		t.Errorf("warm load differs from cold (-cold +warm):\n%s", diff)
	}
	if s := warm.Sketches[BenchName("big", "default")]; len(s) != 3 || s[0] == nil || s[0].Steps != 400 {
		t.Errorf("sketches: %+v", s)
	}
}

// TestSummaryStreamEditedIsResummarised: a stream edited after its
// summary was written is summarised again, and the results change as the
// edit says: whether the edit changed the size, or kept it and only the
// mtime moved. A stream touched without a change keeps its summary.
func TestSummaryStreamEditedIsResummarised(t *testing.T) {
	dir := smallDir(t)
	before := mustLoad(t, dir, stats.SpikeRule{})
	name := BenchName("big", "default")
	path := runRecords(dir, 1)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	// Same size, new content: run 2's steps of 40-50 ms made 80-90 ms
	// ("ns":4xxxxxxx -> "ns":8xxxxxxx keeps the length).
	edited := bytes.ReplaceAll(data, []byte(`"ns":4`), []byte(`"ns":8`))
	if len(edited) != len(data) || bytes.Equal(edited, data) {
		t.Fatal("the edit should keep the size and change the steps")
	}
	write := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Duration(len(b)%7+1) * time.Second)
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
	}
	write(edited)
	var after *Data
	if n := reads(t, func() { after = mustLoad(t, dir, stats.SpikeRule{}) }); n != 1 {
		t.Errorf("after the edit the load read %d streams, want the edited one", n)
	}
	if diff := cmp.Diff(fresh(t, dir, stats.SpikeRule{}), after, equateData); diff != "" {
		t.Errorf("the edited stream's summary is not the stream's (-stream +loaded):\n%s", diff)
	}
	p50 := func(d *Data, i int) float64 { return d.Runs[name][i].P50 }
	if got, was := p50(after, 1), p50(before, 1); !(got > 1.2*was) {
		t.Errorf("run 2's p50 after doubling half its steps: %v, was %v", got, was)
	}
	if p50(after, 0) != p50(before, 0) {
		t.Errorf("run 1, not edited, changed: p50 %v, was %v", p50(after, 0), p50(before, 0))
	}

	// A new size: the last step dropped (an end record claiming 400 steps
	// is not checked by the summary; the steps are).
	lines := bytes.SplitAfter(edited, []byte("\n"))
	shorter := bytes.Join(append(lines[:len(lines)-3:len(lines)-3], lines[len(lines)-2:]...), nil)
	write(shorter)
	after = mustLoad(t, dir, stats.SpikeRule{})
	if got := after.Runs[name][1].Steps; got != 399 {
		t.Errorf("run 2 after dropping a step: %d steps, want 399", got)
	}

	// Touched, same content: checksummed again (one read), not summarised
	// again, restamped so the next load reads nothing.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if n := reads(t, func() { mustLoad(t, dir, stats.SpikeRule{}) }); n != 1 {
		t.Errorf("a touched stream: %d reads, want 1 (its checksum)", n)
	}
	if n := reads(t, func() { mustLoad(t, dir, stats.SpikeRule{}) }); n != 0 {
		t.Errorf("after restamping: %d reads, want 0", n)
	}
}

// TestSummaryUntrustedIsRemade: a summary file that is damaged, foreign,
// of another version or of another shape is ignored and rewritten; the
// data are the streams'.
func TestSummaryUntrustedIsRemade(t *testing.T) {
	dir := smallDir(t)
	want := mustLoad(t, dir, stats.SpikeRule{})
	sum := runRecords(dir, 0) + SummaryExt
	good, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := bytes.Cut(good, []byte("\n"))
	flipped := bytes.Clone(good)
	flipped[len(flipped)-5] ^= 0x40
	for what, b := range map[string][]byte{
		"a flipped bit":   flipped,
		"truncated":       good[:len(good)/2],
		"empty":           nil,
		"not a summary":   []byte("{\"steps\": 3}\n"),
		"an older format": append([]byte(strings.Replace(string(head), fmt.Sprintf(" %d ", SummaryVersion), " 0 ", 1)+"\n"), body...),
		"another shape":   append([]byte(strings.Replace(string(head), summaryShape(), "0123456789abcdef", 1)+"\n"), body...),
	} {
		if err := os.WriteFile(sum, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var got *Data
		if n := reads(t, func() { got = mustLoad(t, dir, stats.SpikeRule{}) }); n != 1 {
			t.Errorf("%s: %d streams read, want 1", what, n)
		}
		if diff := cmp.Diff(want, got, equateData); diff != "" {
			t.Errorf("%s: data differ (-want +got):\n%s", what, diff)
		}
		if now, _ := os.ReadFile(sum); !bytes.Equal(now, good) {
			t.Errorf("%s: the summary was not rewritten", what)
		}
	}
}

// TestSummaryUnwritable: a directory where summaries cannot be written is
// read as before, without an error.
func TestSummaryUnwritable(t *testing.T) {
	dir := smallDir(t)
	want := fresh(t, dir, stats.SpikeRule{})
	// A directory where the summary would go: it can be neither read nor
	// replaced, whoever runs the test (root ignores a read-only mode).
	for i := range 3 {
		if err := os.Mkdir(runRecords(dir, i)+SummaryExt, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		var got *Data
		if n := reads(t, func() { got = mustLoad(t, dir, stats.SpikeRule{}) }); n != 3 {
			t.Errorf("%d streams read, want 3 (no summary to read)", n)
		}
		if diff := cmp.Diff(want, got, equateData); diff != "" {
			t.Errorf("data differ (-want +got):\n%s", diff)
		}
	}
	if os.Geteuid() != 0 {
		ro := smallDir(t)
		sub := filepath.Join(ro, "runs", "big", "default")
		if err := os.Chmod(sub, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(sub, 0o755) })
		mustLoad(t, ro, stats.SpikeRule{})
		if s, _ := filepath.Glob(filepath.Join(sub, "*"+SummaryExt)); len(s) != 0 {
			t.Errorf("summaries in a read-only directory: %v", s)
		}
	}
}

// TestSummarySpikeOverrideNotKept: a load under another spike rule gives
// that rule's summaries and leaves the case's own summary file alone.
func TestSummarySpikeOverrideNotKept(t *testing.T) {
	dir := smallDir(t)
	mustLoad(t, dir, stats.SpikeRule{})
	sum := runRecords(dir, 0) + SummaryExt
	own, _ := os.ReadFile(sum)
	rule := stats.SpikeRule{Factor: 1.05}
	got := mustLoad(t, dir, rule)
	if diff := cmp.Diff(fresh(t, dir, rule), got, equateData); diff != "" {
		t.Errorf("override: data differ (-want +got):\n%s", diff)
	}
	if now, _ := os.ReadFile(sum); !bytes.Equal(now, own) {
		t.Error("a load under an override rewrote the case's summary")
	}
}

// TestSummaryBadLineNamesFileAndLine: a bad line is an InputError naming
// the file and line, on a cold load and again on a warm one (no summary
// hides it).
func TestSummaryBadLineNamesFileAndLine(t *testing.T) {
	dir := smallDir(t)
	path := runRecords(dir, 2)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines[10] = []byte("{\"type\":\"step\",\"i\":9,oops\n")
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := Load(dir, stats.SpikeRule{})
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), path+":11:") {
			t.Fatalf("got %v, want an InputError naming %s:11", err, path)
		}
	}
	if _, err := os.Stat(path + SummaryExt); err == nil {
		t.Error("a summary was written for a stream with a bad line")
	}
}

// TestCacheReadsEachStreamOnce: through one Cache with KeepSteps, Load
// then LoadSteps (a gate's judgement, then its report's charts) read each
// stream once, and LoadSteps gives what a fresh LoadSteps does; LoadSteps
// alone writes the summaries it lacked.
func TestCacheReadsEachStreamOnce(t *testing.T) {
	want, err := LoadSteps(smallDir(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := smallDir(t) // the same streams
	c := &Cache{KeepSteps: true}
	var got map[string]*Steps
	n := reads(t, func() {
		if _, err := c.Load(dir, stats.SpikeRule{}); err != nil {
			t.Fatal(err)
		}
		if got, err = c.LoadSteps(dir); err != nil {
			t.Fatal(err)
		}
	})
	if n != 3 {
		t.Errorf("Load then LoadSteps read %d streams, want 3", n)
	}
	if diff := cmp.Diff(want, got, equateData); diff != "" {
		t.Errorf("steps differ (-want +got):\n%s", diff)
	}

	// Steps first: the summaries are written on the way, so a Load after
	// reads nothing.
	dir2 := smallDir(t)
	if n := reads(t, func() { LoadSteps(dir2) }); n != 3 {
		t.Errorf("LoadSteps read %d streams, want 3", n)
	}
	if n := reads(t, func() { mustLoad(t, dir2, stats.SpikeRule{}) }); n != 0 {
		t.Errorf("Load after LoadSteps read %d streams, want 0", n)
	}
}

// TestSummaryMultiRank: a multi-rank run's one summary covers its rank
// streams: written cold, read warm, remade when one rank's stream changes,
// and equal to the ranks' summary from their streams.
func TestSummaryMultiRank(t *testing.T) {
	dir := smallDir(t)
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Runs 1 and 2 become ranks 0 and 1 of one run.
	r := m.Runs[0]
	for k := range 2 {
		if err := os.Rename(runRecords(dir, k), filepath.Join(dir, strings.TrimSuffix(r.Records, ".jsonl")+fmt.Sprintf(".rank%d.jsonl", k))); err != nil {
			t.Fatal(err)
		}
	}
	r.Ranks = 2
	m.Runs = []*Run{r, m.Runs[2]}
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	want := fresh(t, dir, stats.SpikeRule{})
	name := BenchName("big", "default")
	streams, err := readRanksForTest(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := stats.MultiRank(streams, stats.SpikeRule{Factor: 1.5})
	if diff := cmp.Diff(sum, want.Runs[name][0], cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("the run's summary is not MultiRank's (-MultiRank +loaded):\n%s", diff)
	}
	if n := reads(t, func() { mustLoad(t, dir, stats.SpikeRule{}) }); n != 3 {
		t.Errorf("cold: %d streams read, want 3", n)
	}
	var got *Data
	if n := reads(t, func() { got = mustLoad(t, dir, stats.SpikeRule{}) }); n != 0 {
		t.Errorf("warm: %d streams read, want 0", n)
	}
	if diff := cmp.Diff(want, got, equateData); diff != "" {
		t.Errorf("warm differs (-streams +warm):\n%s", diff)
	}
	steps, err := LoadSteps(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := steps[name]; len(s.Runs) != 2 || len(s.RankPause) != 2 {
		t.Errorf("steps: %d runs, %d ranks' pauses; want 2 and 2", len(s.Runs), len(s.RankPause))
	}
	rank1 := filepath.Join(dir, r.RankRecords(1))
	data, _ := os.ReadFile(rank1)
	if err := os.WriteFile(rank1, bytes.ReplaceAll(data, []byte(`"ns":4`), []byte(`"ns":9`)), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(rank1, later, later)
	if n := reads(t, func() { got = mustLoad(t, dir, stats.SpikeRule{}) }); n != 2 {
		t.Errorf("one rank edited: %d streams read, want the run's 2", n)
	}
	if diff := cmp.Diff(fresh(t, dir, stats.SpikeRule{}), got, equateData); diff != "" {
		t.Errorf("after the edit (-streams +loaded):\n%s", diff)
	}
}

func readRanksForTest(dir string, r *Run) ([]*bench.Stream, error) {
	var out []*bench.Stream
	for k := range r.Ranks {
		f, err := os.Open(filepath.Join(dir, r.RankRecords(k)))
		if err != nil {
			return nil, err
		}
		s, err := bench.ReadStream(f, f.Name())
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
