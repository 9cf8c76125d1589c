package cases

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtin returns the built-in cases, sorted by name. They are validated by
// the tests, so an error here is a bug in the binary.
func Builtin() ([]*Case, error) {
	entries, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		return nil, err
	}
	var out []*Case
	for _, e := range entries {
		data, err := builtinFS.ReadFile(path.Join("builtin", e.Name()))
		if err != nil {
			return nil, err
		}
		c, err := Parse(data, "builtin:"+strings.TrimSuffix(e.Name(), ".yaml"))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Suite returns the built-in cases tagged with suite.
func Suite(suite string) ([]*Case, error) {
	all, err := Builtin()
	if err != nil {
		return nil, err
	}
	var out []*Case
	for _, c := range all {
		if contains(c.Suites, suite) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no built-in case is in suite %q (see gcjitter cases list)", suite)
	}
	return out, nil
}

// NotFoundError is a case argument that is neither a built-in case nor a file.
type NotFoundError struct{ Arg string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%q is neither a built-in case nor a case file (see gcjitter cases list)", e.Arg)
}

// Load resolves a command-line argument: a built-in case name, or a path to
// a case file (anything with a / or ending in .yaml/.yml).
func Load(arg string) (*Case, error) {
	isPath := strings.ContainsRune(arg, '/') || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml")
	if !isPath {
		all, err := Builtin()
		if err != nil {
			return nil, err
		}
		for _, c := range all {
			if c.Name == arg {
				return c, nil
			}
		}
		if _, err := os.Stat(arg); err != nil {
			return nil, &NotFoundError{arg}
		}
	}
	data, err := os.ReadFile(arg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotFoundError{arg}
	}
	if err != nil {
		return nil, err
	}
	return Parse(data, arg)
}
