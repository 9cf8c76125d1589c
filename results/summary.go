package results

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// Run summaries.
//
// Summarising a run reads and parses its whole record stream: about half a
// second a side for a million steps. So every run's summary is written once
// beside its stream, as RECORDS.summary (run-01.jsonl.summary; a
// multi-rank run's beside its rank streams), and read instead of the
// stream while the stream is unchanged. The streams stay the source of
// truth: a summary is a cache, and any doubt about it (another format,
// another spike rule, a stream that changed, a file that does not decode
// or whose checksum fails) means the stream is summarised again and the
// summary rewritten. A directory that cannot be written (read-only, a
// full disk) is read as before, with no summary kept and no error.
//
// Which stream a summary belongs to is its content: a 64-bit checksum of
// every byte (CRC-32C and CRC-32 side by side: in effect a CRC of degree
// 64, which misses no change of up to 64 consecutive bits and any other
// with a chance of 2^-64), computed from the very bytes the summary was
// made from (the stream is read into memory once, checksummed, then
// parsed). Not SHA-256: at 1.1 GB/s here it cost 0.28 s of CPU on the
// 320 MB of a cold compare of two million-step sides, a quarter of the
// whole, against 0.02 s for the CRCs (19-26 GB/s with the CPU's CRC
// instructions); the summary is a cache, and whoever could forge a stream
// to collide could as well rewrite its summary, so only accidental change
// has to be caught. Checksumming every stream again on every read would
// cost as much as reading it and put a warm compare over its 0.1 s, so a
// summary also records each stream's size and modification time (ns):
// while both are unchanged the stored checksum is trusted and the stream
// is not opened. When either moved (an edit, a copy, a touch) the stream
// is checksummed again: the same content keeps its summary (restamped),
// other content is summarised again. What this cannot see is an edit that
// keeps both the size and the nanosecond mtime (one made to forge them); a
// stream the worker wrote is never rewritten in place.

// SummaryVersion is the summary file format's version: bump it when what
// a summary means changes without its Go types changing (the Summarizer
// computes a field differently). A field added to stats.RunSummary, or to
// anything else a summary holds, needs no bump: the file records a
// fingerprint of its types (summaryShape), and a file of another shape is
// summarised again.
const SummaryVersion = 2

// SummaryExt ends a run summary's file name: RECORDS + SummaryExt.
const SummaryExt = ".summary"

// summaryMagic opens a summary file's header line:
//
//	gcjitter-run-summary VERSION SHAPE SHA256(body)
const summaryMagic = "gcjitter-run-summary"

// RunFile is what a run summary holds: everything compare, gate, report
// and history read from a run, so that none of them reads its stream.
type RunFile struct {
	Streams []StreamKey // one per stream (per rank of a multi-rank run)
	// Spike is the spike rule the summary was made with.
	Spike   stats.SpikeRule
	Summary stats.RunSummary
	// Sketch is the run's step-time quantiles (stats.NewSketch).
	Sketch *stats.Sketch
	Meta   *bench.Meta // the stream's meta record (rank 0's)
	// Ranks is what a multi-rank run's ranks did to each other; nil for
	// one rank.
	Ranks *stats.RankSummary
}

// StreamKey identifies a stream's content: its checksum, and the size and
// modification time it had when it was checksummed.
type StreamKey struct {
	Name  string // relative to the results directory
	Size  int64
	ModNS int64
	// Sum is the content's CRC-32C (high half) and CRC-32 (IEEE).
	Sum     uint64
	content bool // Sum is of the bytes now on disk (not only a stat match)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// contentSum is a stream's StreamKey.Sum.
func contentSum(data []byte) uint64 {
	return uint64(crc32.Checksum(data, castagnoli))<<32 | uint64(crc32.ChecksumIEEE(data))
}

// summaryShape fingerprints the Go types a summary file holds (field names
// and types, recursively), so that a field added to stats.RunSummary
// retires every older summary by itself.
var summaryShape = sync.OnceValue(func() string {
	var b strings.Builder
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			if t.Kind() == reflect.Array {
				fmt.Fprintf(&b, "[%d]", t.Len())
			} else {
				b.WriteString(t.Kind().String())
			}
			walk(t.Elem())
			return
		case reflect.Map:
			b.WriteString("map[")
			walk(t.Key())
			b.WriteString("]")
			walk(t.Elem())
			return
		case reflect.Struct:
			if seen[t] {
				b.WriteString(t.Name())
				return
			}
			seen[t] = true
			b.WriteString("{")
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				b.WriteString(f.Name + " ")
				walk(f.Type)
				b.WriteString(";")
			}
			b.WriteString("}")
			return
		}
		b.WriteString(t.Kind().String())
	}
	walk(reflect.TypeFor[RunFile]())
	h := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(h[:8])
})

// streamReads counts the record streams this process read from disk.
var streamReads atomic.Int64

// StreamReads is how many record streams this process has read from disk
// (summarised, checksummed or loaded for their steps): tests check with it that
// a gate reads each stream at most once, and a warm compare none.
func StreamReads() int64 { return streamReads.Load() }

// SummaryPath is where the summary of run r of the results directory dir
// is kept.
func SummaryPath(dir string, r *Run) string { return filepath.Join(dir, r.Records) + SummaryExt }

// readSummary reads a summary file; nil for a missing, foreign, older,
// damaged or otherwise untrustworthy one (it is then made again).
func readSummary(path string) *RunFile {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	head, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return nil
	}
	sum := sha256.Sum256(body)
	want := fmt.Sprintf("%s %d %s %s", summaryMagic, SummaryVersion, summaryShape(), hex.EncodeToString(sum[:]))
	if string(head) != want {
		return nil
	}
	var f RunFile
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&f); err != nil {
		return nil
	}
	return &f
}

// writeSummary writes f atomically (a temporary file renamed over the
// old); a failure only costs the cache, so it is not an error (a read-only
// results directory is read as before). Unlike atomicfile.Write it does
// not sync: on a disk that the workers beside it keep busy, forty syncs
// made a cold compare take twice as long, and a summary that a crash
// leaves empty or torn fails its checksum and is made again.
func writeSummary(path string, f *RunFile) {
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(f); err != nil {
		return
	}
	sum := sha256.Sum256(body.Bytes())
	var out bytes.Buffer
	fmt.Fprintf(&out, "%s %d %s %s\n", summaryMagic, SummaryVersion, summaryShape(), hex.EncodeToString(sum[:]))
	out.Write(body.Bytes())
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return
	}
	_, err = tmp.Write(out.Bytes())
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}

// statKey is a stream's size and modification time now.
func statKey(dir, name string) (StreamKey, error) {
	st, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		return StreamKey{}, err
	}
	return StreamKey{Name: name, Size: st.Size(), ModNS: st.ModTime().UnixNano()}, nil
}

// streamBufs recycles the buffers streams are read into: a fresh 10 MB
// buffer per stream costs more in zeroing and page faults than the read.
var streamBufs sync.Pool

// readStream reads a stream whole into buf (grown as needed) and keys it
// by its content; the key's stat is taken before reading, so a stream that
// changes while it is read is checksummed again next time.
func readStream(dir, name string, buf []byte) ([]byte, StreamKey, error) {
	k, err := statKey(dir, name)
	if err != nil {
		return nil, k, err
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, k, err
	}
	defer f.Close()
	if int64(cap(buf)) < k.Size+512 {
		buf = make([]byte, 0, k.Size+512)
	}
	data := buf[:0]
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, k, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // grew since the stat
		}
	}
	streamReads.Add(1)
	k.Size, k.Sum, k.content = int64(len(data)), contentSum(data), true
	return data, k, nil
}

// sameStreams reports whether keys (from statKey or readStream) are the
// streams f was made from.
func (f *RunFile) sameStreams(keys []StreamKey) bool {
	if len(f.Streams) != len(keys) {
		return false
	}
	for i, k := range keys {
		s := f.Streams[i]
		if s.Name != k.Name {
			return false
		}
		if k.content {
			if s.Sum != k.Sum || s.Size != k.Size {
				return false
			}
		} else if s.Size != k.Size || s.ModNS != k.ModNS {
			return false
		}
	}
	return true
}

// Cache loads the runs of results directories through their summaries
// (see SummaryVersion), and, with KeepSteps, keeps the step series of
// every stream it had to parse, so that LoadSteps after Load (a gate's
// judgement, then its report's charts) reads no stream twice. The zero
// Cache is ready; it is safe for concurrent use.
type Cache struct {
	// KeepSteps: keep, in memory, the step series of the runs Load parsed.
	KeepSteps bool

	mu    sync.Mutex
	steps map[string]*keptRun // by summary path
	sem   chan struct{}       // one token per run being read
}

// workers is the semaphore that bounds the runs read at once to the
// processors, across every load through c.
func (c *Cache) workers() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sem == nil {
		c.sem = make(chan struct{}, runtime.GOMAXPROCS(0))
	}
	return c.sem
}

// keptRun is a parsed run's step series and the streams it came from.
type keptRun struct {
	keys    []StreamKey // stat keys
	series  *runSeries  // single-rank runs
	streams []*bench.Stream
}

func (c *Cache) keep(path string, k *keptRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.steps == nil {
		c.steps = map[string]*keptRun{}
	}
	c.steps[path] = k
}

// kept returns the series kept for run r if its streams are unchanged.
func (c *Cache) kept(dir string, r *Run) *keptRun {
	c.mu.Lock()
	k := c.steps[SummaryPath(dir, r)]
	c.mu.Unlock()
	if k == nil {
		return nil
	}
	for _, old := range k.keys {
		now, err := statKey(dir, old.Name)
		if err != nil || now.Size != old.Size || now.ModNS != old.ModNS {
			return nil
		}
	}
	return k
}

// streamNames are run r's stream files, relative to its directory.
func streamNames(r *Run) []string {
	if r.Ranks <= 1 {
		return []string{r.Records}
	}
	names := make([]string, r.Ranks)
	for k := range names {
		names[k] = r.RankRecords(k)
	}
	return names
}

// parsed is what parsing a run's streams gave.
type parsed struct {
	file    RunFile
	series  *runSeries
	streams []*bench.Stream
}

// summarize returns run r's summary under the spike rule: from its summary
// file when that is of these very streams, else from the streams (and the
// summary file is written when own says rule is the case's own: a summary
// made under a -spike-factor override is not kept). With c.KeepSteps the
// step series of a run it parsed is kept for LoadSteps.
func (c *Cache) summarize(dir string, r *Run, rule stats.SpikeRule, own bool) (*RunFile, error) {
	path := SummaryPath(dir, r)
	names := streamNames(r)
	f := readSummary(path)
	if f != nil && f.Spike == rule {
		keys := make([]StreamKey, len(names))
		for i, n := range names {
			k, err := statKey(dir, n)
			if err != nil {
				return nil, err
			}
			keys[i] = k
		}
		if f.sameStreams(keys) {
			return f, nil
		}
	}
	datas, keys, release, err := readStreams(dir, names)
	if err != nil {
		return nil, err
	}
	defer release()
	if f != nil && f.Spike == rule && f.sameStreams(keys) {
		// The same content, moved or touched: restamp it.
		f.Streams = keys
		writeSummary(path, f)
		return f, nil
	}
	p, err := parseRun(datas, keys, r, dir, rule, c.KeepSteps)
	if err != nil {
		return nil, err
	}
	if own {
		writeSummary(path, &p.file)
	}
	if c.KeepSteps {
		c.keep(path, &keptRun{keys: keys, series: p.series, streams: p.streams})
	}
	return &p.file, nil
}

// readStreams reads the named streams whole; release gives their buffers
// back once nothing refers to their bytes (records copy what they keep).
func readStreams(dir string, names []string) (datas [][]byte, keys []StreamKey, release func(), err error) {
	datas = make([][]byte, len(names))
	keys = make([]StreamKey, len(names))
	release = func() {
		for _, d := range datas {
			if d != nil {
				streamBufs.Put(d[:0])
			}
		}
	}
	for i, n := range names {
		buf, _ := streamBufs.Get().([]byte)
		if datas[i], keys[i], err = readStream(dir, n, buf); err != nil {
			if buf != nil {
				streamBufs.Put(buf)
			}
			release()
			return nil, nil, nil, err
		}
	}
	return datas, keys, release, nil
}

// parseRun summarises a run from its streams' bytes; with steps, it also
// gives the run's step series. Bad lines are an InputError naming the file
// and line.
func parseRun(datas [][]byte, keys []StreamKey, r *Run, dir string, rule stats.SpikeRule, steps bool) (*parsed, error) {
	p := &parsed{file: RunFile{Streams: keys, Spike: rule}}
	if r.Ranks > 1 {
		for k, data := range datas {
			path := filepath.Join(dir, keys[k].Name)
			s := new(bench.Stream)
			bench.ScanBytes(data, path, func(rec bench.Record) {
				switch rec := rec.(type) {
				case *bench.Meta:
					s.Meta = rec
				case *bench.Step:
					c := *rec
					c.GC = slices.Clone(rec.GC)
					s.Steps = append(s.Steps, &c)
				case *bench.End:
					s.End = rec
				case *bench.ErrorRecord:
					s.Error = rec
				case *bench.SyntaxError:
					s.Problems = append(s.Problems, rec)
				}
			})
			if len(s.Problems) > 0 {
				return nil, &InputError{[]string{s.Problems[0].Error()}}
			}
			p.streams = append(p.streams, s)
		}
		sum, ranks := stats.MultiRank(p.streams, rule)
		p.file.Summary, p.file.Ranks = sum, &ranks
		p.file.Meta = p.streams[0].Meta
		var global runSeries
		for _, s := range p.streams {
			for i, st := range s.Measured() {
				global.add(i, st)
			}
		}
		p.file.Sketch = sketchOf(global.durs)
		if !steps {
			p.streams = nil
		}
		return p, nil
	}
	path := filepath.Join(dir, keys[0].Name)
	var sm stats.Summarizer
	var series runSeries
	// Sized by the manifest's step count, bounded by what the stream can
	// hold (a step record is over 64 bytes).
	durs := make([]float64, 0, max(0, min(r.Steps, len(datas[0])/64)))
	var problems []string
	bench.ScanBytes(datas[0], path, func(rec bench.Record) {
		switch rec := rec.(type) {
		case *bench.Meta:
			p.file.Meta = rec
			sm.SetMeta(rec) // the collector's thresholds, for the memory class
		case *bench.Step:
			sm.Add(rec)
			if rec.Warmup {
				return
			}
			if steps {
				series.add(len(series.durs), rec)
			} else {
				durs = append(durs, float64(rec.DurationNS))
			}
		case *bench.SyntaxError:
			problems = append(problems, rec.Error())
		}
	})
	if len(problems) > 0 {
		return nil, &InputError{slices.Clip(problems)}
	}
	p.file.Summary = sm.Result(rule)
	if steps {
		durs = series.durs
		p.series = &series
	}
	p.file.Sketch = sketchOf(durs)
	return p, nil
}

func sketchOf(durs []float64) *stats.Sketch {
	sorted := slices.Clone(durs)
	stats.SortFloat64s(sorted)
	return stats.NewSketch(sorted)
}

// runSteps is run r's step series for LoadSteps: kept by Load, else parsed
// from its streams (writing the run's summary on the way when it had none:
// the stream is read once whichever comes first).
func (c *Cache) runSteps(dir string, r *Run, rule stats.SpikeRule) (*keptRun, error) {
	if k := c.kept(dir, r); k != nil {
		return k, nil
	}
	names := streamNames(r)
	datas, keys, release, err := readStreams(dir, names)
	if err != nil {
		return nil, err
	}
	defer release()
	path := SummaryPath(dir, r)
	f := readSummary(path)
	fresh := f != nil && f.Spike == rule && f.sameStreams(keys)
	if r.Ranks <= 1 && fresh {
		// Only the steps are wanted: no summary to make.
		return stepsOnly(datas[0], dir, keys), nil
	}
	p, err := parseRun(datas, keys, r, dir, rule, true)
	if err != nil && r.Ranks <= 1 {
		// Charts draw what was measured: the bad lines are Load's to
		// report.
		return stepsOnly(datas[0], dir, keys), nil
	}
	if err != nil {
		return nil, err
	}
	if !fresh {
		writeSummary(path, &p.file)
	}
	k := &keptRun{keys: keys, series: p.series, streams: p.streams}
	if c.KeepSteps {
		c.keep(path, k)
	}
	return k, nil
}

// stepsOnly is a single-rank stream's step series, bad lines skipped.
func stepsOnly(data []byte, dir string, keys []StreamKey) *keptRun {
	var series runSeries
	bench.ScanBytes(data, filepath.Join(dir, keys[0].Name), func(rec bench.Record) {
		if st, ok := rec.(*bench.Step); ok && !st.Warmup {
			series.add(len(series.durs), st)
		}
	})
	return &keptRun{keys: keys, series: &series}
}
