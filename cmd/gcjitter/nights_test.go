package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdNights makes a series of nights of known truth from one real results
// directory: N copies of its manifest, one a day from 2026-10-01, each
// run's times scaled by a night's noise (3% SD) and a run's (2%), times
// FACTOR from night AT on, when torch also becomes 2.4.0. The history
// commands read only the manifests.
//
//	nights SRC OUTPREFIX N AT FACTOR
func cmdNights(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: nights SRC OUTPREFIX N AT FACTOR")
	}
	n, err1 := strconv.Atoi(args[2])
	at, err2 := strconv.Atoi(args[3])
	factor, err3 := strconv.ParseFloat(args[4], 64)
	if err1 != nil || err2 != nil || err3 != nil {
		ts.Fatalf("nights: bad N, AT or FACTOR")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 10, 1, 2, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		m, err := results.ReadManifest(ts.MkAbs(args[0]))
		if err != nil {
			ts.Fatalf("nights: %v", err)
		}
		m.Started = t0.AddDate(0, 0, i)
		m.Command = append(m.Command, fmt.Sprint(i)) // another invocation
		night := math.Exp(0.03 * rng.NormFloat64())
		for _, r := range m.Runs {
			if r.Summary == nil {
				continue
			}
			f := night * math.Exp(0.02*rng.NormFloat64())
			if i >= at {
				f *= factor
				r.Meta.Torch = "2.4.0"
			}
			s := r.Summary
			s.P50, s.P90, s.P99, s.P999, s.Max = s.P50*f, s.P90*f, s.P99*f, s.P999*f, s.Max*f
			for g := range s.MaxPauseNS {
				s.MaxPauseNS[g] *= f
			}
		}
		dir := ts.MkAbs(fmt.Sprintf("%s%02d", args[1], i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			ts.Fatalf("nights: %v", err)
		}
		if err := results.WriteManifest(dir, m); err != nil {
			ts.Fatalf("nights: %v", err)
		}
	}
}
