// Package runner starts worker processes and keeps what they measure.
//
// Each run is one process of the embedded worker (bench.WorkerSource) under
// an interpreter that has torch, found by [FindPython]. The worker writes its
// record stream to an inherited pipe (file descriptor 3), never to its
// stdout or stderr; [Worker.Run] copies every line to disk as it arrives, so
// a worker that crashes loses nothing it already reported. The worker gets a
// process group of its own, so cancelling a run stops everything it started.
// Unless -cold, a single-rank run is forked from a warm server that imported
// torch once ([Warm]), with the same channels, group and supervision.
//
// [Launch.Run] is what the measuring commands call: it picks the
// interpreter (torch when a case needs it: [cases.Case.NeedsTorch]), plans
// the interleaved runs ([Plan]), executes them in a [Session] and logs what
// failed and what to do about it. [Collect] adds a run whose ranks an
// outside launcher started.
package runner
