package history

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// NightSummary is one night of one series in numbers: what detection, show
// and the dashboards read, stored when the night is added so that a year
// of nights is read without its runs.
type NightSummary struct {
	Runs     int     // runs the night measured the metric in
	Median   float64 // the night's one number in a series (stats.Quantile 0.5)
	Lo, Hi   float64 // benchmath's 95% interval of the median; ±Inf with too few runs
	Min, Max float64 // the runs' range (the dashboard's bar)
}

// Summarize summarises a night's values of one series (in any order).
func Summarize(values []float64) NightSummary {
	xs := slices.Clone(values)
	slices.Sort(xs)
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(xs, &benchmath.DefaultThresholds), 0.95)
	return NightSummary{Runs: len(xs), Median: stats.Quantile(xs, 0.5), Lo: s.Lo, Hi: s.Hi, Min: xs[0], Max: xs[len(xs)-1]}
}

// summaryGroup is what a night's summary row is of: a case's variant (and
// side) in one environment, one metric.
type summaryGroup struct {
	Case, Variant, Side, EnvKey, Metric string
}

// nightSummaries collects a night's values by group, then writes one
// summary row per group and one environment row per key.
type nightSummaries struct {
	night  string
	values map[summaryGroup][]float64
	envs   map[string]string // env key -> its JSON
	// A run at a time (run, done), by the run's group without metric.
	cur   summaryGroup
	row   []float64
	byRun map[summaryGroup][][]float64
}

func newNightSummaries(night string) *nightSummaries {
	return &nightSummaries{night: night, values: map[summaryGroup][]float64{}, envs: map[string]string{}}
}

func (ns *nightSummaries) add(g summaryGroup, envJSON string, v float64) {
	ns.values[g] = append(ns.values[g], v)
	if _, ok := ns.envs[g.EnvKey]; !ok {
		ns.envs[g.EnvKey] = envJSON
	}
}

// run gives a run's row of values, one per metric of the catalogue (NaN:
// not measured), for done to add: a night's values grouped by the run's
// group once, not by metric and group 15 times a run.
func (ns *nightSummaries) run(g summaryGroup, envJSON string) []float64 {
	if _, ok := ns.envs[g.EnvKey]; !ok {
		ns.envs[g.EnvKey] = envJSON
	}
	ns.cur = g
	ns.row = ns.row[:0]
	for range stats.Metrics {
		ns.row = append(ns.row, math.NaN())
	}
	return ns.row
}

func (ns *nightSummaries) done(row []float64) {
	if ns.byRun == nil {
		ns.byRun = map[summaryGroup][][]float64{}
	}
	vs := ns.byRun[ns.cur]
	if vs == nil {
		vs = make([][]float64, len(stats.Metrics))
	}
	for i, v := range row {
		if !math.IsNaN(v) {
			vs[i] = append(vs[i], v)
		}
	}
	ns.byRun[ns.cur] = vs
}

// flush moves what run and done gathered into values.
func (ns *nightSummaries) flush() {
	for g, vs := range ns.byRun {
		for i, xs := range vs {
			if len(xs) > 0 {
				g := g
				g.Metric = stats.Metrics[i].Name
				ns.values[g] = append(ns.values[g], xs...)
			}
		}
	}
	ns.byRun = nil
}

// interval is an interval end as stored: NULL where it is infinite (too
// few runs), which neither database keeps portably.
func interval(v float64) any {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return v
}

// compareGroups orders a night's rows, so that a night is written the
// same way every time.
func compareGroups(a, b summaryGroup) int {
	return cmp.Or(cmp.Compare(a.Case, b.Case), cmp.Compare(a.Variant, b.Variant), cmp.Compare(a.Side, b.Side),
		cmp.Compare(a.EnvKey, b.EnvKey), cmp.Compare(a.Metric, b.Metric))
}

// summaryColumns are night_summaries' columns, in the order rows() gives.
var summaryColumns = []string{"night_id", "case_name", "variant", "side", "env_key", "metric", "runs", "median", "lo", "hi", "min_value", "max_value"}

// rows are the night's summary rows and environment rows.
func (ns *nightSummaries) rows() (sums, envs [][]any) {
	ns.flush()
	groups := make([]summaryGroup, 0, len(ns.values))
	for g := range ns.values {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, compareGroups)
	for _, g := range groups {
		sum := Summarize(ns.values[g])
		sums = append(sums, []any{ns.night, g.Case, g.Variant, g.Side, g.EnvKey, g.Metric, sum.Runs, sum.Median, interval(sum.Lo), interval(sum.Hi), sum.Min, sum.Max})
	}
	keys := make([]string, 0, len(ns.envs))
	for k := range ns.envs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		envs = append(envs, []any{ns.night, k, ns.envs[k]})
	}
	return sums, envs
}

// insert writes the summaries of a night new to the store with the bulk
// path (there is nothing to replace).
func (ns *nightSummaries) insert(ctx context.Context, s *Store, conn *sql.Conn, tx *sql.Tx) error {
	sums, envs := ns.rows()
	if err := s.bulkInsert(ctx, conn, tx, "night_envs", []string{"night_id", "env_key", "env"}, envs); err != nil {
		return err
	}
	return s.bulkInsert(ctx, conn, tx, "night_summaries", summaryColumns, sums)
}

// write upserts the night's summaries and environments: a night that
// gained runs (a partial night completed) has its summaries replaced, and
// a night whose runs were pruned keeps those it had.
func (ns *nightSummaries) write(ctx context.Context, s *Store, tx *sql.Tx) error {
	ns.flush()
	if len(ns.values) == 0 {
		return nil
	}
	env, err := tx.PrepareContext(ctx, s.bind(`INSERT INTO night_envs (night_id, env_key, env) VALUES (?, ?, ?)
		ON CONFLICT (night_id, env_key) DO UPDATE SET env = excluded.env`))
	if err != nil {
		return err
	}
	defer env.Close()
	keys := make([]string, 0, len(ns.envs))
	for k := range ns.envs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, err := env.ExecContext(ctx, ns.night, k, ns.envs[k]); err != nil {
			return err
		}
	}
	groups := make([]summaryGroup, 0, len(ns.values))
	for g := range ns.values {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, compareGroups)
	// Many rows a statement: on PostgreSQL a statement is a round trip.
	const width, perInsert = 12, 1000
	for len(groups) > 0 {
		n := min(len(groups), perInsert)
		args := make([]any, 0, n*width)
		for _, g := range groups[:n] {
			sum := Summarize(ns.values[g])
			args = append(args, ns.night, g.Case, g.Variant, g.Side, g.EnvKey, g.Metric, sum.Runs, sum.Median, interval(sum.Lo), interval(sum.Hi), sum.Min, sum.Max)
		}
		q := `INSERT INTO night_summaries (night_id, case_name, variant, side, env_key, metric, runs, median, lo, hi, min_value, max_value) VALUES ` +
			strings.TrimSuffix(strings.Repeat("("+strings.TrimSuffix(strings.Repeat("?, ", width), ", ")+"), ", n), ", ") +
			` ON CONFLICT (night_id, case_name, variant, side, env_key, metric) DO UPDATE SET runs = excluded.runs, median = excluded.median,
			lo = excluded.lo, hi = excluded.hi, min_value = excluded.min_value, max_value = excluded.max_value`
		if _, err := tx.ExecContext(ctx, s.bind(q), args...); err != nil {
			return err
		}
		groups = groups[n:]
	}
	return nil
}

// summarizeStored recomputes a night's summaries from the runs the store
// holds of it: for a night that gained runs, and for nights stored before
// summaries were (the migration).
func summarizeStored(ctx context.Context, s *Store, tx *sql.Tx, night string) error {
	rows, err := tx.QueryContext(ctx, s.bind(`SELECT case_name, variant, side, env_key, env, metrics FROM runs WHERE night_id = ?`), night)
	if err != nil {
		return err
	}
	defer rows.Close()
	ns := newNightSummaries(night)
	for rows.Next() {
		var g summaryGroup
		var env string
		var raw []byte
		if err := rows.Scan(&g.Case, &g.Variant, &g.Side, &g.EnvKey, &env, &raw); err != nil {
			return err
		}
		metrics, err := decodeMetrics(raw)
		if err != nil {
			return err
		}
		for _, mt := range stats.Metrics { // catalogue order, so a night's rows are in a stable order
			if v, ok := metrics[mt.Name]; ok {
				g := g
				g.Metric = mt.Name
				ns.add(g, env, v)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	return ns.write(ctx, s, tx)
}

// backfillSummaries brings a store of schema 3 to 4: each run's values
// from run_values into its metrics column, every night summarised, and
// run_values dropped. A night at a time, so memory stays one night's.
func backfillSummaries(ctx context.Context, s *Store, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM nights ORDER BY id`)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	update, err := tx.PrepareContext(ctx, s.bind(`UPDATE runs SET metrics = ? WHERE night_id = ? AND run_id = ?`))
	if err != nil {
		return err
	}
	defer update.Close()
	for _, id := range ids {
		if err := moveValues(ctx, s, tx, update, id); err != nil {
			return fmt.Errorf("night %s: %v", id, err)
		}
		if err := summarizeStored(ctx, s, tx, id); err != nil {
			return fmt.Errorf("summarising night %s: %v", id, err)
		}
	}
	_, err = tx.ExecContext(ctx, `DROP TABLE run_values`)
	return err
}

// moveValues writes a night's rows of run_values into its runs' metrics.
func moveValues(ctx context.Context, s *Store, tx *sql.Tx, update *sql.Stmt, night string) error {
	rows, err := tx.QueryContext(ctx, s.bind(`SELECT run_id, metric, value FROM run_values WHERE night_id = ?`), night)
	if err != nil {
		return err
	}
	byRun := map[string]map[string]float64{}
	for rows.Next() {
		var run, metric string
		var v float64
		if err := rows.Scan(&run, &metric, &v); err != nil {
			rows.Close()
			return err
		}
		if byRun[run] == nil {
			byRun[run] = map[string]float64{}
		}
		byRun[run][metric] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for run, m := range byRun {
		raw, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("run %s: %v", run, err) // a NaN or Inf, which neither store holds
		}
		if _, err := update.ExecContext(ctx, string(raw), night, run); err != nil {
			return err
		}
	}
	return nil
}

// Pruned is what a prune removed.
type Pruned struct {
	Nights, Runs int // nights whose runs went, and the runs
}

// PruneRuns deletes the runs of nights that started before cutoff, in one
// transaction; their summaries stay, so series, detection and the
// dashboards read the same nights as before (a gate's history:N baseline
// and show -runs read runs, so they see only the nights kept). A night
// without summaries keeps its runs: they are its only record.
func (s *Store) PruneRuns(ctx context.Context, cutoff time.Time) (Pruned, error) {
	var p Pruned
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return p, fmt.Errorf("history %s: %v", s, err)
	}
	defer tx.Rollback()
	old := `SELECT n.id FROM nights n WHERE n.started < ? AND EXISTS (SELECT 1 FROM night_summaries m WHERE m.night_id = n.id)`
	at := cutoff.UTC().Format(time.RFC3339Nano)
	if err := tx.QueryRowContext(ctx, s.bind(`SELECT COUNT(DISTINCT night_id) FROM runs WHERE night_id IN (`+old+`)`), at).Scan(&p.Nights); err != nil {
		return p, fmt.Errorf("history %s: prune: %v", s, err)
	}
	res, err := tx.ExecContext(ctx, s.bind(`DELETE FROM runs WHERE night_id IN (`+old+`)`), at)
	if err != nil {
		return p, fmt.Errorf("history %s: prune: %v", s, err)
	}
	n, _ := res.RowsAffected()
	p.Runs = int(n)
	if err := tx.Commit(); err != nil {
		return p, fmt.Errorf("history %s: prune: %v", s, err)
	}
	return p, nil
}

// KeepRuns parses -keep-runs: days (90d) or a Go duration (2160h), more
// than zero; the cutoff is that long before now.
func KeepRuns(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return now.AddDate(0, 0, -n), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("-keep-runs %q: give days (90d) or a duration (2160h), more than zero", s)
}

// envOf decodes an environment's JSON, once per distinct JSON.
func envOf(cache map[string]results.Env, raw string) results.Env {
	e, ok := cache[raw]
	if !ok {
		_ = json.Unmarshal([]byte(raw), &e)
		cache[raw] = e
	}
	return e
}
