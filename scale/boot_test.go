package scale

import (
	"strings"
	"testing"
)

// TestFewReplicatesAreWarnedOf: replicates fewer than the intervals' level
// needs (stats.BootReplicates) are run, and warned of; the default is
// enough.
func TestFewReplicatesAreWarnedOf(t *testing.T) {
	for boot, want := range map[int]bool{40: true, 0: false} {
		rep := Build([]*Group{benchGroup(1)}, []int{8}, Options{Steps: 200, Boot: boot})
		warned := strings.Contains(strings.Join(rep.Warnings, "\n"), "bootstrap replicates: a 95% interval needs 400")
		if warned != want || (boot == 0 && rep.Options.Boot != 400) {
			t.Errorf("-boot %d: %d replicates, warnings %q; want 400 by default, a warning %v", boot, rep.Options.Boot, rep.Warnings, want)
		}
	}
}
