package bench

import (
	"archive/zip"
	"bytes"
	"io"
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"
)

// The shipped worker is a function of the sources only: two builds are the
// same bytes, so its name (the hash every run records) names the sources.
func TestWorkerBuildIsReproducible(t *testing.T) {
	a, err := buildWorker(workerFS)
	if err != nil {
		t.Fatal(err)
	}
	b, err := buildWorker(workerFS)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || !bytes.Equal(a, WorkerSource) {
		t.Fatalf("two builds of the same sources differ (%d, %d and %d bytes)", len(a), len(b), len(WorkerSource))
	}
}

// A change to any source changes the worker's name.
func TestWorkerNameFollowsTheSources(t *testing.T) {
	names, err := fs.Glob(workerFS, workerPackage+"/*.py")
	if err != nil || len(names) < 3 {
		t.Fatalf("embedded sources: %v %v", names, err)
	}
	for _, changed := range names {
		m := fstest.MapFS{}
		for _, n := range names {
			data, err := fs.ReadFile(workerFS, n)
			if err != nil {
				t.Fatal(err)
			}
			if n == changed {
				data = append(slices.Clip(data), '\n')
			}
			m[n] = &fstest.MapFile{Data: data}
		}
		b, err := buildWorker(m)
		if err != nil {
			t.Fatal(err)
		}
		if workerName(b) == WorkerName() {
			t.Errorf("%s changed, the worker's name did not (%s)", changed, WorkerName())
		}
	}
}

// The archive is what `python FILE` runs as a zipapp: __main__.py at the
// root, then the package's files in name order, each stored as written with
// the fixed time (a build's clock or a map's order would make every build
// a new worker).
func TestWorkerArchiveHoldsThePackage(t *testing.T) {
	zr, err := zip.NewReader(bytes.NewReader(WorkerSource), int64(len(WorkerSource)))
	if err != nil {
		t.Fatal(err)
	}
	names, _ := fs.Glob(workerFS, workerPackage+"/*.py")
	want := append([]string{"__main__.py"}, names...)
	var got []string
	for _, f := range zr.File {
		got = append(got, f.Name)
		src := f.Name
		if src == "__main__.py" {
			src = workerPackage + "/__main__.py"
		}
		wantData, err := fs.ReadFile(workerFS, src)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(data, wantData) {
			t.Errorf("%s: not its source as written (%v)", f.Name, err)
		}
		if f.Method != zip.Store || !f.Modified.Equal(zipTime) {
			t.Errorf("%s: method %d, time %v; want stored at %v", f.Name, f.Method, f.Modified, zipTime)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("archive holds %v, want %v", got, want)
	}
}
