package gate

import (
	"fmt"
	"strings"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Timing layer policies: -timing's values. TimingAuto gates timings only
// against baselines made at this host's measured speed.
const (
	TimingGate   = "gate"
	TimingReport = "report"
	TimingAuto   = "auto"
)

// ResolveTiming settles -timing auto: timings are gated only against
// baselines made on this CPU model at this host's measured speed
// (results.CompareSpeed: the calibration of p.Speed against the
// baseline's), and reported only otherwise, since a step time measured on
// a host of another speed measures the host, not the change. The GC
// schedule and memory layers gate either way. The note says what was
// decided and why; "" when the user decided (-timing gate or report).
func (p *Plan) ResolveTiming(flag string) (timing, note string) {
	p.timingFlag, p.speedOnly, p.mayGate = flag, false, false
	if flag != TimingAuto {
		return flag, ""
	}
	speedOnly, noisyOnly := true, true
	// Each sentence names its cases where {cases} stands.
	var reported, gated byCase
	for _, c := range p.Cases {
		if p.History != nil {
			// Nights may come from several hosts of the class: each is
			// held to the rule.
			if why := p.History[c.Name].SpeedAgainst(p.Speed); why != "" {
				speedOnly, noisyOnly = false, false // nights of several hosts: not one host at another speed
				reported.add("the history baselines of {cases}: "+why, c.Name)
			} else {
				gated.add("every night ran at this host's speed", c.Name)
			}
			continue
		}
		prov := p.Goldens[c.Name].Provenance
		if m := prov.CPUModel; m != "" && p.Host.CPUModel != "" && m != p.Host.CPUModel {
			reported.add(fmt.Sprintf("the baselines of {cases} were made on %s, this host is %s", m, p.Host.CPUModel), c.Name)
			speedOnly, noisyOnly = false, false
			continue
		}
		sp := results.CompareSpeed(prov.Calibration, p.Speed)
		switch {
		case !prov.Calibration.Known():
			reported.add("the baselines of {cases} were made before gcjitter measured host speed, so whether this host is as fast is unknown", c.Name)
			speedOnly, noisyOnly = false, false
		case !p.Speed.Known():
			reported.add("against the baselines of {cases}, this host's speed was not measured", c.Name)
			speedOnly, noisyOnly = false, false
		case !sp.Comparable():
			reported.add("against the baselines of {cases}, "+sp.String(), c.Name)
			noisyOnly = noisyOnly && sp.Verdict == results.SpeedUndecided
		default:
			gated.add(sp.String(), c.Name)
		}
	}
	if len(reported.order) == 0 {
		// One comparison for every case needs no names.
		if len(gated.order) == 1 {
			return TimingGate, "timing gated: " + gated.order[0]
		}
		return TimingGate, "timing gated: " + strings.Join(gated.sentences("against the baselines of {cases}, "), "; ")
	}
	p.speedOnly, p.mayGate = speedOnly, noisyOnly
	also := ""
	if speedOnly {
		also = " A regression in what a uniformly slower host cancels in (" + strings.Join(stats.SpeedFreeMetrics(), ", ") + ") is undecided here: a throttled or shared host moves it too."
	}
	return TimingReport, fmt.Sprintf("timing reported only: %s; step times from a host of another speed measure the hosts, not the change. The GC schedule, the heap census and memory still gate.%s -timing gate gates timings anyway; baselines for this host: gcjitter golden update -host-class CLASS",
		strings.Join(reported.sentences(""), "; "), also)
}

// MayGate says whether -timing auto reported timings only because the
// calibrations were too noisy to say whether the speeds match
// (results.SpeedUndecided), not because they differ: the session's own
// calibration may then gate them after the runs, so what must hold of a
// gated plan (CheckPower's refusal of a gate that cannot fail) holds
// before the runs too, rather than flipping with one noisy point.
func (p *Plan) MayGate() bool { return p.mayGate }

// byCase groups cases by what is said of them, in the order first said.
type byCase struct {
	order []string
	cases map[string][]string
}

func (b *byCase) add(what, caseName string) {
	if b.cases == nil {
		b.cases = map[string][]string{}
	}
	if b.cases[what] == nil {
		b.order = append(b.order, what)
	}
	b.cases[what] = append(b.cases[what], caseName)
}

// sentences are what was said, each after prefix, naming its cases at
// {cases}.
func (b *byCase) sentences(prefix string) []string {
	out := make([]string, len(b.order))
	for i, what := range b.order {
		out[i] = strings.ReplaceAll(prefix+what, "{cases}", strings.Join(b.cases[what], ", "))
	}
	return out
}
