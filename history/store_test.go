package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/internal/testpostgres"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// The PostgreSQL server every store test of this package shares, started
// by TestMain; pgErr says why there is none.
var (
	pg    *testpostgres.Server
	pgErr error
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		if pg, pgErr = testpostgres.Start(); pgErr == nil {
			defer pg.Stop()
		}
		return m.Run()
	}())
}

var dbSeq atomic.Int64

// forEachStore runs test on a fresh store of each kind: a SQLite file and
// a PostgreSQL database. The two must pass the same suite.
func forEachStore(t *testing.T, test func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) {
		test(t, filepath.Join(t.TempDir(), "history.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		if pg == nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI needs a PostgreSQL server: %v", pgErr)
			}
			t.Skip(pgErr)
		}
		name := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "_"))
		dsn, err := pg.NewDatabase(fmt.Sprintf("%s_%d", name, dbSeq.Add(1)))
		if err != nil {
			t.Fatal(err)
		}
		test(t, dsn)
	})
}

func open(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func counts(t *testing.T, s *Store) Counts {
	t.Helper()
	c, err := s.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var day0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

func TestStoreMigrations(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		if v, err := s.Version(ctx); err != nil || v != SchemaVersion() {
			t.Fatalf("a new store is at version %d (%v), want %d", v, err, SchemaVersion())
		}
		// Opening again applies nothing twice (a migration run twice would
		// fail: CREATE TABLE of a table that exists).
		s2 := open(t, dsn)
		var rows int
		if err := s2.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&rows); err != nil || rows != SchemaVersion() {
			t.Fatalf("%d migration rows (%v), want %d", rows, err, SchemaVersion())
		}
		// A store a newer gcjitter migrated further is refused, by name.
		if _, err := s.db.ExecContext(ctx, s.bind(`INSERT INTO schema_migrations (version, applied) VALUES (?, 'later')`), SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, dsn)
		if err == nil || !strings.Contains(err.Error(), "use a newer gcjitter") {
			t.Fatalf("a store at a newer schema opened: %v", err)
		}
	})
}

// TestStoreAddIsIdempotent adds a results directory made by the real
// worker, twice: the second time changes nothing, and what is stored is the
// manifest's runs and every metric of the catalogue.
func TestStoreAddIsIdempotent(t *testing.T) {
	dir := filepath.Join("..", "gate", "testdata", "results")
	m, err := results.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		a, err := s.Add(ctx, dir, AddOptions{Label: "abc123", HostClass: "ci-cpu"})
		if err != nil {
			t.Fatal(err)
		}
		if a.Runs != len(m.Runs) || a.Values != measuredValues(m) {
			t.Errorf("added %d runs and %d values, want %d and %d", a.Runs, a.Values, len(m.Runs), measuredValues(m))
		}
		before := counts(t, s)
		again, err := s.Add(ctx, dir, AddOptions{Label: "abc123", HostClass: "ci-cpu"})
		if err != nil {
			t.Fatal(err)
		}
		if again.Runs != 0 || again.Values != 0 || counts(t, s) != before {
			t.Errorf("adding the same results again changed the store: %+v, %+v -> %+v", again, before, counts(t, s))
		}
		series, err := s.QueryRuns(ctx, Filter{Metric: "p50"})
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for _, se := range series {
			if se.Key.HostClass != "ci-cpu" || len(se.Nights) != 1 || se.Nights[0].Label != "abc123" {
				t.Errorf("series %v: %d nights, label %q", se.Key, len(se.Nights), se.Nights[0].Label)
			}
			if se.Nights[0].Env.Torch == "" || !strings.Contains(se.Nights[0].EnvKey, "torch") {
				t.Errorf("series %v: environment not kept: %+v", se.Key, se.Nights[0].Env)
			}
			got = append(got, se.Nights[0].Values...)
		}
		var want []float64
		for _, c := range m.Cases {
			for _, v := range c.Variants {
				for _, r := range m.Runs {
					if r.Case == c.Name && r.Variant == v.Name {
						want = append(want, r.Summary.P50)
					}
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("p50 values read back %v, want the manifest's %v", got, want)
		}
	})
}

// TestStorePartialNight: a night cut short is stored marked partial with
// what completed; added again when complete it gains the rest and loses
// the mark.
func TestStorePartialNight(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		rng := rand.New(rand.NewPCG(1, 1))
		m := night{host: "h1", class: "ci-cpu", started: day0, cases: 1, variants: 1, runs: 2, level: 1, pending: 2}.manifest(rng)
		a, err := s.AddManifest(ctx, m, "partial", AddOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Runs != 2 || a.Skipped != 2 || !strings.HasPrefix(a.Partial, "partial") {
			t.Fatalf("partial night added as %+v", a)
		}
		series, _ := s.Query(ctx, Filter{Metric: "p50"})
		if len(series) != 1 || series[0].Nights[0].Partial == "" {
			t.Fatalf("the night is not marked partial: %+v", series)
		}
		for _, r := range m.Runs[2:] {
			r.Status, r.Summary, r.Meta = results.StatusOK, m.Runs[0].Summary, m.Runs[0].Meta
		}
		a, err = s.AddManifest(ctx, m, "complete", AddOptions{})
		if err != nil {
			t.Fatal(err)
		}
		series, _ = s.Query(ctx, Filter{Metric: "p50"})
		if a.Runs != 2 || series[0].Nights[0].Partial != "" || series[0].Nights[0].Summary.Runs != 4 {
			t.Errorf("completed night: added %+v, stored %+v", a, series[0].Nights[0])
		}
	})
}

// TestStoreConcurrentWriters: two writers, each with its own connection,
// add different hosts' nights at once; nothing is lost.
func TestStoreConcurrentWriters(t *testing.T) {
	const nights = 12
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		open(t, dsn) // migrated once; the writers race on data, not schema
		var wg sync.WaitGroup
		errs := make(chan error, 2*nights)
		for w, host := range []string{"host-a", "host-b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := Open(ctx, dsn)
				if err != nil {
					errs <- err
					return
				}
				defer s.Close()
				rng := rand.New(rand.NewPCG(uint64(w), 9))
				for i := 0; i < nights; i++ {
					m := night{host: host, class: "class-" + host, started: day0.AddDate(0, 0, i), cases: 2, variants: 2, runs: 3, level: 1}.manifest(rng)
					if _, err := s.AddManifest(ctx, m, host, AddOptions{}); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		s := open(t, dsn)
		perRun := measuredValues(night{cases: 1, variants: 1, runs: 1, level: 1}.manifest(rand.New(rand.NewPCG(1, 1))))
		want := Counts{Nights: 2 * nights, Runs: 2 * nights * 2 * 2 * 3, Values: 2 * nights * 2 * 2 * 3 * perRun, Summaries: 2 * nights * 2 * 2}
		if got := counts(t, s); got != want {
			t.Errorf("after two concurrent writers: %+v, want %+v", got, want)
		}
	})
}

func TestStoreQueryFilters(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		rng := rand.New(rand.NewPCG(2, 2))
		for i := 0; i < 6; i++ {
			for _, class := range []string{"ci-cpu", "ascend-910b"} {
				m := night{host: class + "-1", class: class, started: day0.AddDate(0, 0, i), cases: 2, variants: 2, runs: 2, level: 1}.manifest(rng)
				if _, err := s.AddManifest(ctx, m, "synth", AddOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		series, err := s.Query(ctx, Filter{HostClass: "ci-cpu", Case: "case-01", Metric: "p99", Since: day0.AddDate(0, 0, 2)})
		if err != nil {
			t.Fatal(err)
		}
		if len(series) != 2 {
			t.Fatalf("%d series, want 2 (one per variant)", len(series))
		}
		for _, se := range series {
			if se.Key.HostClass != "ci-cpu" || se.Key.Case != "case-01" || se.Key.Metric != "p99" || len(se.Nights) != 4 {
				t.Errorf("series %v with %d nights, want ci-cpu case-01 p99 with 4", se.Key, len(se.Nights))
			}
			for i := 1; i < len(se.Nights); i++ {
				if !se.Nights[i].Started.After(se.Nights[i-1].Started) {
					t.Errorf("series %v: nights out of order", se.Key)
				}
			}
		}
	})
}

// measuredValues is how many metric values the completed runs of m carry:
// every metric a run measured (no device memory on a CPU, no memory at
// all in results from before it was recorded).
func measuredValues(m *results.Manifest) int {
	n := 0
	for _, r := range m.Runs {
		if r.Status != results.StatusOK || r.Summary == nil {
			continue
		}
		for _, mt := range stats.Metrics {
			if _, ok := mt.Measured(*r.Summary); ok {
				n++
			}
		}
	}
	return n
}
