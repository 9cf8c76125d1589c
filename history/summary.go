package history

import (
	"bytes"
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
// side) in one environment. The row holds every metric's summary.
type summaryGroup struct {
	Case, Variant, Side, EnvKey string
}

// nightSummaries collects a night's values by group and metric, then
// writes one summary row per group and one environment row per key.
type nightSummaries struct {
	night  string
	values map[summaryGroup][][]float64 // by stats.Metrics index
	envs   map[string]string            // env key -> its JSON
	order  []summaryGroup               // first seen first
}

func newNightSummaries(night string) *nightSummaries {
	return &nightSummaries{night: night, values: map[summaryGroup][][]float64{}, envs: map[string]string{}}
}

// group is g's values by metric, made on first use.
func (ns *nightSummaries) group(g summaryGroup, envJSON string) [][]float64 {
	vs := ns.values[g]
	if vs == nil {
		vs = make([][]float64, len(stats.Metrics))
		ns.values[g] = vs
		ns.order = append(ns.order, g)
		if _, ok := ns.envs[g.EnvKey]; !ok {
			ns.envs[g.EnvKey] = envJSON
		}
	}
	return vs
}

// add adds a run's values, one per metric of the catalogue (NaN: not
// measured).
func (ns *nightSummaries) add(g summaryGroup, envJSON string, row []float64) {
	vs := ns.group(g, envJSON)
	for i, v := range row {
		if !math.IsNaN(v) {
			vs[i] = append(vs[i], v)
		}
	}
}

// interval is an interval end as stored: null where it is infinite (too
// few runs), which JSON cannot hold.
func interval(b []byte, v float64) []byte {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// summaryColumns are night_summaries' columns, in the order rows() gives.
var summaryColumns = []string{"night_id", "case_name", "variant", "side", "env_key", "metrics"}

// encodeSummaries is a group's metrics column: a JSON object of each
// measured metric's [runs, median, lo, hi, min, max], lo and hi null when
// the night has too few runs for an interval. One row a group, not one a
// metric: a night is 100 rows, not 1,500, and its keys are stored once.
func encodeSummaries(vs [][]float64) string {
	b := []byte{'{'}
	for i, xs := range vs {
		if len(xs) == 0 {
			continue
		}
		sum := Summarize(xs)
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, stats.Metrics[i].Name)
		b = append(b, ":["...)
		b = strconv.AppendInt(b, int64(sum.Runs), 10)
		for j, v := range []float64{sum.Median, sum.Lo, sum.Hi, sum.Min, sum.Max} {
			b = append(b, ',')
			if j == 1 || j == 2 {
				b = interval(b, v)
			} else {
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
			}
		}
		b = append(b, ']')
	}
	return string(append(b, '}'))
}

// decodeSummaries reads a metrics column of night_summaries: the form
// encodeSummaries writes by a scanner that allocates nothing per number (a
// year is half a million of them; encoding/json's pointers were most of
// the read), anything else by encoding/json, whose errors name the fault.
func decodeSummaries(raw []byte) (map[string]NightSummary, error) {
	if out, ok := scanSummaries(raw); ok {
		return out, nil
	}
	var m map[string][6]*float64
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("a night's summaries %.40q: %v", raw, err)
	}
	out := make(map[string]NightSummary, len(m))
	for name, a := range m {
		if a[0] == nil || a[1] == nil || a[4] == nil || a[5] == nil {
			return nil, fmt.Errorf("a night's summary of %s: %.60q: want [runs, median, lo, hi, min, max]", name, raw)
		}
		sum := NightSummary{Runs: int(*a[0]), Median: *a[1], Lo: math.Inf(-1), Hi: math.Inf(1), Min: *a[4], Max: *a[5]}
		if a[2] != nil {
			sum.Lo = *a[2]
		}
		if a[3] != nil {
			sum.Hi = *a[3]
		}
		out[name] = sum
	}
	return out, nil
}

// rows are the night's summary rows and environment rows.
func (ns *nightSummaries) rows() (sums, envs [][]any) {
	groups := slices.Clone(ns.order)
	slices.SortFunc(groups, func(a, b summaryGroup) int {
		return cmp.Or(cmp.Compare(a.Case, b.Case), cmp.Compare(a.Variant, b.Variant), cmp.Compare(a.Side, b.Side), cmp.Compare(a.EnvKey, b.EnvKey))
	})
	for _, g := range groups {
		sums = append(sums, []any{ns.night, g.Case, g.Variant, g.Side, g.EnvKey, encodeSummaries(ns.values[g])})
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
	sums, envs := ns.rows()
	envs = slices.DeleteFunc(envs, func(r []any) bool { return r[2] == "" }) // never one known replaced by none
	for _, q := range []struct {
		sql  string
		rows [][]any
	}{
		{`INSERT INTO night_envs (night_id, env_key, env) VALUES (?, ?, ?) ON CONFLICT (night_id, env_key) DO UPDATE SET env = excluded.env`, envs},
		{`INSERT INTO night_summaries (night_id, case_name, variant, side, env_key, metrics) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (night_id, case_name, variant, side, env_key) DO UPDATE SET metrics = excluded.metrics`, sums},
	} {
		stmt, err := tx.PrepareContext(ctx, s.bind(q.sql))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range q.rows {
			if _, err := stmt.ExecContext(ctx, r...); err != nil {
				return err
			}
		}
	}
	return nil
}

// summarizeStored recomputes a night's summaries from the runs the store
// holds of it: for a night that gained runs, and for nights stored before
// summaries were (the migration).
func summarizeStored(ctx context.Context, s *Store, tx *sql.Tx, night string) error {
	rows, err := tx.QueryContext(ctx, s.bind(`SELECT r.case_name, r.variant, r.side, r.env_key, `+runEnv+`, r.metrics FROM runs r WHERE r.night_id = ?`), night)
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
		row := make([]float64, len(stats.Metrics))
		for i, mt := range stats.Metrics {
			row[i] = math.NaN()
			if v, ok := metrics[mt.Name]; ok {
				row[i] = v
			}
		}
		ns.add(g, env, row)
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

// scanSummaries parses {"name":[runs,median,lo,hi,min,max],...} with
// numbers or null (lo, hi) and no spaces, as encodeSummaries writes; ok is
// false for anything else.
func scanSummaries(b []byte) (map[string]NightSummary, bool) {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, false
	}
	out := make(map[string]NightSummary, len(stats.Metrics))
	b = b[1 : len(b)-1]
	for len(b) > 0 {
		if b[0] != '"' {
			return nil, false
		}
		end := bytes.IndexByte(b[1:], '"')
		if end < 0 || bytes.IndexByte(b[1:1+end], '\\') >= 0 {
			return nil, false
		}
		name := string(b[1 : 1+end])
		b = b[2+end:]
		if len(b) < 2 || b[0] != ':' || b[1] != '[' {
			return nil, false
		}
		b = b[2:]
		var v [6]float64
		for i := range v {
			j := bytes.IndexAny(b, ",]")
			if j < 0 || (i < 5) != (b[j] == ',') {
				return nil, false
			}
			switch tok := b[:j]; {
			case string(tok) == "null" && (i == 2 || i == 3):
				v[i] = math.Inf(2*i - 5) // lo -Inf, hi +Inf
			default:
				x, err := strconv.ParseFloat(string(tok), 64)
				if err != nil {
					return nil, false
				}
				v[i] = x
			}
			b = b[j+1:]
		}
		if _, dup := out[name]; dup || v[0] != math.Trunc(v[0]) {
			return nil, false
		}
		out[name] = NightSummary{Runs: int(v[0]), Median: v[1], Lo: v[2], Hi: v[3], Min: v[4], Max: v[5]}
		if len(b) > 0 {
			if b[0] != ',' {
				return nil, false
			}
			b = b[1:]
		}
	}
	return out, true
}
