package results

import (
	"math"
	"math/rand/v2"
	"testing"
)

// session is the calibration of a session on a host of the given cost (ns)
// whose points scatter by noise (lognormal sd) and drift by shift.
func session(rng *rand.Rand, cost, noise, shift float64, points int) *Calibration {
	c := &Calibration{}
	for range points {
		f := cost * (1 + shift) * math.Exp(noise*rng.NormFloat64())
		c.Points = append(c.Points, SpeedPoint{WalkNS: f, ComputeNS: f})
	}
	return c
}

// The rule on data of known truth: sessions of one host with the noise
// measured here (a few percent within a session, a few between) are the
// same speed; a host 2x slower, or 1.5x, is not.
func TestCompareSpeedKnownTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 2000
	var same, half, twoThirds int
	for range trials {
		base := session(rng, 3, 0.02, 0, 8)
		if CompareSpeed(base, session(rng, 3, 0.02, 0.05*rng.NormFloat64()/2, 8)).Comparable() {
			same++
		}
		if !CompareSpeed(base, session(rng, 6, 0.02, 0, 8)).Comparable() {
			half++
		}
		if !CompareSpeed(base, session(rng, 4.5, 0.02, 0, 8)).Comparable() {
			twoThirds++
		}
	}
	if same < trials*99/100 {
		t.Errorf("one host's sessions called comparable in %d of %d trials, want 99%%", same, trials)
	}
	if half != trials || twoThirds != trials {
		t.Errorf("a host 2x slower told apart in %d of %d, 1.5x in %d", half, trials, twoThirds)
	}
	sp := CompareSpeed(session(rng, 3, 0, 0, 3), session(rng, 6, 0, 0, 3))
	if math.Abs(sp.Ratio-0.5) > 1e-9 {
		t.Errorf("ratio of a host twice as slow: %v, want 0.5", sp.Ratio)
	}
	if got, want := sp.String(), "this host runs the calibration at 0.50x the baseline's speed (differs beyond the noise of ±10%)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestCalibrationUnknownAndMoved(t *testing.T) {
	if CompareSpeed(nil, &Calibration{Points: []SpeedPoint{{WalkNS: 1, ComputeNS: 1}}}).Comparable() {
		t.Error("a baseline without calibration must not be comparable")
	}
	moved := &Calibration{Points: []SpeedPoint{{WalkNS: 3, ComputeNS: 2}, {WalkNS: 4.5, ComputeNS: 3}}}
	if !moved.Moved() || math.Abs(moved.Spread()-0.5) > 1e-9 {
		t.Errorf("a session slowed 1.5x midway: Moved %v, Spread %v", moved.Moved(), moved.Spread())
	}
	// A session that moved widens the tolerance by its spread, so a second
	// host must differ by more to be told apart.
	steady := &Calibration{Points: []SpeedPoint{{WalkNS: 3, ComputeNS: 2}, {WalkNS: 3.03, ComputeNS: 2.02}}}
	if tol := CompareSpeed(moved, steady).Tolerance; math.Abs(tol-(0.5+SpeedDrift)) > 1e-9 {
		t.Errorf("tolerance against a moved session: %v", tol)
	}
}
