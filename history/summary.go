package history

import (
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

// interval is an interval end as stored: NULL where it is infinite (too
// few runs), which neither database keeps portably.
func interval(v float64) any {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return v
}

// write upserts the night's summaries and environments: a night that
// gained runs (a partial night completed) has its summaries replaced, and
// a night whose runs were pruned keeps those it had.
func (ns *nightSummaries) write(ctx context.Context, s *Store, tx *sql.Tx) error {
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
	slices.SortFunc(groups, func(a, b summaryGroup) int {
		return strings.Compare(a.Case+"\x00"+a.Variant+"\x00"+a.Side+"\x00"+a.EnvKey+"\x00"+a.Metric,
			b.Case+"\x00"+b.Variant+"\x00"+b.Side+"\x00"+b.EnvKey+"\x00"+b.Metric)
	})
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
	rows, err := tx.QueryContext(ctx, s.bind(`SELECT r.case_name, r.variant, r.side, r.env_key, r.env, v.metric, v.value
		FROM runs r JOIN run_values v ON v.night_id = r.night_id AND v.run_id = r.run_id WHERE r.night_id = ?`), night)
	if err != nil {
		return err
	}
	ns := newNightSummaries(night)
	for rows.Next() {
		var g summaryGroup
		var env string
		var v float64
		if err := rows.Scan(&g.Case, &g.Variant, &g.Side, &g.EnvKey, &env, &g.Metric, &v); err != nil {
			rows.Close()
			return err
		}
		ns.add(g, env, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return ns.write(ctx, s, tx)
}

// backfillSummaries summarises every night of a store written before
// summaries were stored (migration 4), a night at a time so that memory
// stays one night's.
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
	for _, id := range ids {
		if err := summarizeStored(ctx, s, tx, id); err != nil {
			return fmt.Errorf("summarising night %s: %v", id, err)
		}
	}
	return nil
}

// Pruned is what a prune removed.
type Pruned struct {
	Nights, Runs, Values int // nights whose runs went, and the runs and values
}

// PruneRuns deletes the runs (and their values) of nights that started
// before cutoff, in one transaction; their summaries stay, so series,
// detection and the dashboards read the same nights as before. A night
// without a summary (none after migration 4) keeps its runs: they are its
// only record.
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
	for _, d := range []struct {
		table string
		n     *int
	}{{"run_values", &p.Values}, {"runs", &p.Runs}} {
		res, err := tx.ExecContext(ctx, s.bind(`DELETE FROM `+d.table+` WHERE night_id IN (`+old+`)`), at)
		if err != nil {
			return p, fmt.Errorf("history %s: prune: %v", s, err)
		}
		n, _ := res.RowsAffected()
		*d.n = int(n)
	}
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
