package cases

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/internal/fileerr"
)

// Error is a problem in a case file, printed as file:line: message.
type Error = fileerr.Error

// Errors is every problem found in one file, in line order.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es Errors) ExitCode() int { return cli.Usage }

// Parse reads and validates one case file. source names it in errors. The
// error, when not nil, is Errors.
func Parse(data []byte, source string) (*Case, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, Errors{yamlError(source, err)}
	}
	if len(root.Content) == 0 {
		return nil, Errors{{File: source, Line: 1, Msg: "empty case file"}}
	}
	if root.Content[0].Kind != yaml.MappingNode {
		return nil, Errors{{File: source, Line: root.Content[0].Line, Msg: "a case file is a mapping of keys (name:, workload:, variants: ...)"}}
	}
	c := newCase(source, data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			var errs Errors
			for _, msg := range te.Errors {
				errs = append(errs, yamlMessage(source, msg))
			}
			return nil, errs
		}
		return nil, Errors{yamlError(source, err)}
	}
	c.nameVariants()
	at := func(path ...string) int { return lineOf(root.Content[0], path) }
	if errs := c.validate(at); len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
		return nil, Errors(errs)
	}
	return c, nil
}

// lineOf finds the line of the value at path (mapping keys, or sequence
// indices), or of the deepest part of path that exists.
func lineOf(n *yaml.Node, path []string) int {
	line := n.Line
	for _, p := range path {
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == p {
					line, n, found = n.Content[i].Line, n.Content[i+1], true
					break
				}
			}
			if !found {
				return line
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line
		}
	}
	return line
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlMessage turns one of yaml.v3's messages ("line 4: field stpes not
// found in type cases.Case") into an Error in the user's terms.
func yamlMessage(source, msg string) *Error {
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if m := regexp.MustCompile(`^field (\S+) not found in type cases\.(\w+)$`).FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("unknown key %q in %s", m[1], sectionName(m[2]))
	}
	if m := regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (.+)$").FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("wrong type: %q is a %s, want %s", m[2], yamlKind(m[1]), goKind(m[3]))
	}
	return &Error{File: source, Line: line, Msg: msg}
}

func yamlError(source string, err error) *Error {
	return yamlMessage(source, strings.TrimPrefix(err.Error(), "yaml: "))
}

func sectionName(goType string) string {
	// The known keys come from the structs' yaml tags, so a new key cannot
	// be missing from the message.
	for _, sec := range []struct {
		goType, label string
		t             reflect.Type
	}{
		{"Case", "the case", reflect.TypeFor[Case]()},
		{"Expect", "an expectation", reflect.TypeFor[Expect]()},
		{"Reduced", "reduced", reflect.TypeFor[Reduced]()},
		{"Workload", "workload", reflect.TypeFor[Workload]()},
		{"Garbage", "garbage", reflect.TypeFor[Garbage]()},
		{"Variant", "a variant", reflect.TypeFor[Variant]()},
		{"Timeouts", "timeouts", reflect.TypeFor[Timeouts]()},
		{"Gate", "gate", reflect.TypeFor[Gate]()},
	} {
		if sec.goType == goType {
			return sec.label + " (known: " + yamlKeys(sec.t) + ")"
		}
	}
	return goType
}

// yamlKeys lists a struct's yaml keys in field order, so a section's list
// of known keys cannot fall behind its fields.
func yamlKeys(t reflect.Type) string {
	var keys []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return strings.Join(keys, ", ")
}

func yamlKind(tag string) string {
	switch tag {
	case "str":
		return "string"
	case "int":
		return "integer"
	case "float":
		return "number"
	case "bool":
		return "boolean"
	case "seq":
		return "list"
	case "map":
		return "mapping"
	}
	return tag
}

func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "int"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	}
	return "a " + strings.TrimPrefix(t, "cases.")
}

// Duration is a time.Duration written as "90s" or "10m" in case files.
type Duration time.Duration

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %q is not a duration (want e.g. 90s, 10m, 1h)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Fraction is a relative change, written as "5%" or 0.05.
type Fraction float64

func (f *Fraction) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseFraction(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %q is not a fraction (want e.g. 5%% or 0.05)", n.Line, n.Value)
	}
	*f = Fraction(v)
	return nil
}

// ParseFraction reads a fraction as case files and flags write it: 5% or
// 0.05. Negative values are refused.
func ParseFraction(s string) (float64, error) {
	s = strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(s, "%") {
		s, scale = strings.TrimSuffix(s, "%"), 0.01
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		// inf would make a floor no change can pass, NaN every verdict unknown.
		return 0, fmt.Errorf("%q: want a finite non-negative fraction like 5%% or 0.05", s)
	}
	return v * scale, nil
}

// FloorFlags collects -floor METRIC=FRACTION flags (repeatable).
type FloorFlags map[string]float64

func (f FloorFlags) String() string { return fmt.Sprint(map[string]float64(f)) }

func (f FloorFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want METRIC=FLOOR, e.g. p99=10%%")
	}
	x, err := ParseFraction(v)
	if err != nil {
		return fmt.Errorf("floor %w", err)
	}
	f[k] = x
	return nil
}

func (f Fraction) String() string { return strconv.FormatFloat(float64(f)*100, 'g', -1, 64) + "%" }
