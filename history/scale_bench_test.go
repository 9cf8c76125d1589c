package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// BenchmarkYear ingests one year of nightly results (20 cases x 5 variants
// x 10 runs, every metric of the catalogue: 15 values a run) into each kind
// of store, then reads every series back from the night summaries (what
// detect, show and report read) and detects its change points. Ingest is
// AddManifest's time (the runs, their values and the night's summaries).
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
		var ingest time.Duration // AddManifest's time, not the synthesis of the nights
		for d := 0; d < nights; d++ {
			m := night{host: "vm-1", class: "ci-cpu", started: day0.AddDate(0, 0, d), cases: 20, variants: 5, runs: 10, level: 1}.manifest(rng)
			start := time.Now()
			if _, err := s.AddManifest(ctx, m, "synth", AddOptions{}); err != nil {
				b.Fatal(err)
			}
			ingest += time.Since(start)
		}
		c, _ := s.Count(ctx)
		start := time.Now()
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

// BenchmarkFleet is a fleet's store on PostgreSQL: GCJITTER_FLEET_CLASSES
// host classes (50) x GCJITTER_HISTORY_NIGHTS nights (365) of the year
// benchmark's nights, the runs kept for the last 90 nights (history prune
// -keep-runs 90d), the rest as night summaries. Setting it up takes
// minutes (one class is ingested, then copied in the server), so it runs
// only with GCJITTER_FLEET=1. It times the ingest of one class's night and
// of a night of every class, and history detect across the fleet (a class
// at a time, DetectAll, primary metrics), with the test process's peak
// resident memory during detection; the server's memory is not counted.
//
//	GCJITTER_FLEET=1 go test ./history -run '^$' -bench Fleet -benchtime 1x -timeout 30m
func BenchmarkFleet(b *testing.B) {
	if os.Getenv("GCJITTER_FLEET") == "" {
		b.Skip("set GCJITTER_FLEET=1 (minutes of setup)")
	}
	if pg == nil {
		b.Skip(pgErr)
	}
	classes, nights := 50, 365
	if s := os.Getenv("GCJITTER_FLEET_CLASSES"); s != "" {
		classes, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("GCJITTER_HISTORY_NIGHTS"); s != "" {
		nights, _ = strconv.Atoi(s)
	}
	ctx := context.Background()
	dsn, err := pg.NewDatabase("fleet_" + strconv.FormatInt(dbSeq.Add(1), 10))
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	mk := func(class, d int) *results.Manifest {
		return night{host: fmt.Sprintf("host-%02d", class), class: fmt.Sprintf("class-%02d", class), started: day0.AddDate(0, 0, d),
			cases: 20, variants: 5, runs: 10, level: 1}.manifest(rng)
	}
	start := time.Now()
	for d := 0; d < nights; d++ {
		if _, err := s.AddManifest(ctx, mk(0, d), "synth", AddOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.PruneRuns(ctx, day0.AddDate(0, 0, nights-90)); err != nil {
		b.Fatal(err)
	}
	// The other classes: class-00's rows under new night ids, in the server.
	for _, q := range []string{
		`INSERT INTO nights SELECT n.id || '-' || k, n.started, n.finished, 'class-' || lpad(k::text, 2, '0'), 'host-' || lpad(k::text, 2, '0'),
			n.cpu_model, n.tool, n.label, n.partial, n.command, n.source, n.added FROM nights n, generate_series(1, $1) k WHERE n.host_class = 'class-00'`,
		`INSERT INTO night_envs SELECT e.night_id || '-' || k, e.env_key, e.env FROM night_envs e, generate_series(1, $1) k`,
		`INSERT INTO night_summaries SELECT m.night_id || '-' || k, m.case_name, m.variant, m.side, m.env_key, m.metrics FROM night_summaries m, generate_series(1, $1) k`,
		`INSERT INTO runs SELECT r.night_id || '-' || k, r.run_id, r.case_name, r.variant, r.side, r.run_index, r.steps, r.env_key, r.env,
			r.gen0_collections, r.gen1_collections, r.gen2_collections, r.gen0_collected, r.gen1_collected, r.gen2_collected, r.warmup, r.spike, r.metrics
			FROM runs r, generate_series(1, $1) k`,
		`ANALYZE`,
	} {
		args := []any{classes - 1}
		if q == `ANALYZE` {
			args = nil
		}
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	var c Counts // without the values: counting them reads every run
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM nights), (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM night_summaries)`).Scan(&c.Nights, &c.Runs, &c.Summaries); err != nil {
		b.Fatal(err)
	}
	b.Logf("fleet set up in %v: %+v", time.Since(start).Round(time.Second), c)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := nights + i
		start := time.Now()
		if _, err := s.AddManifest(ctx, mk(0, d), "synth", AddOptions{}); err != nil {
			b.Fatal(err)
		}
		one := time.Since(start)
		start = time.Now()
		for k := 1; k < classes; k++ {
			if _, err := s.AddManifest(ctx, mk(k, d), "synth", AddOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		all := one + time.Since(start)
		runtime.GC()
		resetPeakRSS()
		start = time.Now()
		findings, series, err := s.DetectAll(ctx, Filter{}, stats.DefaultPrimary, DetectOptions{})
		if err != nil {
			b.Fatal(err)
		}
		detect := time.Since(start)
		b.ReportMetric(one.Seconds(), "ingest-one-night-s")
		b.ReportMetric(all.Seconds(), "ingest-fleet-night-s")
		b.ReportMetric(detect.Seconds(), "detect-s")
		b.ReportMetric(float64(peakRSS())/(1<<20), "detect-peak-MiB")
		b.ReportMetric(float64(series), "series")
		b.ReportMetric(float64(len(findings)), "findings")
		b.ReportMetric(float64(c.Summaries), "summary-rows")
		b.ReportMetric(float64(c.Runs), "runs")
	}
}
