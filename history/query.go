package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Filter selects series; empty fields select everything.
type Filter struct {
	HostClass, Case, Variant, Metric string
	Since                            time.Time // nights that started at or after
	EnvKey                           string    // only nights of this environment key
}

// SeriesKey names one series: a metric of a case's variant on a host class
// (and an A/B side, for ab's nights).
type SeriesKey struct {
	HostClass, Case, Variant, Side, Metric string
}

func (k SeriesKey) String() string {
	v := k.Variant
	if k.Side != "" {
		v += " (side " + k.Side + ")"
	}
	return fmt.Sprintf("%s %s/%s %s", k.HostClass, k.Case, v, k.Metric)
}

// Night is one night of a series: its runs' values of the metric.
type Night struct {
	ID      string
	Started time.Time
	Host    string
	Label   string
	Partial string
	EnvKey  string
	Env     results.Env
	Values  []float64 // one per run, in run order
}

// Series is a metric's nights, oldest first.
type Series struct {
	Key    SeriesKey
	Nights []Night
}

// Query reads the series f selects, ordered by key, each night's values
// in run order. Nights and runs are read first; the values (most of the
// rows) come as bare (night, run, metric, value) rows, unsorted, and are
// grouped here: sorting and joining millions of wide rows in the database
// costs more than the reading, and every repeated string would be a new
// allocation.
func (s *Store) Query(ctx context.Context, f Filter) ([]*Series, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"n.host_class", f.HostClass}, {"r.case_name", f.Case}, {"r.variant", f.Variant}, {"r.env_key", f.EnvKey},
	} {
		if c.val != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if !f.Since.IsZero() {
		where = append(where, "n.started >= ?")
		args = append(args, f.Since.UTC().Format(time.RFC3339Nano))
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	type runInfo struct {
		key   SeriesKey // without the metric
		night *Night    // a template: the night's fields, no values
		index int
	}
	runs := map[string]map[string]*runInfo{} // night id -> run id -> run
	rows, err := s.db.QueryContext(ctx, s.bind(`SELECT n.host_class, r.case_name, r.variant, r.side, n.id, n.started, n.host, n.label, n.partial, r.env_key, r.env, r.run_id, r.run_index
		FROM runs r JOIN nights n ON n.id = r.night_id`+cond), args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	nights := map[string]*Night{}
	envs := map[string]results.Env{}
	for rows.Next() {
		var k SeriesKey
		var nt Night
		var started, envJSON, runID string
		var index int
		if err := rows.Scan(&k.HostClass, &k.Case, &k.Variant, &k.Side, &nt.ID, &started, &nt.Host, &nt.Label, &nt.Partial, &nt.EnvKey, &envJSON, &runID, &index); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: %v", s, err)
		}
		tmpl := nights[nt.ID+"\x00"+envJSON]
		if tmpl == nil {
			nt.Started, _ = time.Parse(time.RFC3339Nano, started)
			env, ok := envs[envJSON]
			if !ok {
				_ = json.Unmarshal([]byte(envJSON), &env)
				envs[envJSON] = env
			}
			nt.Env = env
			tmpl = &nt
			nights[nt.ID+"\x00"+envJSON] = tmpl
		}
		if runs[tmpl.ID] == nil {
			runs[tmpl.ID] = map[string]*runInfo{}
		}
		runs[tmpl.ID][runID] = &runInfo{key: k, night: tmpl, index: index}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}

	vcond, vargs := cond, args
	if f.Metric != "" {
		vcond = " WHERE " + strings.Join(append(slices.Clone(where), "v.metric = ?"), " AND ")
		vargs = append(slices.Clone(args), f.Metric)
	}
	rows, err = s.db.QueryContext(ctx, s.bind(`SELECT v.night_id, v.run_id, v.metric, v.value
		FROM run_values v JOIN runs r ON r.night_id = v.night_id AND r.run_id = v.run_id JOIN nights n ON n.id = v.night_id`+vcond), vargs...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	defer rows.Close()
	type value struct {
		index int
		v     float64
	}
	type nightKey struct {
		key   SeriesKey
		night *Night
	}
	values := map[nightKey][]value{}
	metrics := map[string]string{}
	for rows.Next() {
		var nightID, runID, metric sql.RawBytes
		var v float64
		if err := rows.Scan(&nightID, &runID, &metric, &v); err != nil {
			return nil, fmt.Errorf("history %s: %v", s, err)
		}
		run := runs[string(nightID)][string(runID)]
		if run == nil {
			continue // added between the two reads
		}
		m, ok := metrics[string(metric)]
		if !ok {
			m = string(metric)
			metrics[m] = m
		}
		k := run.key
		k.Metric = m
		nk := nightKey{k, run.night}
		values[nk] = append(values[nk], value{run.index, v})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	series := map[SeriesKey]*Series{}
	for nk, vs := range values {
		se := series[nk.key]
		if se == nil {
			se = &Series{Key: nk.key}
			series[nk.key] = se
		}
		slices.SortStableFunc(vs, func(a, b value) int { return a.index - b.index })
		n := *nk.night
		n.Values = make([]float64, len(vs))
		for i, x := range vs {
			n.Values[i] = x.v
		}
		se.Nights = append(se.Nights, n)
	}
	out := make([]*Series, 0, len(series))
	for _, se := range series {
		slices.SortFunc(se.Nights, func(a, b Night) int {
			if c := a.Started.Compare(b.Started); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		out = append(out, se)
	}
	slices.SortFunc(out, func(a, b *Series) int {
		ka, kb := a.Key, b.Key
		return strings.Compare(strings.Join([]string{ka.HostClass, ka.Case, ka.Variant, ka.Side, ka.Metric}, "\x00"),
			strings.Join([]string{kb.HostClass, kb.Case, kb.Variant, kb.Side, kb.Metric}, "\x00"))
	})
	return out, nil
}

// Counts are the store's sizes, for tests and messages.
type Counts struct{ Nights, Runs, Values int }

// Count counts the store's nights, runs and values.
func (s *Store) Count(ctx context.Context) (Counts, error) {
	var c Counts
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM nights), (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM run_values)`).Scan(&c.Nights, &c.Runs, &c.Values)
	return c, err
}

// Median is the night's median value: the night's one number in a series.
func (n Night) Median() float64 {
	xs := slices.Clone(n.Values)
	slices.Sort(xs)
	return stats.Quantile(xs, 0.5)
}
