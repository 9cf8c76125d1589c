package stats

// DriftMeasurement is one measured session drift of a metric: the
// standard deviation of the difference between two sessions' levels on
// one host, as `gcjitter drift` computes it (SessionSpread.Drift), and its
// one-sided 90% upper bound (SessionSpread.DriftUpper).
type DriftMeasurement struct {
	Metric   string
	Drift    float64
	Upper    float64 // 0 where the measurement recorded no bound
	Sessions int
	// Source names the row of BENCHMARKS.md or docs/compare.md that gives
	// the figure with its command.
	Source string
}

// MeasuredDrift are the session drifts measured on this project's hosts:
// the catalogue's allowances (Metric.Drift) sit at or above the largest
// bound measured for each metric (the point estimate where no bound was
// recorded), and TestDriftAllowancesCoverMeasurements fails when one does
// not. A new measurement goes here, and the allowance with it.
var MeasuredDrift = []DriftMeasurement{
	// BENCHMARKS.md, "A slower collector": gcjitter drift over 21
	// unchanged sessions of ascend-gpt-periodic-gc's default in one day.
	{"gc-cost", 0.029, 0.038, 21, "BENCHMARKS.md: session drift, 21 unchanged sessions of the day"},
	{"gc-share", 0.027, 0.035, 21, "BENCHMARKS.md: session drift, 21 unchanged sessions of the day"},
	{"p50", 0.042, 0.054, 21, "BENCHMARKS.md: session drift, 21 unchanged sessions of the day"},
	{"p99", 0.062, 0.080, 21, "BENCHMARKS.md: session drift, 21 unchanged sessions of the day"},
	{"gen2-pause", 0.058, 0.079, 21, "BENCHMARKS.md: session drift, 21 unchanged sessions of the day"},
	// The same over the day before's 7 quiet sessions.
	{"gc-cost", 0.021, 0.039, 7, "BENCHMARKS.md: session drift, 7 quiet sessions the day before"},
	{"gc-share", 0.016, 0.031, 7, "BENCHMARKS.md: session drift, 7 quiet sessions the day before"},
	{"p50", 0.039, 0.067, 7, "BENCHMARKS.md: session drift, 7 quiet sessions the day before"},
	{"p99", 0.050, 0.086, 7, "BENCHMARKS.md: session drift, 7 quiet sessions the day before"},
	{"gen2-pause", 0.069, 0.123, 7, "BENCHMARKS.md: session drift, 7 quiet sessions the day before"},
	// BENCHMARKS.md, "The tail in the run's own steps": 9 sessions of
	// ascend-gpt-periodic-gc's default over 100 minutes on an AMD VM whose
	// speed moved within runs (seven sessions of 5 runs, a golden/ci-cpu remake's 10
	// and another baseline's 10).
	{"p99-rel", 0.029, 0.054, 9, "BENCHMARKS.md: The tail in the run's own steps, 9 sessions of 2026-12-07"},
	// docs/compare.md, "Session drift": resnet-gc-collect-every-step, 13
	// sessions over three hours on ci-cpu, per variant (no bound recorded).
	{"p50", 0.049, 0, 13, "docs/compare.md: resnet-gc-collect-every-step default"},
	{"p50", 0.053, 0, 13, "docs/compare.md: resnet-gc-collect-every-step empty-cache-every-step"},
	{"p50", 0.075, 0, 13, "docs/compare.md: resnet-gc-collect-every-step collect-every-step"},
}
