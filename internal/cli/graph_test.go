package cli

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestPackageGraph keeps the layering one way: the command only wires, so
// no package imports it, and the packages that hold the rules stay below
// the ones that present them (report and gate never reach back into the
// runner's callers).
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
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, mod) {
				imports[strings.TrimPrefix(p.ImportPath, mod)] = append(imports[strings.TrimPrefix(p.ImportPath, mod)], strings.TrimPrefix(imp, mod))
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
		// advise presents its answer through report (a page's first screen).
		"runner": 6, "golden": 6, "scale": 6, "report": 7, "fit": 7, "advise": 8, "internal/progress": 7, "history": 8, "gate": 9,
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
			if li, ok := layer[imp]; ok && li >= l {
				t.Errorf("%s (layer %d) imports %s (layer %d): the graph must stay one way", pkg, l, imp, li)
			}
		}
	}
}
