package stats

// MetricNames are the names of gcjitter's metrics, in report order: what
// floors, gates and error messages list.
func MetricNames() []string {
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = m.Name
	}
	return names
}
