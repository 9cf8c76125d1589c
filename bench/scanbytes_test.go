package bench

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// scanAll collects ScanBytes's records as ReadStream does, copying the
// reused step.
func scanAll(data []byte) *Stream {
	s := new(Stream)
	ScanBytes(data, "fuzz", func(rec Record) {
		switch rec := rec.(type) {
		case *Meta:
			s.Meta = rec
		case *Step:
			c := *rec
			c.GC = append([]GCEvent(nil), rec.GC...)
			s.Steps = append(s.Steps, &c)
		case *End:
			s.End = rec
		case *ErrorRecord:
			s.Error = rec
		case *SyntaxError:
			s.Problems = append(s.Problems, rec)
		}
	})
	return s
}

// FuzzScanBytesAgreesWithReader: ScanBytes gives the records a Reader
// gives, bad lines and gaps included.
func FuzzScanBytesAgreesWithReader(f *testing.F) {
	f.Add(meta + "\n" + step(0, `{"gen":2,"ns":9,"collected":1,"uncollectable":0,"in_step":true,"manual":false}`) + "\n" + `{"type":"end","steps":1}`)
	f.Add(meta + "\n" + `{"type":"step","i":0,"warmup":false,"ns":5,"gc":[],"lost":0,"sched":false,"count":[1,2,3],"rss":1,"dev_mem":null}` + "\n" +
		`{"type":"step","i":2,"warmup":false,"ns":5,"gc":[],"lost":0,"sched":false,"count":[1,2,3],"rss":null,"dev_mem":null}` + "\nnot json\n\n" +
		`{"type":"step","i":3,"warmup":false,"ns":-5,"gc":[],"lost":0,"sched":false,"count":[1,2,3],"rss":1,"dev_mem":7}` + "\r\n")
	f.Add(`{"type":"error","kind":"usage","message":"bad"}`)
	f.Add(meta + "\n{\"type\":\"step\",\"i\":0,\"ns\":1e30}\n")
	f.Fuzz(func(t *testing.T, input string) {
		want, err := ReadStream(strings.NewReader(input), "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		got := scanAll([]byte(input))
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("ScanBytes and Reader differ (-Reader +ScanBytes):\n%s", diff)
		}
	})
}
