package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// findingRow is what a finding says, for comparing two detections: the
// nights by id, not by pointer, and without the runs' values.
type findingRow struct {
	Key                     SeriesKey
	Index                   int
	First, Last             string
	Before, After, Size     float64
	Lo, Hi, P               float64
	Regression, Improvement bool
	Env                     string
}

func findingRows(fs []Finding) []findingRow {
	var out []findingRow
	for _, f := range fs {
		out = append(out, findingRow{f.Key, f.Index, f.First.ID, f.Last.ID, f.Before, f.After, f.Size, f.Lo, f.Hi, f.P,
			f.Regression, f.Improvement, strings.Join(append(f.EnvChanges, f.Near...), "; ")})
	}
	return out
}

// knownTruthStore holds 200 series (100 cases x 2 variants, p50) of 60
// nights of 5 runs: even cases step up 10% at night 30, odd ones are flat;
// each series has its own night-to-night noise (3.5%) beside the night's
// shared one, and torch changes at night 45 for every case.
func knownTruthStore(t *testing.T, dsn string) *Store {
	t.Helper()
	ctx := context.Background()
	s := open(t, dsn)
	rng := rand.New(rand.NewPCG(27, 27))
	for i := 0; i < 60; i++ {
		n := night{host: "vm-1", class: "ci-cpu", started: day0.AddDate(0, 0, i), cases: 100, variants: 2, runs: 5, level: 1}
		if i >= 45 {
			n.torch = "2.4.0"
		}
		m := n.manifest(rng)
		noise := map[string]float64{}
		for _, r := range m.Runs {
			k := r.Case + "/" + r.Variant
			if _, ok := noise[k]; !ok {
				noise[k] = math.Exp(0.035 * rng.NormFloat64())
			}
			f := noise[k]
			var c int
			fmt.Sscanf(r.Case, "case-%d", &c)
			if c%2 == 0 && i >= 30 {
				f *= 1.10
			}
			r.Summary.P50 *= f
		}
		if _, err := s.AddManifest(ctx, m, "synth", AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestSummariesDetectAsRuns: detection on the stored night summaries
// finds exactly what it finds on the runs, on 200 series of known truth
// (and finds the truth).
func TestSummariesDetectAsRuns(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := knownTruthStore(t, dsn)
		fromSums, err := s.Query(ctx, Filter{Metric: "p50"})
		if err != nil {
			t.Fatal(err)
		}
		fromRuns, err := s.QueryRuns(ctx, Filter{Metric: "p50"})
		if err != nil {
			t.Fatal(err)
		}
		if len(fromSums) != 200 || len(fromRuns) != 200 {
			t.Fatalf("%d series from summaries, %d from runs, want 200", len(fromSums), len(fromRuns))
		}
		for i := range fromSums {
			for j := range fromSums[i].Nights {
				if a, b := fromSums[i].Nights[j].Summary, fromRuns[i].Nights[j].Summary; a != b {
					t.Fatalf("%v night %d: stored summary %+v, from the runs %+v", fromSums[i].Key, j, a, b)
				}
			}
		}
		a, b := Detect(fromSums, DetectOptions{}), Detect(fromRuns, DetectOptions{})
		if diff := cmp.Diff(findingRows(b), findingRows(a)); diff != "" {
			t.Fatalf("findings from summaries differ from those from runs (-runs +summaries):\n%s", diff)
		}
		found, false_ := 0, 0
		for _, f := range a {
			var c int
			fmt.Sscanf(f.Key.Case, "case-%d", &c)
			switch {
			case c%2 == 0 && f.Index >= 28 && f.Index <= 32 && f.Size > 0:
				found++
			case c%2 == 1:
				false_++
			}
		}
		t.Logf("%d findings; +10%% step found within 2 nights in %d/100, a change point in %d/100 flat series", len(a), found, false_)
		if found < 95 || false_ > 10 {
			t.Errorf("step found in %d/100 (want >= 95), change points in %d/100 flat series (want <= 10)", found, false_)
		}
	})
}

// TestPruneKeepsFindings: pruning the runs of old nights leaves their
// summaries, so series and detection are the same after; the runs of the
// nights kept are still read, and adding a pruned night again changes no
// summary.
func TestPruneKeepsFindings(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		rng := rand.New(rand.NewPCG(4, 4))
		var manifests []*results.Manifest
		for i := 0; i < 40; i++ {
			n := night{host: "vm-1", class: "ci-cpu", started: day0.AddDate(0, 0, i), cases: 2, variants: 2, runs: 5, level: 1}
			if i >= 25 {
				n.level = 1.15
			}
			m := n.manifest(rng)
			manifests = append(manifests, m)
			if _, err := s.AddManifest(ctx, m, "synth", AddOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		before, err := s.Query(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		want := Detect(PrimaryOnly(before, stats.DefaultPrimary), DetectOptions{})
		if len(Regressions(want, time.Time{})) == 0 {
			t.Fatal("no regression in the store to keep")
		}
		c0 := counts(t, s)
		p, err := s.PruneRuns(ctx, day0.AddDate(0, 0, 30))
		if err != nil {
			t.Fatal(err)
		}
		c1 := counts(t, s)
		if p.Nights != 30 || p.Runs != 30*2*2*5 || c1.Runs != 10*2*2*5 || c1.Summaries != c0.Summaries || c1.Nights != 40 {
			t.Fatalf("pruned %+v: %+v -> %+v, want the runs of 30 nights gone and every summary kept", p, c0, c1)
		}
		after, err := s.Query(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(seriesRows(before), seriesRows(after)); diff != "" {
			t.Errorf("series changed by the prune (-before +after):\n%s", diff)
		}
		got := Detect(PrimaryOnly(after, stats.DefaultPrimary), DetectOptions{})
		if diff := cmp.Diff(findingRows(want), findingRows(got)); diff != "" {
			t.Errorf("findings changed by the prune (-before +after):\n%s", diff)
		}
		runs, err := s.QueryRuns(ctx, Filter{Metric: "p50"})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 4 || len(runs[0].Nights) != 10 || len(runs[0].Nights[0].Values) != 5 {
			t.Errorf("runs after the prune: %d series, %d nights", len(runs), len(runs[0].Nights))
		}
		// A pruned night added again: its runs are back, its summaries as they were.
		if _, err := s.AddManifest(ctx, manifests[3], "again", AddOptions{}); err != nil {
			t.Fatal(err)
		}
		again, _ := s.Query(ctx, Filter{})
		if diff := cmp.Diff(seriesRows(before), seriesRows(again)); diff != "" {
			t.Errorf("series changed by adding a pruned night again (-before +after):\n%s", diff)
		}
		// Pruning again removes the night added back, nothing else.
		if p, err := s.PruneRuns(ctx, day0.AddDate(0, 0, 30)); err != nil || p.Nights != 1 {
			t.Errorf("second prune: %+v, %v", p, err)
		}
	})
}

// seriesRows are series as comparable text: key, nights and summaries.
func seriesRows(series []*Series) []string {
	var out []string
	for _, se := range series {
		for _, n := range se.Nights {
			out = append(out, fmt.Sprintf("%v %s %s %s %+v", se.Key, n.ID, n.Started.UTC().Format(time.RFC3339), n.EnvKey, n.Summary))
		}
	}
	return out
}

func TestKeepRuns(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{"90d": now.AddDate(0, 0, -90), "1d": now.AddDate(0, 0, -1), "48h": now.Add(-48 * time.Hour)} {
		if got, err := KeepRuns(in, now); err != nil || !got.Equal(want) {
			t.Errorf("KeepRuns(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0d", "-3d", "90", "d", "3 days", "0s", "-1h"} {
		if _, err := KeepRuns(in, now); err == nil || !strings.Contains(err.Error(), "give days (90d)") {
			t.Errorf("KeepRuns(%q): %v, want a clear error", in, err)
		}
	}
}

// oldStore writes manifests into a store of schema 3 (the last before
// night summaries): the released migrations and the inserts gcjitter then
// made, a value per row in run_values.
func oldStore(t *testing.T, dsn string, ms []*results.Manifest) {
	t.Helper()
	ctx := context.Background()
	s := &Store{dsn: dsn, postgres: strings.HasPrefix(dsn, "postgres")}
	var err error
	if s.postgres {
		s.db, err = sql.Open("pgx", dsn)
	} else {
		s.db, err = sql.Open("sqlite", "file:"+dsn)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.db.Close()
	tx, err := s.db.BeginTx(ctx, nil) // one commit: fast, and all of it or nothing
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := tx.ExecContext(ctx, s.bind(q), args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)`)
	for v, m := range migrations[:3] {
		for _, stmt := range strings.Split(m, ";") {
			exec(stmt)
		}
		exec(`INSERT INTO schema_migrations (version, applied) VALUES (?, 'old')`, v+1)
	}
	for _, m := range ms {
		id := NightID(m)
		exec(`INSERT INTO nights (id, started, finished, host_class, host, cpu_model, tool, label, partial, command, source, added)
			VALUES (?, ?, '', ?, ?, '', 'old', '', '', '', 'old', '')`, id, m.Started.UTC().Format(time.RFC3339Nano), m.HostClass, m.Host.Hostname)
		for _, r := range m.Runs {
			if r.Status != results.StatusOK {
				continue
			}
			env := r.Meta.Env(m.Worker)
			envJSON := fmt.Sprintf(`{"python":%q,"python_build":%q,"torch":%q,"device":%q,"worker":%q}`, env.Python, env.Build, env.Torch, env.Device, env.Worker)
			exec(`INSERT INTO runs (night_id, run_id, case_name, variant, side, run_index, steps, env_key, env,
				gen0_collections, gen1_collections, gen2_collections, gen0_collected, gen1_collected, gen2_collected)
				VALUES (?, ?, ?, ?, '', ?, ?, ?, ?, 1, 2, 3, 4, 5, 6)`, id, r.ID, r.Case, r.Variant, r.Index, r.Summary.Steps, env.Key(), envJSON)
			for _, mt := range stats.Metrics {
				if v := mt.Value(*r.Summary); !math.IsNaN(v) && !math.IsInf(v, 0) {
					exec(`INSERT INTO run_values (night_id, run_id, metric, value) VALUES (?, ?, ?, ?)`, id, r.ID, mt.Name, v)
				}
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationSummarisesOldStores: a store written with schema 3 (values
// a row each, no summaries) is upgraded when opened: its values move into
// the runs, every night is summarised from them, and series, findings and
// runs read back are those of a store the same nights were added to now.
func TestMigrationSummarisesOldStores(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var ms []*results.Manifest
	for i := 0; i < 30; i++ {
		n := night{host: "vm-1", class: "ci-cpu", started: day0.AddDate(0, 0, i), cases: 2, variants: 2, runs: 3, level: 1}
		if i >= 20 {
			n.level, n.torch = 1.2, "2.4.0"
		}
		ms = append(ms, n.manifest(rng))
	}
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		oldStore(t, dsn, ms)
		s := open(t, dsn) // migrates
		if v, err := s.Version(ctx); err != nil || v != SchemaVersion() {
			t.Fatalf("migrated store at version %d (%v), want %d", v, err, SchemaVersion())
		}
		var tables int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM night_summaries`).Scan(&tables); err != nil || tables == 0 {
			t.Fatalf("no summaries after the migration: %d, %v", tables, err)
		}
		if _, err := s.db.ExecContext(ctx, `SELECT 1 FROM run_values`); err == nil {
			t.Error("run_values is still there after the migration")
		}
		// The same nights added to a new store by this gcjitter.
		fdsn := dsn + "-fresh"
		if strings.HasPrefix(dsn, "postgres") {
			var err error
			if fdsn, err = pg.NewDatabase(fmt.Sprintf("fresh_%d", dbSeq.Add(1))); err != nil {
				t.Fatal(err)
			}
		}
		fresh := open(t, fdsn)
		for _, m := range ms {
			if _, err := fresh.AddManifest(ctx, m, "new", AddOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Query(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.Query(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			t.Fatal("no series in the migrated store")
		}
		if diff := cmp.Diff(seriesRows(want), seriesRows(got)); diff != "" {
			t.Errorf("migrated series differ from a new store's (-new +migrated):\n%s", diff)
		}
		if diff := cmp.Diff(findingRows(Detect(want, DetectOptions{})), findingRows(Detect(got, DetectOptions{}))); diff != "" {
			t.Errorf("migrated findings differ (-new +migrated):\n%s", diff)
		}
		gr, _ := s.QueryRuns(ctx, Filter{Metric: "p99"})
		wr, _ := fresh.QueryRuns(ctx, Filter{Metric: "p99"})
		if len(gr) != 4 || fmt.Sprint(gr[0].Nights[29].Values) != fmt.Sprint(wr[0].Nights[29].Values) {
			t.Errorf("runs after the migration: %d series", len(gr))
		}
		c := counts(t, s)
		if c.Runs != 30*2*2*3 || c.Values != counts(t, fresh).Values {
			t.Errorf("migrated store counts %+v, want those of a new one %+v", c, counts(t, fresh))
		}
		// Adding a night it held already changes nothing.
		if a, err := s.AddManifest(ctx, ms[5], "again", AddOptions{}); err != nil || a.Runs != 0 {
			t.Errorf("adding an old night again: %+v, %v", a, err)
		}
	})
}

// TestBadMetricsAreNamed: a run whose metrics column is not a JSON object
// of numbers is an error naming the night and run, not a silent zero.
func TestBadMetricsAreNamed(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir()+"/h.db")
	m := night{host: "vm-1", class: "ci-cpu", started: day0, cases: 1, variants: 1, runs: 2, level: 1}.manifest(rand.New(rand.NewPCG(1, 1)))
	if _, err := s.AddManifest(ctx, m, "synth", AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET metrics = '{"p50": "fast"}' WHERE run_index = 1`); err != nil {
		t.Fatal(err)
	}
	_, err := s.QueryRuns(ctx, Filter{})
	if err == nil || !strings.Contains(err.Error(), "run case-00/variant-0/1") || !strings.Contains(err.Error(), "metrics") {
		t.Errorf("bad metrics read as %v", err)
	}
}

// TestDetectAllMatchesDetect: detecting a host class at a time finds what
// detecting every series at once finds, in the same order.
func TestDetectAllMatchesDetect(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir()+"/h.db")
	rng := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 30; i++ {
		for j, class := range []string{"ci-cpu", "ascend-910b", "a100"} {
			level := 1.0
			if i >= 20 && j != 1 {
				level = 1.2
			}
			m := night{host: class + "-1", class: class, started: day0.AddDate(0, 0, i), cases: 2, variants: 2, runs: 3, level: level}.manifest(rng)
			if _, err := s.AddManifest(ctx, m, "synth", AddOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := s.Query(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	primary := PrimaryOnly(all, stats.DefaultPrimary)
	want := Detect(primary, DetectOptions{})
	got, n, err := s.DetectAll(ctx, Filter{}, stats.DefaultPrimary, DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(primary) || len(want) == 0 {
		t.Fatalf("DetectAll read %d series, want %d; %d findings", n, len(primary), len(want))
	}
	if diff := cmp.Diff(findingRows(want), findingRows(got)); diff != "" {
		t.Errorf("DetectAll differs from Detect (-Detect +DetectAll):\n%s", diff)
	}
	one, n, err := s.DetectAll(ctx, Filter{HostClass: "a100", Metric: "p99"}, stats.DefaultPrimary, DetectOptions{})
	if err != nil || n != 4 {
		t.Fatalf("DetectAll of a100 p99: %d series, %v", n, err)
	}
	for _, f := range one {
		if f.Key.HostClass != "a100" || f.Key.Metric != "p99" {
			t.Errorf("finding outside the filter: %v", f.Key)
		}
	}
	if _, n, _ := s.DetectAll(ctx, Filter{HostClass: "nope"}, nil, DetectOptions{}); n != 0 {
		t.Errorf("a class without nights read %d series", n)
	}
}

// TestGainedRunsKeepTheirEnvironment: a night that gains runs in another
// environment (a partial night completed after an upgrade) reads back both
// environments, from the summaries and from the runs.
func TestGainedRunsKeepTheirEnvironment(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		m := night{host: "h1", class: "ci-cpu", started: day0, cases: 1, variants: 1, runs: 2, level: 1, pending: 2}.manifest(rand.New(rand.NewPCG(1, 1)))
		if _, err := s.AddManifest(ctx, m, "partial", AddOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, r := range m.Runs[2:] {
			meta := *m.Runs[0].Meta
			meta.Torch = "2.4.0"
			r.Status, r.Summary, r.Meta = results.StatusOK, m.Runs[0].Summary, &meta
		}
		if _, err := s.AddManifest(ctx, m, "complete", AddOptions{}); err != nil {
			t.Fatal(err)
		}
		for name, query := range map[string]func(context.Context, Filter) ([]*Series, error){"summaries": s.Query, "runs": s.QueryRuns} {
			series, err := query(ctx, Filter{Metric: "p50"})
			if err != nil {
				t.Fatal(err)
			}
			var torch []string
			for _, n := range series[0].Nights {
				torch = append(torch, fmt.Sprintf("%s:%d", n.Env.Torch, n.Summary.Runs))
			}
			if got := strings.Join(torch, " "); got != "1.13.1:2 2.4.0:2" {
				t.Errorf("from the %s: the night's environments read %q, want 1.13.1:2 2.4.0:2", name, got)
			}
		}
	})
}

// TestSummariesColumnRoundTrip: what encodeSummaries writes, the scanner
// reads back exactly as encoding/json does; other forms go to
// encoding/json, and bad ones are errors.
func TestSummariesColumnRoundTrip(t *testing.T) {
	vs := make([][]float64, len(stats.Metrics))
	vs[0] = []float64{4.1e7, 4.3e7, 3.9999999999999996e7, 4.2e7, 4.05e7, 4.11e7, 4.09e7, 4.4e7, 4.0e7, 4.2e7} // an interval
	vs[1] = []float64{1.5}                                                                                    // too few for one: null
	vs[2] = []float64{-3, 0, 2.5e-300}
	raw := encodeSummaries(vs)
	fast, ok := scanSummaries([]byte(raw))
	if !ok {
		t.Fatalf("the scanner refused %s", raw)
	}
	var m map[string][6]*float64
	if err := json.Unmarshal([]byte(raw), &m); err != nil || len(m) != 3 || len(fast) != 3 {
		t.Fatalf("%s: %v, %d metrics", raw, err, len(fast))
	}
	for i, xs := range vs[:3] {
		if got, want := fast[stats.Metrics[i].Name], Summarize(xs); got != want {
			t.Errorf("%s: scanned %+v, want %+v", stats.Metrics[i].Name, got, want)
		}
	}
	if s := fast[stats.Metrics[1].Name]; !math.IsInf(s.Lo, -1) || !math.IsInf(s.Hi, 1) {
		t.Errorf("a null interval read as %+v", s)
	}
	// Spaces (another writer): not the scanner's form, still read.
	spaced := `{"p50": [3, 1, null, null, 1, 2]}`
	if _, ok := scanSummaries([]byte(spaced)); ok {
		t.Error("the scanner took a spaced form")
	}
	if got, err := decodeSummaries([]byte(spaced)); err != nil || got["p50"].Runs != 3 || !math.IsInf(got["p50"].Hi, 1) {
		t.Errorf("spaced form read as %+v, %v", got, err)
	}
	for _, bad := range []string{`{"p50":[3,1,2]}`, `{"p50":[3,null,1,2,1,2]}`, `[1]`, `{"p50":[3,1,x,2,1,2]}`, ``} {
		if got, err := decodeSummaries([]byte(bad)); err == nil {
			t.Errorf("%q read as %+v", bad, got)
		}
	}
}

// TestShowRuns: show prints the summaries; show -runs (QueryRuns) adds each
// run's value, and after a prune only the nights whose runs were kept.
func TestShowRuns(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir()+"/h.db")
	rng := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 3; i++ {
		m := night{host: "vm-1", class: "ci-cpu", started: day0.AddDate(0, 0, i), cases: 1, variants: 1, runs: 3, level: 1}.manifest(rng)
		if _, err := s.AddManifest(ctx, m, "synth", AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	show := func(query func(context.Context, Filter) ([]*Series, error)) string {
		series, err := query(ctx, Filter{Metric: "p50"})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		WriteSeries(&b, series)
		return b.String()
	}
	if out := show(s.Query); !strings.Contains(out, "(3 nights)") || strings.Contains(out, "values") {
		t.Errorf("show:\n%s", out)
	}
	out := show(s.QueryRuns)
	if !strings.Contains(out, "(3 nights)") || !strings.Contains(out, "values") || !regexp.MustCompile(`ms \S+ms \S+ms\n`).MatchString(out) {
		t.Errorf("show -runs has no column of each run's value:\n%s", out)
	}
	if _, err := s.PruneRuns(ctx, day0.AddDate(0, 0, 2)); err != nil {
		t.Fatal(err)
	}
	if out := show(s.QueryRuns); !strings.Contains(out, "(1 nights)") {
		t.Errorf("show -runs after pruning 2 of 3 nights:\n%s", out)
	}
	if out := show(s.Query); !strings.Contains(out, "(3 nights)") {
		t.Errorf("show after pruning:\n%s", out)
	}
}
