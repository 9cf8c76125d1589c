package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/cases"
)

func testCase(t *testing.T, runs int) *cases.Case {
	c, err := cases.Parse([]byte(`name: p
runs: `+itoa(runs)+`
variants: [{policy: default}, {policy: disabled}, {policy: freeze}, {policy: "manual:5"}]
`), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPlanInterleavesInShuffledRounds(t *testing.T) {
	c := testCase(t, 50)
	plan := Plan([]*cases.Case{c}, 1)
	if len(plan) != 200 {
		t.Fatalf("%d runs, want 200", len(plan))
	}
	firsts := map[string]int{}
	for round := range 50 {
		var names []string
		for _, p := range plan[4*round : 4*round+4] {
			names = append(names, p.Variant.Name)
			if p.Index != round {
				t.Fatalf("run %s in round %d", p.ID, round)
			}
		}
		firsts[names[0]]++
		slices.Sort(names)
		if strings.Join(names, " ") != "default disabled freeze manual:5" {
			t.Fatalf("round %d runs %v: every variant once per round", round, names)
		}
	}
	// Over 50 rounds every variant goes first sometimes (each with p=1/4;
	// the chance that one never does is 4*(3/4)^50 < 1e-5).
	if len(firsts) != 4 {
		t.Errorf("first-run counts %v: the order is not shuffled", firsts)
	}
	again := Plan([]*cases.Case{c}, 1)
	other := Plan([]*cases.Case{c}, 2)
	ids := func(p []PlannedRun) (s []string) {
		for _, r := range p {
			s = append(s, r.ID)
		}
		return s
	}
	if !slices.Equal(ids(plan), ids(again)) {
		t.Error("the same seed gave another order")
	}
	if slices.Equal(ids(plan), ids(other)) {
		t.Error("another seed gave the same order")
	}
}

func TestPlanHashSeeds(t *testing.T) {
	plan := Plan([]*cases.Case{testCase(t, 3)}, 1)
	byIndex := map[int]map[uint32]bool{}
	for _, p := range plan {
		if byIndex[p.Index] == nil {
			byIndex[p.Index] = map[uint32]bool{}
		}
		byIndex[p.Index][p.HashSeed] = true
	}
	for i, seeds := range byIndex {
		if len(seeds) != 1 {
			t.Errorf("run %d of the variants has hash seeds %v, want one shared seed", i, seeds)
		}
	}
	if byIndex[0][1001] != true || byIndex[1][1002] != true {
		t.Errorf("hash seeds %v", byIndex)
	}
}

func TestWorkerEnvIsAnAllowlist(t *testing.T) {
	parent := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "PYTHONMALLOC=debug", "SECRET_TOKEN=x", "OMP_NUM_THREADS=64", "PYTHONHASHSEED=random"}
	env := WorkerEnv(parent, 1001, 2, map[string]string{"FOO": "case"}, map[string]string{"FOO": "variant", "BAR": "v"})
	want := []string{"BAR=v", "FOO=variant", "HOME=/h", "LC_ALL=C", "MKL_NUM_THREADS=2", "OMP_NUM_THREADS=2",
		"OPENBLAS_NUM_THREADS=2", "PATH=/bin", "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=1001", "PYTHONUNBUFFERED=1"}
	if !slices.Equal(env, want) {
		t.Errorf("env\n got %v\nwant %v", env, want)
	}
}

// Adaptive rounds continue a case's runs: the next indices and IDs, every
// variant once per round, the same order for the same seed, and only the
// cases asked for.
func TestPlanMoreContinuesTheRounds(t *testing.T) {
	c, other := testCase(t, 3), testCase(t, 3)
	other.Name = "q"
	more := PlanMore([]*cases.Case{c, other}, 1, map[string]int{"p": 2})
	if len(more) != 8 {
		t.Fatalf("%d runs, want 2 rounds of 4 variants", len(more))
	}
	seen := map[string]bool{}
	for i, p := range more {
		if p.Case != c || p.Index != 3+i/4 || seen[p.ID] {
			t.Errorf("run %d: %s index %d", i, p.ID, p.Index)
		}
		seen[p.ID] = true
	}
	if !seen["p/default/run-04"] || !seen["p/manual:5/run-05"] {
		t.Errorf("IDs %v", seen)
	}
	again := PlanMore([]*cases.Case{c, other}, 1, map[string]int{"p": 2})
	for i := range more {
		if more[i].ID != again[i].ID {
			t.Fatalf("the same seed gave another order at %d: %s vs %s", i, more[i].ID, again[i].ID)
		}
	}
}
