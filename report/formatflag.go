package report

import (
	"flag"
	"fmt"
	"io"
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

// MeasuringFormatFlag registers -format on a measuring command: what goes to
// standard output. text is the tables as people read them; any other
// format is the report alone, for a script to parse, and the tables go to
// standard error instead.
func MeasuringFormatFlag(fs *flag.FlagSet) *string {
	return FormatFlag(fs, "text", "`format` of standard output: text, or markdown, json, junit or html (the report alone; the tables then go to standard error)")
}

// HumanOut is where a measuring command prints its tables: standard output
// for -format text, standard error otherwise (standard output is the
// report's).
func HumanOut(format string, stdout, stderr io.Writer) io.Writer {
	if format == "text" {
		return stdout
	}
	return stderr
}

// PrintFormat writes d to standard output in format unless it is text (the
// tables already went there).
func PrintFormat(stdout io.Writer, format string, d *Doc) error {
	if format == "text" {
		return nil
	}
	return RenderColor(stdout, format, d, false)
}
