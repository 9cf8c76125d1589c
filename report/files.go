package report

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// IsResultsDir reports whether path is a gcjitter results directory.
func IsResultsDir(path string) bool {
	_, err := os.Stat(filepath.Join(path, results.ManifestFile))
	return err == nil
}

// AttachSteps loads the step series of the sides that are results
// directories, for the HTML charts: paths are the old and new sides (""
// for a side that has none), or one directory.
func AttachSteps(d *Doc, paths ...string) error {
	return AttachStepsFrom(d, results.LoadSteps, paths...)
}

// AttachStepsFrom is AttachSteps reading each directory with load (a
// results.Cache's LoadSteps: no stream is read twice).
func AttachStepsFrom(d *Doc, load func(dir string) (map[string]*results.Steps, error), paths ...string) error {
	d.Steps = map[string][2]*results.Steps{}
	for i, p := range paths {
		if p == "" || !IsResultsDir(p) {
			continue
		}
		steps, err := load(p)
		if err != nil {
			return err
		}
		side := i
		if len(paths) == 1 {
			side = 0
		}
		for bench, s := range steps {
			pair := d.Steps[bench]
			pair[side] = s
			d.Steps[bench] = pair
		}
	}
	return nil
}

// WriteFiles writes d into dir as base.<ext> for each format, atomically,
// and returns the paths written.
func WriteFiles(dir, base string, d *Doc, formats ...string) ([]string, error) {
	var paths []string
	for _, f := range formats {
		var b bytes.Buffer
		if err := RenderColor(&b, f, d, false); err != nil { // files: never coloured
			return paths, err
		}
		path := filepath.Join(dir, base+Ext(f))
		if err := atomicfile.Write(path, b.Bytes(), 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// DefaultReference is the variant a results directory's other policies are
// compared with when no -ref says otherwise: the interpreter's own GC.
const DefaultReference = "default"

// CompareVariants makes d compare every variant of the results directory
// dir with the variant ref of its case (the policies side by side, each
// with its verdict).
func CompareVariants(d *Doc, dir, ref string, opt results.CompareOptions) error {
	data, err := results.Load(dir, stats.SpikeRule{})
	if err != nil {
		return err
	}
	c, err := results.CompareVariants(data, ref, opt)
	if err != nil {
		return err
	}
	d.Comparison, d.Reference = c, ref
	return nil
}
