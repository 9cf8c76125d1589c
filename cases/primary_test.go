package cases

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// gate.primary names the tested metrics; unknown, repeated or no metrics
// are refused with the file's line, and the section's known keys list it.
func TestGatePrimary(t *testing.T) {
	c, err := Parse([]byte(strings.Replace(good, "gate:\n", "gate:\n  primary: [p50, gen2-pause]\n", 1)), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(c.Gate.Primary, []string{"p50", "gen2-pause"}) {
		t.Errorf("primary %v", c.Gate.Primary)
	}
	if c, err := Parse([]byte(good), "t.yaml"); err != nil || c.Gate.Primary != nil {
		t.Errorf("no primary: %v %v, want nil (stats.DefaultPrimary)", c.Gate.Primary, err)
	}
	for _, b := range []struct{ repl, want string }{
		{"primary: [p50, p98]", `bad.yaml:11: gate.primary: unknown metric "p98"`},
		{"primary: [p50, p50]", `bad.yaml:11: gate.primary: "p50" named twice`},
		{"primary: []", "bad.yaml:11: gate.primary: names no metric"},
		{"primray: [p50]", `bad.yaml:11: unknown key "primray" in gate (known: floors, alpha, primary,`},
	} {
		_, err := Parse([]byte(strings.Replace(good, "gate:\n", "gate:\n  "+b.repl+"\n", 1)), "bad.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), b.want) {
			t.Errorf("%s:\n got: %v\nwant: %s...", b.repl, err, b.want)
		}
	}
}
