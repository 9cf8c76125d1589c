package main

import (
	"io"

	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
)

// printRunSummary prints, per case and variant, the median over runs of
// each run's figures: a first look, without comparison or verdicts.
func printRunSummary(w io.Writer, m *results.Manifest) { report.RunSummaryText(w, m) }
