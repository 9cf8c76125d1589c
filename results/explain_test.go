package results

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Known truth for the parts a change is explained by, on noise-free
// sessions of the seed's case (ascend: 1000 steps of 10 ms, 5 full
// collections of 40 ms walking 400,000 objects): each planted change lands
// in its own part, the others stay at zero, and the parts sum to the total.
func TestExplainSplitsTheChange(t *testing.T) {
	oneMore := ascend
	oneMore.counts[0]++
	slower := ascend
	slower.pauses[2] *= 1.2
	heavier := ascend // 20% more objects walked at the same cost per object
	heavier.walk *= 1.2
	heavier.pauses[2] *= 1.2
	faster := ascend
	faster.work *= 0.8
	fewer := ascend // 4 full collections a run instead of 5
	fewer.counts[2] = 4
	otherSlow := ascend // the same schedule; 3 of the slowest 10 steps hold a full collection, not 5
	otherSlow.tailWith = 3

	for _, c := range []struct {
		name string
		b    collector
		part string
		step float64 // ns per step
		tail float64 // ns per slow step (the slowest 1%)
	}{
		{"one more young collection a run", oneMore, PartFrequency, 50e3 / 1000, 0},
		{"every full collection 20% slower", slower, PartCost, 5 * 8e6 / 1000, 5.0 / 10 * 8e6},
		{"20% more objects walked", heavier, PartHeap, 5 * 8e6 / 1000, 5.0 / 10 * 8e6},
		{"steps 20% faster", faster, PartSteps, -2e6, -2e6*1.01 - 10*0.02*2e6/10},
		{"one full collection fewer a run", fewer, PartFrequency, -40e6 / 1000, -1.0 / 10 * 40e6},
		// Which steps are slowest is not the schedule: the same
		// collections, other slow steps, the change goes with the steps.
		{"the same schedule, other slow steps", otherSlow, PartSteps, 0, -2.0 / 10 * 40e6},
	} {
		rng := rand.New(rand.NewPCG(1, 1))
		old, new := NewData("A"), NewData("B")
		for range 3 {
			old.AddRun("b", ascend.run(rng, 0))
			new.AddRun("b", c.b.run(rng, 0))
		}
		es := Compare(old, new, CompareOptions{}).Explain()
		if len(es) != 1 {
			t.Fatalf("%s: %d explanations", c.name, len(es))
		}
		var sum Part
		for _, p := range es[0].Parts {
			want := Part{Name: p.Name}
			if p.Name == c.part {
				want.Step, want.Tail = c.step, c.tail
			}
			if p.Name == PartTotal {
				if math.Abs(p.Step-sum.Step) > 1e-6 || math.Abs(p.Tail-sum.Tail) > 1e-6 || math.Abs(p.Share-sum.Share) > 1e-12 {
					t.Errorf("%s: total %+v, the parts sum to %+v", c.name, p, sum)
				}
				continue
			}
			sum.Step += p.Step
			sum.Tail += p.Tail
			sum.Share += p.Share
			if math.Abs(p.Step-want.Step) > 1e-6*math.Max(1, math.Abs(want.Step)) || math.Abs(p.Tail-want.Tail) > 1e-6*math.Max(1, math.Abs(want.Tail)) {
				t.Errorf("%s: %s: step %+.4g ns, tail %+.4g ns; want %+.4g, %+.4g", c.name, p.Name, p.Step, p.Tail, want.Step, want.Tail)
			}
			// A faster step lowers the GC share; more GC raises it.
			if p.Name == c.part && (p.Share > 0) != (c.step > 0 && c.part != PartSteps || c.part == PartSteps && c.step < 0) {
				t.Errorf("%s: %s moves the GC share %+.4g points: wrong way", c.name, p.Name, p.Share)
			}
		}
	}
}
