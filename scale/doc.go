// Package scale predicts a data-parallel job's step times at N ranks from
// the per-rank record streams of a few measured ranks, and checks the
// prediction on the jobs it can measure before it extrapolates.
//
// In data parallelism the slowest rank sets every step. Each rank's own
// time (the worker's "own": its step before the collective) is replayed
// from its stream: its collections of note at their measured pauses, those
// the allocator started at a random phase per rank (ranks drift apart),
// those the policy scheduled on the same step for every rank; its noise
// from the steps without one, a host's ranks sharing it. The global step is
// the largest own time plus the collective, whose measured cost grows with
// N by a tree or ring model (Collective). Figures are judged against the
// same job without collections; intervals come from a block bootstrap of
// runs and steps, each replicate simulated afresh.
//
// Load reads results directories into Groups (case, variant, world size);
// Build validates on every measured multi-rank group (in sample, each run
// from the others, and from single-rank runs of the same variant) and
// predicts each variant from its largest world size; a variant with a
// validation beyond tolerance (Validation.Beyond: p50, p90, p99, spike
// rate) is not validated (Report.Status, Report.Failed); Report renders text,
// JSON and a self-contained HTML page with a chart. docs/scale.md has the
// model and its limits.
package scale
