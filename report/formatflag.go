package report

import (
	"flag"
	"fmt"
	"slices"
	"strings"
)

// formatValue is -format: flag parsing itself refuses a format that does
// not exist (exit 2), so no command checks it again.
type formatValue string

func (f *formatValue) String() string { return string(*f) }

func (f *formatValue) Set(s string) error {
	if !slices.Contains(Formats, s) {
		return fmt.Errorf("want one of %s", strings.Join(Formats, ", "))
	}
	*f = formatValue(s)
	return nil
}

// FormatFlag registers -format with its default and usage.
func FormatFlag(fs *flag.FlagSet, def, usage string) *string {
	f := formatValue(def)
	fs.Var(&f, "format", usage)
	return (*string)(&f)
}
