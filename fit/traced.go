package fit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
)

// TracedStreams are the record streams of a results directory's traced or
// imported runs of one case, what a fit reproduces; caseName "" is the
// directory's only traced case. It returns the case's name.
func TracedStreams(dir, caseName string) (string, []*bench.Stream, error) {
	m, err := results.ReadManifest(dir)
	if err != nil {
		return "", nil, err
	}
	var names []string
	for _, r := range m.Runs {
		if cases.Observed(r.Variant) && r.Status == results.StatusOK && !slices.Contains(names, r.Case) {
			names = append(names, r.Case)
		}
	}
	switch {
	case caseName == "" && len(names) == 1:
		caseName = names[0]
	case caseName == "" && len(names) == 0:
		return "", nil, fmt.Errorf("%s has no traced or imported run (gcjitter trace -o %s -- python train.py, or gcjitter import -o %s TRACE)", dir, dir, dir)
	case caseName == "":
		return "", nil, fmt.Errorf("%s has traced runs of several cases (%s): name one with -case", dir, strings.Join(names, ", "))
	}
	var streams []*bench.Stream
	for _, r := range m.Runs {
		if r.Case != caseName || r.Status != results.StatusOK || !cases.Observed(r.Variant) {
			continue
		}
		for k := range max(r.Ranks, 1) {
			path := filepath.Join(dir, r.RankRecords(k))
			f, err := os.Open(path)
			if err != nil {
				return "", nil, err
			}
			s, err := bench.ReadStream(f, path)
			f.Close()
			if err != nil {
				return "", nil, fmt.Errorf("%s: %v", path, err)
			}
			streams = append(streams, s)
		}
	}
	if len(streams) == 0 {
		return "", nil, fmt.Errorf("%s: no traced or imported run of case %q", dir, caseName)
	}
	return caseName, streams, nil
}
