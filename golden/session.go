package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/results"
)

// IsBaselines says whether compare should read path as baselines: a
// baseline file (.json) or a directory of them (a host class's, such as
// golden/ci-cpu, or one from an old commit) that is not a results
// directory.
func IsBaselines(path string) bool {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return false
	case !st.IsDir():
		return strings.HasSuffix(path, ".json")
	}
	if _, err := os.Stat(filepath.Join(path, results.ManifestFile)); err == nil {
		return false
	}
	files, _ := filepath.Glob(filepath.Join(path, "*.json"))
	return len(files) > 0
}

// SessionData reads baselines (IsBaselines) as one side of gcjitter
// compare: every baseline's runs under its own benchmarks, and a session
// made from their provenance (when, on which CPU model, at what speed,
// beside how much other load), so that results.CompareSessions judges
// them as the sessions they came from (session drift, the speed rule,
// the busy rule) instead of as runs of one session, which calls the drift
// between days a regression. A directory's baselines are usually made by
// one remake, minutes apart: their calibrations are pooled into one speed
// and the earliest date starts the session.
func SessionData(path string) (*results.Data, error) {
	files := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		files, _ = filepath.Glob(filepath.Join(path, "*.json"))
	}
	d := results.NewData(path)
	m := &results.Manifest{Calibration: &results.Calibration{}}
	var models []string
	for _, f := range files {
		g, err := Read(f)
		if err != nil {
			return nil, err
		}
		p := g.Provenance
		at, err := time.Parse(time.RFC3339, p.Date)
		if err != nil {
			return nil, fmt.Errorf("%s: provenance date %q: %v; a baseline written by gcjitter golden update has one", f, p.Date, err)
		}
		if m.Started.IsZero() || at.Before(m.Started) {
			m.Started = at
		}
		if p.CPUModel != "" && !slices.Contains(models, p.CPUModel) {
			models = append(models, p.CPUModel)
		}
		m.Host.CPUs = max(m.Host.CPUs, p.CPUs)
		if p.Calibration != nil {
			m.Calibration.Points = append(m.Calibration.Points, p.Calibration.Points...)
		}
		for _, v := range g.Variants {
			for range v.Runs {
				m.Runs = append(m.Runs, &results.Run{Case: g.Case, Variant: v.Name, Status: results.StatusOK, OtherCPUs: p.OtherCPUs})
			}
		}
		d.Merge(g.Data(f))
	}
	// Baselines of several CPU models are no one speed: the speed rule
	// then leaves their timings undecided.
	m.Host.CPUModel = strings.Join(models, " + ")
	if len(m.Calibration.Points) == 0 {
		m.Calibration = nil // not measured (baselines before the calibration)
	}
	d.Session = m
	return d, nil
}
