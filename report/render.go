package report

import (
	"fmt"
	"io"
	"strings"
)

// Formats are the report formats (the -format flag's contract).
var Formats = []string{"text", "markdown", "json", "junit", "html"}

// Render writes d in format; text is coloured when w is a terminal
// (ColorFor), so a file or a buffer never holds escape codes.
func Render(w io.Writer, format string, d *Doc) error {
	return RenderColor(w, format, d, ColorFor(w))
}

// RenderColor is Render with the colour of the text format decided by the
// caller: for output buffered on its way to a terminal, color is
// ColorFor(the terminal); anything written to a file passes false.
func RenderColor(w io.Writer, format string, d *Doc, color bool) error {
	switch format {
	case "text":
		if p := d.Partial(); p != "" {
			fmt.Fprintln(w, p)
		}
		AnswersText(w, d.Answers)
		if d.ShowsPolicies() {
			RunSummaryText(w, d.Manifest)
		}
		if d.Comparison != nil {
			if d.Reference != "" {
				fmt.Fprintf(w, "\nevery variant against the reference variant %s:\n", d.Reference)
			}
			for _, s := range d.Schedules {
				fmt.Fprintln(w, s.Text())
			}
			TextColor(w, d.Comparison, color)
		}
		for _, r := range d.FailedRuns() {
			fmt.Fprintf(w, "run %s %s: %s\n", r.ID, r.Status, r.Reason)
		}
		return nil
	case "markdown":
		Markdown(w, d)
		return nil
	case "json":
		return JSON(w, d)
	case "junit":
		return JUnit(w, d)
	case "html":
		return HTML(w, d)
	}
	return fmt.Errorf("unknown format %q (want text, markdown, json, junit or html)", format)
}

// Ext is the file extension of a format.
// FormatOf is the format a file name asks for by its extension (report.html
// is html), "" when it names none.
func FormatOf(path string) string {
	for _, f := range Formats {
		if strings.HasSuffix(path, Ext(f)) {
			return f
		}
	}
	if strings.HasSuffix(path, ".xml") {
		return "junit"
	}
	return ""
}

func Ext(format string) string {
	switch format {
	case "markdown":
		return ".md"
	case "junit":
		return ".junit.xml"
	case "text":
		return ".txt"
	}
	return "." + format
}

// AnswersText writes what to set, per case: the answer first, then why.
func AnswersText(w io.Writer, answers []Answer) {
	if len(answers) == 0 {
		return
	}
	fmt.Fprintln(w, "what to set:")
	for _, a := range answers {
		fmt.Fprintf(w, "  %s: %s", a.Case, a.Headline())
		if a.Warning != "" {
			fmt.Fprintf(w, " (warning: %s)", a.Warning)
		}
		fmt.Fprintln(w)
		if a.Err != "" {
			fmt.Fprintf(w, "    %s\n", a.Err)
			continue
		}
		fmt.Fprintf(w, "    reason: %s\n", a.Reason)
		for _, s := range a.Settle {
			fmt.Fprintf(w, "    settle %s\n", s)
		}
	}
	fmt.Fprintln(w)
}
