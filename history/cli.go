package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/results"
)

// DSNEnv names the history store when no -history flag does: a nightly
// job sets it once and every run, gate and ab records there.
const DSNEnv = "GCJITTER_HISTORY"

// DefaultDSN is the store the history commands read when neither
// -history nor $GCJITTER_HISTORY names one.
const DefaultDSN = "results/history.db"

// Record adds a finished (or partial) results directory to the store dsn
// names: what run, gate and ab do at their end with -history.
func Record(ctx context.Context, dsn, dir string, m *results.Manifest, o AddOptions) (*Added, error) {
	// Ctrl-C cancelled ctx, but a partial night is still recorded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	s, err := Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.AddManifest(ctx, m, dir, o)
}

// Regressions are the findings that are regressions whose first night is
// at or after since.
func Regressions(fs []Finding, since time.Time) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Regression && !f.First.Started.Before(since) {
			out = append(out, f)
		}
	}
	return out
}

// PrimaryOnly keeps the series of the given metrics.
func PrimaryOnly(series []*Series, metrics []string) []*Series {
	var out []*Series
	for _, se := range series {
		if slices.Contains(metrics, se.Key.Metric) {
			out = append(out, se)
		}
	}
	return out
}

// WriteDashboards writes one trend page per host class of series into
// dir (history-CLASS.html, atomically) and returns their paths.
func WriteDashboards(dir, store string, series []*Series, findings []Finding, metrics []string) ([]string, error) {
	byClass := map[string]*Dashboard{}
	var classes []string
	for _, se := range series {
		d := byClass[se.Key.HostClass]
		if d == nil {
			d = &Dashboard{HostClass: se.Key.HostClass, Store: store, Generated: time.Now(), Metrics: metrics}
			byClass[se.Key.HostClass] = d
			classes = append(classes, se.Key.HostClass)
		}
		d.Series = append(d.Series, se)
	}
	for _, f := range findings {
		if d := byClass[f.Key.HostClass]; d != nil {
			d.Findings = append(d.Findings, f)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, c := range classes {
		var b bytesBuffer
		if err := byClass[c].WriteHTML(&b); err != nil {
			return paths, err
		}
		path := filepath.Join(dir, "history-"+cases.PathName(c)+".html")
		if err := atomicfile.Write(path, b, 0o644); err != nil {
			return paths, fmt.Errorf("writing %s: %v", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

type bytesBuffer []byte

func (b *bytesBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
