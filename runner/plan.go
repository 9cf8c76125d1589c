package runner

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
)

// PlannedRun is one worker process to start.
type PlannedRun struct {
	Case     *cases.Case
	Variant  cases.Variant
	Index    int    // 0-based run number within its variant
	ID       string // case/variant/run-NN: names its files
	HashSeed uint32 // PYTHONHASHSEED: differs per run, so runs sample hash layouts
}

// RecordsPath is the run's record stream, relative to the results directory.
func (r PlannedRun) RecordsPath() string {
	records, _ := results.RunFiles(r.Case.Name, r.Variant.Name, r.Index)
	return records
}

// StderrPath is the worker's stderr, relative to the results directory.
func (r PlannedRun) StderrPath() string {
	_, stderr := results.RunFiles(r.Case.Name, r.Variant.Name, r.Index)
	return stderr
}

// Plan orders the runs of the given cases. Within a case, runs go in
// rounds: each round runs every variant once, in an order shuffled by seed.
// Slow drift of the host (thermal, background load) then hits every
// variant alike, and no variant always goes first.
func Plan(cs []*cases.Case, seed int64) []PlannedRun {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6763_6a69_7474_6572)) // "gcjitter"
	var out []PlannedRun
	for _, c := range cs {
		out = appendRounds(out, rng, c, 0, c.Runs)
	}
	return out
}

// PlanMore orders more rounds of cases that already ran: rounds[name]
// rounds of each named case after its c.Runs, in the order of cs. Its
// shuffle is seeded by seed and the rounds done, so a grown plan is as
// reproducible as the first.
func PlanMore(cs []*cases.Case, seed int64, rounds map[string]int) []PlannedRun {
	var out []PlannedRun
	for _, c := range cs {
		if rounds[c.Name] <= 0 {
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(seed)+uint64(c.Runs), 0x6763_6a69_7474_6572))
		out = appendRounds(out, rng, c, c.Runs, c.Runs+rounds[c.Name])
	}
	return out
}

func appendRounds(out []PlannedRun, rng *rand.Rand, c *cases.Case, from, to int) []PlannedRun {
	order := make([]int, len(c.Variants))
	for round := from; round < to; round++ {
		for i := range order {
			order[i] = i
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, vi := range order {
			v := c.Variants[vi]
			out = append(out, PlannedRun{
				Case:     c,
				Variant:  v,
				Index:    round,
				ID:       fmt.Sprintf("%s/%s/run-%02d", c.Name, v.Name, round+1),
				HashSeed: hashSeed(c.Seed, round),
			})
		}
	}
	return out
}

// hashSeed gives run i of every variant the same PYTHONHASHSEED, so the
// variants differ only in their policy, while runs differ from each other.
func hashSeed(caseSeed int64, run int) uint32 {
	return uint32((uint64(caseSeed)*1000 + uint64(run) + 1) % 4294967295)
}

func itoa(i int) string { return strconv.Itoa(i) }
