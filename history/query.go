package history

import (
	"context"
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

// Query reads the series f selects, ordered by key. Each night's values
// come in run order.
func (s *Store) Query(ctx context.Context, f Filter) ([]*Series, error) {
	q := `SELECT n.host_class, r.case_name, r.variant, r.side, v.metric, n.id, n.started, n.host, n.label, n.partial, r.env_key, r.env, v.value
		FROM run_values v JOIN runs r ON r.night_id = v.night_id AND r.run_id = v.run_id JOIN nights n ON n.id = v.night_id`
	var where []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"n.host_class", f.HostClass}, {"r.case_name", f.Case}, {"r.variant", f.Variant}, {"v.metric", f.Metric}, {"r.env_key", f.EnvKey},
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
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY n.host_class, r.case_name, r.variant, r.side, v.metric, n.started, n.id, r.run_index"
	rows, err := s.db.QueryContext(ctx, s.bind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	defer rows.Close()
	var out []*Series
	var cur *Series
	envs := map[string]results.Env{} // env JSON is repeated on every row: decode once
	for rows.Next() {
		var k SeriesKey
		var nt Night
		var started, envJSON string
		var v float64
		if err := rows.Scan(&k.HostClass, &k.Case, &k.Variant, &k.Side, &k.Metric, &nt.ID, &started, &nt.Host, &nt.Label, &nt.Partial, &nt.EnvKey, &envJSON, &v); err != nil {
			return nil, fmt.Errorf("history %s: %v", s, err)
		}
		if cur == nil || cur.Key != k {
			cur = &Series{Key: k}
			out = append(out, cur)
		}
		if n := len(cur.Nights); n > 0 && cur.Nights[n-1].ID == nt.ID {
			cur.Nights[n-1].Values = append(cur.Nights[n-1].Values, v)
			continue
		}
		nt.Started, _ = time.Parse(time.RFC3339Nano, started)
		env, ok := envs[envJSON]
		if !ok {
			_ = json.Unmarshal([]byte(envJSON), &env)
			envs[envJSON] = env
		}
		nt.Env = env
		nt.Values = []float64{v}
		cur.Nights = append(cur.Nights, nt)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
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
