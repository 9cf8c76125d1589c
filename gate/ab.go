package gate

import (
	"fmt"
	"maps"
	"strings"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
)

// Spec is one side of gcjitter ab: an interpreter and environment.
type Spec struct {
	Text   string // as given, for reports
	Python string
	Env    map[string]string
}

// ParseSpec reads a SPEC (contract): comma-separated python=PATH and
// env.NAME=VALUE items.
func ParseSpec(s string) (Spec, error) {
	spec := Spec{Text: s, Env: map[string]string{}}
	if s == "" {
		return spec, nil
	}
	for _, item := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		switch {
		case !ok:
			return spec, fmt.Errorf("%q: want python=PATH or env.NAME=VALUE", item)
		case k == "python":
			spec.Python = v
		case strings.HasPrefix(k, "env.") && len(k) > 4:
			spec.Env[k[4:]] = v
		default:
			return spec, fmt.Errorf("%q: unknown key %q (want python or env.NAME)", item, k)
		}
	}
	return spec, nil
}

// Describe names the side in reports.
func (s Spec) Describe() string {
	if s.Text == "" {
		return "this environment"
	}
	return s.Text
}

// ABSpecsOf are the sides an A/B results directory ran with, read from
// its command line (-a SPEC, -b SPEC); a side it does not name describes
// itself as "this environment".
func ABSpecsOf(m *results.Manifest) [2]Spec {
	var specs [2]Spec
	for i, arg := range m.Command {
		for k, flag := range []string{"-a", "-b"} {
			var text string
			switch {
			case (arg == flag || arg == "-"+flag) && i+1 < len(m.Command):
				text = m.Command[i+1]
			case strings.HasPrefix(arg, flag+"="), strings.HasPrefix(arg, "-"+flag+"="):
				_, text, _ = strings.Cut(arg, "=")
			default:
				continue
			}
			if spec, err := ParseSpec(text); err == nil {
				specs[k] = spec
			}
		}
	}
	return specs
}

// abSides are the variant-name prefixes of the two sides in one results
// directory; SplitAB is the only reader of them.
var abSides = [2]string{"a.", "b."}

// ABCases doubles every variant of the cases, one per side, so that both
// sides run interleaved in one invocation.
func ABCases(cs []*cases.Case, specs [2]Spec) {
	for _, c := range cs {
		var vs []cases.Variant
		for _, v := range c.Variants {
			for i, side := range abSides {
				env := maps.Clone(v.Env)
				if env == nil {
					env = map[string]string{}
				}
				maps.Copy(env, specs[i].Env)
				vs = append(vs, cases.Variant{Name: side + v.Name, Policy: v.Policy, Env: env, Python: specs[i].Python,
					Side: strings.TrimSuffix(side, "."), Of: v.Name})
			}
		}
		c.Variants = vs
	}
}

// SplitAB divides the results of an A/B run into its two sides, under the
// variants' own names.
func SplitAB(d *results.Data, specs [2]Spec) [2]*results.Data {
	sides := d.SplitVariants(abSide)
	for i := range sides {
		sides[i].Path = fmt.Sprintf("%c (%s)", "AB"[i], specs[i].Describe())
	}
	return sides
}

// abSide says which side a variant name belongs to, and its own name.
func abSide(v string) (int, string) {
	for i, p := range abSides {
		if name, ok := strings.CutPrefix(v, p); ok {
			return i, name
		}
	}
	return -1, ""
}

// ABSteps pairs the step series of an A/B run by benchmark, A old, B new.
func ABSteps(steps map[string]*results.Steps) map[string][2]*results.Steps {
	out := map[string][2]*results.Steps{}
	for bench, s := range steps {
		prefix, variant, _ := strings.Cut(bench, "/variant=")
		side, name := abSide(variant)
		if side < 0 {
			continue
		}
		pair := out[prefix+"/variant="+name]
		pair[side] = s
		out[prefix+"/variant="+name] = pair
	}
	return out
}
