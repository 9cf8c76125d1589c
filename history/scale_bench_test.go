package history

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkYear ingests one year of nightly results (20 cases x 5 variants
// x 10 runs, every metric of the catalogue: 13 values a run) into each kind
// of store, then reads every series back and detects its change points.
// It reports the seconds of each phase and the process's peak resident
// memory (VmHWM, reset before each store); PostgreSQL's own memory is the
// server's and not counted. GCJITTER_HISTORY_NIGHTS sets the nights.
//
//	go test ./history -run '^$' -bench Year -benchtime 1x
func BenchmarkYear(b *testing.B) {
	nights := 365
	if s := os.Getenv("GCJITTER_HISTORY_NIGHTS"); s != "" {
		nights, _ = strconv.Atoi(s)
	}
	b.Run("sqlite", func(b *testing.B) {
		benchYear(b, filepath.Join(b.TempDir(), "history.db"), nights)
	})
	b.Run("postgres", func(b *testing.B) {
		if pg == nil {
			b.Skip(pgErr)
		}
		dsn, err := pg.NewDatabase("year_" + strconv.FormatInt(dbSeq.Add(1), 10))
		if err != nil {
			b.Fatal(err)
		}
		benchYear(b, dsn, nights)
	})
}

func benchYear(b *testing.B, dsn string, nights int) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		resetPeakRSS()
		s, err := Open(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		start := time.Now()
		for d := 0; d < nights; d++ {
			m := night{host: "vm-1", class: "ci-cpu", started: day0.AddDate(0, 0, d), cases: 20, variants: 5, runs: 10, level: 1}.manifest(rng)
			if _, err := s.AddManifest(ctx, m, "synth", AddOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		ingest := time.Since(start)
		c, _ := s.Count(ctx)
		start = time.Now()
		series, err := s.Query(ctx, Filter{})
		if err != nil {
			b.Fatal(err)
		}
		read := time.Since(start)
		start = time.Now()
		findings := Detect(series, DetectOptions{})
		detect := time.Since(start)
		s.Close()
		b.ReportMetric(ingest.Seconds(), "ingest-s")
		b.ReportMetric(read.Seconds(), "read-s")
		b.ReportMetric(detect.Seconds(), "detect-s")
		b.ReportMetric(float64(c.Values), "values")
		b.ReportMetric(float64(len(series)), "series")
		b.ReportMetric(float64(len(findings)), "findings")
		b.ReportMetric(float64(len(Regressions(findings, time.Time{}))), "regressions")
		b.ReportMetric(float64(len(Regressions(findings, day0.AddDate(0, 0, nights-3)))), "last-3-nights-regressions")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-MiB")
	}
}

// resetPeakRSS resets the kernel's peak resident set of this process
// (Linux: writing 5 to clear_refs), so each store's peak is its own.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is VmHWM in bytes (0 where /proc has none).
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
