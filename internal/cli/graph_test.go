package cli

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestPackageGraph keeps the layering one way: every package imports only
// packages of a lower layer, never one at its own layer or above, so the
// command only wires (nothing imports it), the packages that hold the
// rules stay below the ones that present them, and peers (runner and
// report, history and report) stay apart.
func TestPackageGraph(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", "list", "-json", "github.com/gcjitter/gcjitter/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/gcjitter/gcjitter/"
	imports := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(p.ImportPath, mod)
		imports[pkg] = nil // a package that imports none of ours is placed too
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, mod) {
				imports[pkg] = append(imports[pkg], strings.TrimPrefix(imp, mod))
			}
		}
	}
	// Each package may import only packages of a lower layer.
	layer := map[string]int{
		// internal/cli holds the exit codes every error type names
		// (ExitCode), so it sits below them all and imports none.
		"internal/cli":        0,
		"internal/atomicfile": 1, "internal/fileerr": 1, "internal/inlinesvg": 1, "internal/testpostgres": 1, "internal/testbrowser": 1,
		"bench": 2, "stats": 3, "cases": 4, "results": 5,
		"golden": 6, "scale": 6,
		// Peers: the runner runs, report and history present; none
		// imports another (the variant names are cases', FormatValue is
		// stats').
		"runner": 7, "report": 7, "history": 7, "internal/progress": 7,
		// advise presents its answer through report (a page's first
		// screen); fit runs its trials with the runner.
		"advise": 8, "fit": 8,
		"gate":                9,
		"internal/testpython": 10, "cmd/gcjitter": 11,
	}
	for pkg, imps := range imports {
		l, ok := layer[pkg]
		if !ok {
			t.Errorf("package %s has no layer in this test: place it", pkg)
			continue
		}
		for _, imp := range imps {
			if strings.HasPrefix(imp, "cmd/") {
				t.Errorf("%s imports the command %s", pkg, imp)
			}
			if li, ok := layer[imp]; !ok {
				t.Errorf("%s imports %s, which has no layer in this test", pkg, imp)
			} else if li >= l {
				t.Errorf("%s (layer %d) imports %s (layer %d): the graph must stay one way", pkg, l, imp, li)
			}
		}
	}
}
