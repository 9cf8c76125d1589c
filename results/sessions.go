package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gcjitter/gcjitter/stats"
)

// manifestOf is the manifest of a side that is a results directory, or
// the session of baselines (Data.Session); nil for benchfmt files (which
// carry no session, host or speed facts).
func manifestOf(d *Data) *Manifest {
	if d.Session != nil {
		return d.Session
	}
	if st, err := os.Stat(filepath.Join(d.Path, ManifestFile)); err != nil || st.IsDir() {
		return nil
	}
	m, err := ReadManifest(d.Path)
	if err != nil {
		return nil
	}
	return m
}

// CompareSessions compares two results directories as the gate compares
// tonight's runs with a baseline: two directories made by two invocations
// are two sessions, and sessions differ by more than their runs do. So,
// where both sides carry a manifest of a different session:
//   - each timing metric is allowed the catalogue's session drift
//     (stats.Metric.Drift, unless opt.Drift sets one);
//   - the timings are judged only at the same speed on the same CPU model
//     (CompareSpeed, the gate's rule); otherwise, or where a side's host
//     was disturbed (Disturbance), every timing verdict is unknown with the
//     reason, and only the exact counts and memory decide.
//
// Sides without manifests (benchfmt files) and one session's own runs are
// compared as Compare does, as one session.
func CompareSessions(old, new *Data, opt CompareOptions) *Comparison {
	mo, mn := manifestOf(old), manifestOf(new)
	if mo == nil || mn == nil || mo.Started.Equal(mn.Started) {
		return Compare(old, new, opt)
	}
	if opt.Drift == nil {
		opt.Drift = func(_, metric string) float64 { return stats.DefaultDrift[metric] }
	}
	c := Compare(old, new, opt)
	c.Notes = append(c.Notes, fmt.Sprintf("the sides are two sessions (%s started %s, %s started %s): each timing metric is allowed its session drift (docs/compare.md, \"Session drift\")",
		old.Path, mo.Started.Format("2006-01-02 15:04"), new.Path, mn.Started.Format("2006-01-02 15:04")))
	var why []string
	if a, b := mo.Host.CPUModel, mn.Host.CPUModel; a != "" && b != "" && a != b {
		why = append(why, fmt.Sprintf("the sides ran on different CPU models (%s, %s)", a, b))
	} else {
		sp := CompareSpeed(mo.Calibration, mn.Calibration)
		said := strings.NewReplacer("this host runs the calibration", "the new side's host ran the calibration", "the baseline's speed", "the old side's").Replace(sp.String())
		switch {
		case !sp.Known:
			why = append(why, "a side's host speed was not measured, so whether both ran at one speed is unknown")
		case !sp.Comparable():
			why = append(why, said)
		default:
			c.Notes = append(c.Notes, "timing judged: "+said)
		}
	}
	if len(why) > 0 {
		c.UndecideTimings("speed: "+strings.Join(why, "; "), "timings measured at another speed measure the hosts, not the change: compare runs of one host at one speed, or both sides in one session (gcjitter ab)")
		return c
	}
	for _, side := range []struct {
		name string
		m    *Manifest
	}{{old.Path, mo}, {new.Path, mn}} {
		if d := Disturbance(side.m); d != "" {
			why = append(why, side.name+": "+d)
		}
	}
	if len(why) > 0 {
		c.HostBusy(strings.Join(why, "; "))
	}
	return c
}
