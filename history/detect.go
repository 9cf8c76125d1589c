package history

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"github.com/gcjitter/gcjitter/stats"
)

// Finding is a change point in a series, in the words of nights.
type Finding struct {
	Key SeriesKey
	stats.ChangePoint
	// First is the first night after the shift; Last the night before it.
	First, Last Night
	// EnvChanges are what changed in the environment between Last and
	// First (torch 1.13.1 -> 2.4.0); Near those within two nights of the
	// shift on either side, with the night they came on, since a shift is
	// located to within a night or two.
	EnvChanges []string
	Near       []string
	// Regression: the metric got worse (higher, or lower for a metric
	// better higher: stats.Metric.HigherBetter) by more than its floor,
	// and the interval excludes no change.
	Regression, Improvement bool
}

// DetectOptions tune Detect.
type DetectOptions struct {
	stats.ChangePointOptions
	// Floors are the smallest relative changes that count as a regression
	// or an improvement, by metric (default: the catalogue's floors).
	Floors map[string]float64
}

// Detect finds the change points of every series, on the nights' medians.
// Each series' permutations are seeded by its key, so the same store gives
// the same findings.
func Detect(series []*Series, o DetectOptions) []Finding {
	if o.Floors == nil {
		o.Floors = stats.DefaultFloors
	}
	var out []Finding
	for _, se := range series {
		xs := make([]float64, len(se.Nights))
		for i, n := range se.Nights {
			xs[i] = n.Median()
		}
		cpo := o.ChangePointOptions
		h := fnv.New64a()
		h.Write([]byte(se.Key.String()))
		cpo.Seed ^= h.Sum64()
		for _, cp := range stats.ChangePoints(xs, cpo) {
			f := Finding{Key: se.Key, ChangePoint: cp, First: se.Nights[cp.Index], Last: se.Nights[cp.Index-1]}
			f.EnvChanges = f.Last.Env.Changes(f.First.Env)
			for i := max(1, cp.Index-2); i <= min(len(se.Nights)-1, cp.Index+2); i++ {
				if i == cp.Index {
					continue
				}
				for _, c := range se.Nights[i-1].Env.Changes(se.Nights[i].Env) {
					f.Near = append(f.Near, c+" on "+se.Nights[i].Started.Format(time.DateOnly))
				}
			}
			floor := o.Floors[se.Key.Metric]
			up, down := &f.Regression, &f.Improvement
			if m, ok := stats.MetricByName(se.Key.Metric); ok && m.HigherBetter {
				up, down = down, up // device-util falling is the regression
			}
			switch {
			case math.IsNaN(cp.Size):
			case cp.Size > floor && cp.Lo > 0:
				*up = true
			case cp.Size < -floor && cp.Hi < 0:
				*down = true
			}
			out = append(out, f)
		}
	}
	return out
}

// HostClasses are the host classes of the store's nights (the one f names,
// if it has nights), in order.
func (s *Store) HostClasses(ctx context.Context, f Filter) ([]string, error) {
	q, args := `SELECT DISTINCT host_class FROM nights ORDER BY host_class`, []any(nil)
	if f.HostClass != "" {
		q, args = `SELECT DISTINCT host_class FROM nights WHERE host_class = ?`, []any{f.HostClass}
	}
	rows, err := s.db.QueryContext(ctx, s.bind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %v", s, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("history %s: %v", s, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// DetectAll finds the change points of every series f selects (only the
// given metrics when f names none; all with metrics nil), reading one host
// class at a time: a fleet's store is detected in the memory of one
// class's series. It returns the findings and how many series it read.
func (s *Store) DetectAll(ctx context.Context, f Filter, metrics []string, o DetectOptions) ([]Finding, int, error) {
	classes, err := s.HostClasses(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	var out []Finding
	n := 0
	for _, c := range classes {
		f.HostClass = c
		series, err := s.Query(ctx, f)
		if err != nil {
			return nil, 0, err
		}
		if f.Metric == "" && metrics != nil {
			series = PrimaryOnly(series, metrics)
		}
		n += len(series)
		out = append(out, Detect(series, o)...)
	}
	return out, n, nil
}
