// Package runner starts worker processes and keeps what they measure.
//
// Each run is one process of the embedded worker (bench.WorkerSource) under
// an interpreter that has torch, found by [FindPython]. The worker writes its
// record stream to an inherited pipe (file descriptor 3), never to its
// stdout or stderr; [RunWorker] copies every line to disk as it arrives, so a
// worker that crashes loses nothing it already reported. The worker gets a
// process group of its own, so cancelling a run stops everything it started.
package runner
