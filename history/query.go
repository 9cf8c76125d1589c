package history

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/results"
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

// Night is one night of a series: its summary, and its runs' values when
// they were read (QueryRuns).
type Night struct {
	// *NightInfo is shared by every series of the night (a year of 1,500
	// series is half a million nights: one pointer each, not a copy).
	*NightInfo
	Summary NightSummary
	Values  []float64 // one per run, in run order; nil from Query
}

// NightInfo is what a night is, beside its numbers.
type NightInfo struct {
	ID      string
	Started time.Time
	Host    string
	Label   string
	Partial string
	EnvKey  string
	Env     results.Env
}

// Series is a metric's nights, oldest first.
type Series struct {
	Key    SeriesKey
	Nights []Night
}

// Query reads the series f selects from the nights' summaries, ordered by
// key, nights oldest first: what detection, show and the dashboards need.
// The nights' runs are not read (QueryRuns reads them).
func (s *Store) Query(ctx context.Context, f Filter) ([]*Series, error) {
	// The nights and their environments first (a row a night), then the
	// summaries as bare rows joined to them here: the database need not
	// join, sort or repeat the nights' fields half a million times.
	var where []string
	var args []any
	if f.HostClass != "" {
		where = append(where, "host_class = ?")
		args = append(args, f.HostClass)
	}
	if !f.Since.IsZero() {
		where = append(where, "started >= ?")
		args = append(args, f.Since.UTC().Format(time.RFC3339Nano))
	}
	ncond := ""
	if len(where) > 0 {
		ncond = " WHERE " + strings.Join(where, " AND ")
	}
	type nightRow struct {
		class string
		info  NightInfo
	}
	nights := map[string]*nightRow{}
	rows, err := s.db.QueryContext(ctx, s.bind(`SELECT id, host_class, started, host, label, partial FROM nights`+ncond), args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	for rows.Next() {
		var n nightRow
		var started string
		if err := rows.Scan(&n.info.ID, &n.class, &started, &n.info.Host, &n.info.Label, &n.info.Partial); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: %v", s, err)
		}
		if n.info.Started, err = time.Parse(time.RFC3339Nano, started); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: night %s: bad start time %q", s, n.info.ID, started)
		}
		nights[n.info.ID] = &n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	// Each night in each environment is one NightInfo, shared.
	type nightEnv struct{ night, envKey string }
	infos := map[nightEnv]*NightInfo{}
	// The nights' selection is made in the database too, so a host class
	// of a fleet's store reads its own rows, not every class's.
	nightsOf, nightsArgs := "", []any(nil)
	if ncond != "" {
		nightsOf, nightsArgs = " WHERE night_id IN (SELECT id FROM nights"+ncond+")", slices.Clone(args)
	}
	rows, err = s.db.QueryContext(ctx, s.bind(`SELECT night_id, env_key, env FROM night_envs`+nightsOf), nightsArgs...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	envs := map[string]results.Env{}
	for rows.Next() {
		var id, key, env string
		if err := rows.Scan(&id, &key, &env); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: %v", s, err)
		}
		n := nights[id]
		if n == nil || (f.EnvKey != "" && key != f.EnvKey) {
			continue
		}
		info := n.info
		info.EnvKey, info.Env = key, envOf(envs, env)
		infos[nightEnv{id, key}] = &info
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}

	where, args = nil, nightsArgs
	if nightsOf != "" {
		where = append(where, strings.TrimPrefix(nightsOf, " WHERE "))
	}
	for _, c := range []struct{ col, val string }{
		{"case_name", f.Case}, {"variant", f.Variant}, {"env_key", f.EnvKey},
	} {
		if c.val != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	rows, err = s.db.QueryContext(ctx, s.bind(`SELECT night_id, case_name, variant, side, env_key, metrics FROM night_summaries`+cond), args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	defer rows.Close()
	strs := map[string]string{} // each distinct name once, not once a row
	intern := func(b []byte) string {
		v, ok := strs[string(b)]
		if !ok {
			v = string(b)
			strs[v] = v
		}
		return v
	}
	series := map[SeriesKey]*Series{}
	for rows.Next() {
		var night, cs, variant, side, envKey, raw sql.RawBytes
		if err := rows.Scan(&night, &cs, &variant, &side, &envKey, &raw); err != nil {
			return nil, fmt.Errorf("history %s: %v", s, err)
		}
		info := infos[nightEnv{string(night), string(envKey)}]
		if info == nil {
			continue // another class, before -since, or added between the reads
		}
		sums, err := decodeSummaries(raw)
		if err != nil {
			return nil, fmt.Errorf("history %s: night %s %s/%s: %v", s, night, cs, variant, err)
		}
		k := SeriesKey{HostClass: nights[info.ID].class, Case: intern(cs), Variant: intern(variant), Side: intern(side)}
		for metric, sum := range sums {
			if f.Metric != "" && metric != f.Metric {
				continue
			}
			k.Metric = intern([]byte(metric))
			se := series[k]
			if se == nil {
				se = &Series{Key: k}
				series[k] = se
			}
			se.Nights = append(se.Nights, Night{NightInfo: info, Summary: sum})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	return sortSeries(series), nil
}

// QueryRuns reads the series f selects from the nights' runs, each night's
// values in run order (and its summary computed from them): for
// re-analysis and show -runs. Nights whose runs were pruned are not in
// them. One row per run, joined to its night, with every metric of the
// run in its metrics column (decodeMetrics), read unsorted and grouped
// here: sorting and joining millions of wide rows in the database costs
// more than the reading, and a night's strings are shared among its runs
// (nights, envs) rather than allocated again per row.
func (s *Store) QueryRuns(ctx context.Context, f Filter) ([]*Series, error) {
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
	rows, err := s.db.QueryContext(ctx, s.bind(`SELECT n.host_class, r.case_name, r.variant, r.side, n.id, n.started, n.host, n.label, n.partial, r.env_key, `+runEnv+`, r.run_id, r.run_index, r.metrics
		FROM runs r JOIN nights n ON n.id = r.night_id`+cond), args...)
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
		night *NightInfo
	}
	values := map[nightKey][]value{}
	nights := map[string]*NightInfo{} // night id and environment -> the night, shared
	envs := map[string]results.Env{}
	for rows.Next() {
		var k SeriesKey
		var nt NightInfo
		var started, envJSON, runID string
		var raw []byte
		var index int
		if err := rows.Scan(&k.HostClass, &k.Case, &k.Variant, &k.Side, &nt.ID, &started, &nt.Host, &nt.Label, &nt.Partial, &nt.EnvKey, &envJSON, &runID, &index, &raw); err != nil {
			return nil, fmt.Errorf("history %s: %v", s, err)
		}
		info := nights[nt.ID+"\x00"+envJSON]
		if info == nil {
			nt.Started, _ = time.Parse(time.RFC3339Nano, started)
			nt.Env = envOf(envs, envJSON)
			info = &nt
			nights[nt.ID+"\x00"+envJSON] = info
		}
		metrics, err := decodeMetrics(raw)
		if err != nil {
			return nil, fmt.Errorf("history %s: night %s run %s: %v", s, nt.ID, runID, err)
		}
		for m, v := range metrics {
			if f.Metric != "" && m != f.Metric {
				continue
			}
			k := k
			k.Metric = m
			nk := nightKey{k, info}
			values[nk] = append(values[nk], value{index, v})
		}
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
		n := Night{NightInfo: nk.night, Values: make([]float64, len(vs))}
		for i, x := range vs {
			n.Values[i] = x.v
		}
		n.Summary = Summarize(n.Values)
		se.Nights = append(se.Nights, n)
	}
	return sortSeries(series), nil
}

// sortSeries orders series by key and each one's nights by start.
func sortSeries(series map[SeriesKey]*Series) []*Series {
	out := make([]*Series, 0, len(series))
	for _, se := range series {
		slices.SortFunc(se.Nights, func(a, b Night) int {
			if c := a.Started.Compare(b.Started); c != 0 {
				return c
			}
			return cmp.Or(strings.Compare(a.ID, b.ID), strings.Compare(a.EnvKey, b.EnvKey))
		})
		out = append(out, se)
	}
	slices.SortFunc(out, func(a, b *Series) int {
		ka, kb := a.Key, b.Key
		return strings.Compare(strings.Join([]string{ka.HostClass, ka.Case, ka.Variant, ka.Side, ka.Metric}, "\x00"),
			strings.Join([]string{kb.HostClass, kb.Case, kb.Variant, kb.Side, kb.Metric}, "\x00"))
	})
	return out
}

// Counts are the store's sizes, for tests and messages.
type Counts struct{ Nights, Runs, Values, Summaries int }

// Count counts the store's nights, runs, values and summary rows (a row a
// night, case, variant, side and environment).
func (s *Store) Count(ctx context.Context) (Counts, error) {
	var c Counts
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM nights), (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM night_summaries)`).Scan(&c.Nights, &c.Runs, &c.Summaries)
	if err != nil {
		return c, err
	}
	// Values are inside the runs' metrics: counted by reading them.
	rows, err := s.db.QueryContext(ctx, `SELECT metrics FROM runs`)
	if err != nil {
		return c, err
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return c, err
		}
		m, err := decodeMetrics(raw)
		if err != nil {
			return c, err
		}
		c.Values += len(m)
	}
	return c, rows.Err()
}

// Median is the night's median value: the night's one number in a series.
func (n Night) Median() float64 { return n.Summary.Median }
