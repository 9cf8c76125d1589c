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
		"internal/atomicfile": 0, "internal/fileerr": 0, "internal/inlinesvg": 0, "internal/testpostgres": 0, "internal/testbrowser": 0,
		"bench": 1, "stats": 2, "cases": 3, "results": 4,
		// advise presents its answer through report (a page's first screen).
		"runner": 5, "golden": 5, "scale": 5, "report": 6, "fit": 6, "advise": 7, "internal/progress": 6, "history": 7, "gate": 8,
		"internal/cli": 9, "internal/testpython": 9, "cmd/gcjitter": 10,
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
