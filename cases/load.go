package cases

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

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
	switch goType {
	case "Case":
		return "the case (known: name, description, suites, workload, garbage, steps, warmup, runs, ranks, rank_seed, seed, variants, python, env, cpus, timeouts, gate, expect, reduced)"
	case "Expect":
		return "an expectation (known: variant, metric, min, max, below, above, ratio_to, device, why)"
	case "Reduced":
		return "reduced (known: runs, steps, warmup)"
	case "Workload":
		return "workload (known: model, device, batch, hidden, layers, heads, seq, vocab, image, work, threads)"
	case "Garbage":
		return "garbage (known: pattern, cycles, objects, long_lived, retain, jitter)"
	case "Variant":
		return "a variant (known: name, policy, env)"
	case "Timeouts":
		return "timeouts (known: startup, silence, total)"
	case "Gate":
		return "gate (known: floors, alpha, spike_factor)"
	}
	return goType
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
	s := strings.TrimSpace(n.Value)
	scale := 1.0
	if strings.HasSuffix(s, "%") {
		s, scale = strings.TrimSuffix(s, "%"), 0.01
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %q is not a fraction (want e.g. 5%% or 0.05)", n.Line, n.Value)
	}
	*f = Fraction(v * scale)
	return nil
}

func (f Fraction) String() string { return strconv.FormatFloat(float64(f)*100, 'g', -1, 64) + "%" }
