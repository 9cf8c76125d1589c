package stats

import (
	"math"
	"sort"
)

// holm sets PAdj, Level and the family of every tested row, by Holm's
// step-down method within each family. A row's Level is the threshold it
// was held to: alpha/(m-i) for the i-th smallest p while the steps reject,
// and the threshold of the first step that did not for every row after it.
// So a row is significant exactly when p <= Level, and exactly when its
// interval at 1-Level excludes no change.
func holm(rows []*Row, alpha float64, family func(*Row) string) {
	groups := map[string][]*Row{}
	var names []string
	for _, r := range rows {
		if !r.Tested() {
			continue
		}
		f := family(r)
		if _, ok := groups[f]; !ok {
			names = append(names, f)
		}
		groups[f] = append(groups[f], r)
	}
	for _, f := range names {
		tested := groups[f]
		sort.SliceStable(tested, func(i, j int) bool { return tested[i].P < tested[j].P })
		m := len(tested)
		running := 0.0
		stop := m // the first step that does not reject
		for i, r := range tested {
			adj := math.Min(1, float64(m-i)*r.P)
			running = math.Max(running, adj) // adjusted p-values never decrease
			r.PAdj = running
			if stop == m && r.P > alpha/float64(m-i) {
				stop = i
			}
			r.Level = alpha / float64(m-min(i, stop))
			r.significant = i < stop
			r.Family, r.FamilySize = f, m
		}
	}
}
