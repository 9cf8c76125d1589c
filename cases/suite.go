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

	"github.com/gcjitter/gcjitter/internal/cli"
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

// NotFoundError is a case argument that is neither a built-in case nor a
// file; Suggest is the built-in case it most likely meant ("" if none).
type NotFoundError struct{ Arg, Suggest string }

func (e *NotFoundError) Error() string {
	if e.Suggest != "" {
		return fmt.Sprintf("%q is neither a built-in case nor a case file; did you mean %s? (see gcjitter cases list)", e.Arg, e.Suggest)
	}
	return fmt.Sprintf("%q is neither a built-in case nor a case file (see gcjitter cases list)", e.Arg)
}

func (e *NotFoundError) ExitCode() int { return cli.Usage }

// closest is the built-in name nearest to arg by edit distance, when it is
// near enough to be a typo (or arg is a prefix of exactly one name).
func closest(arg string, all []*Case) string {
	best, bestD, prefixed := "", 1<<30, []string{}
	for _, c := range all {
		if strings.HasPrefix(c.Name, arg) {
			prefixed = append(prefixed, c.Name)
		}
		if d := editDistance(arg, c.Name); d < bestD {
			best, bestD = c.Name, d
		}
	}
	if bestD <= max(2, len(arg)/4) {
		return best
	}
	if len(prefixed) == 1 && len(arg) >= 3 {
		return prefixed[0]
	}
	return ""
}

// editDistance is Levenshtein's distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
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
			return nil, &NotFoundError{Arg: arg, Suggest: closest(arg, all)}
		}
	}
	data, err := os.ReadFile(arg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotFoundError{Arg: arg}
	}
	if err != nil {
		return nil, err
	}
	return Parse(data, arg)
}
