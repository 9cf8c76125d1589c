package bench

import (
	"flag"
	"fmt"
	"math"
	"strconv"
)

// Config is one worker invocation: the workload, its garbage, the GC policy
// and the run's size. Its fields map one to one onto the worker's flags, and
// DefaultConfig holds the worker's defaults; the fields whose zero means
// "unset" (CPUs, GarbageJitter, RankSeed, ComputeScale, DeviceWaitMS) are
// passed only when set, so a Config without them makes the same argument
// list as before they existed.
type Config struct {
	Model  string // mlp, gpt, resnet or none
	Device string // auto, cpu, cuda[:i], npu[:i]
	Policy string // e.g. default, disabled, threshold:700,10,1000, freeze+manual:100

	Steps  int
	Warmup int
	Seed   int64

	Batch, Hidden, Layers, Heads, Seq, Vocab, Image, Work int
	Threads                                               int

	Garbage   string // pattern(s) joined by +, or none
	Cycles    int    // garbage cycles per step
	Objects   int    // objects per cycle
	LongLived int    // tracked objects alive for the whole run
	// LongLivedRefs makes each long-lived object a list of this many
	// references: a heavier heap per object (0: plain objects).
	LongLivedRefs int
	Retain        int // steps each step's garbage stays referenced
	// GarbageEvery makes the garbage on one step in this many (0 or 1:
	// every step): less than one cycle per step, as jobs that rarely
	// collect make.
	GarbageEvery int
	// LeakKiBPerStep keeps this many KiB alive for good after every step,
	// outside the timed region and untracked by the collector: a planted
	// leak that only memory growth sees.
	LeakKiBPerStep int

	CPUs string // CPU list to pin the worker to ("0-3,6"); empty: no pinning

	GarbageJitter float64 // vary the cycles per step by up to this fraction
	RankSeed      string  // multi-rank: per-rank (default) or shared

	// ComputeScale multiplies the compute per step (the batch of a torch
	// model, the work of model none) to make the host look slower or
	// faster; 0 means the worker's default, 1.
	ComputeScale float64
	// DeviceWaitMS is a GIL-releasing wait per step, inside the timed
	// region, standing for an accelerator's share of the step; 0: none.
	DeviceWaitMS float64
	// Emulated is an emulated asynchronous device (a separate process with
	// a bounded launch queue); zero StepMS: none.
	Emulated EmulatedDevice

	NoRecorder bool // run without the gc callback (to prove it changes nothing)
	// Census counts the objects each collection walks (GCEvent.Objects):
	// a run after the timed ones, never timed itself.
	Census bool
}

// MaxDeviceWaitMS is the longest wait per step the worker accepts (an hour:
// anything longer is a typo); the worker's MAX_DEVICE_WAIT_MS.
const MaxDeviceWaitMS = 3_600_000

// ValidateComputeScale checks Config.ComputeScale: finite and >= 0, where 0
// means the worker's default, 1. (The worker itself wants > 0; 0 is never
// passed to it.)
func ValidateComputeScale(f float64) error {
	if !(f >= 0) || math.IsInf(f, 1) {
		return fmt.Errorf("must be a finite number >= 0 (0 means 1), got %v", f)
	}
	return nil
}

// ValidateDeviceWait checks Config.DeviceWaitMS: 0 (no wait) up to
// MaxDeviceWaitMS milliseconds.
func ValidateDeviceWait(ms float64) error {
	if !(ms >= 0 && ms <= MaxDeviceWaitMS) {
		return fmt.Errorf("must be in 0..%d (milliseconds), got %v", MaxDeviceWaitMS, ms)
	}
	return nil
}

// ExitUsage is the worker's exit status for bad input (the worker's
// EXIT_USAGE): no torch, no such device, arguments it refuses.
const ExitUsage = 2

// NeedsTorch is the rule for whether a worker imports torch: every model
// but none, an explicit accelerator, and several ranks (torch.distributed).
// The worker's needs_torch (cli.py) is the same rule in Python.
func NeedsTorch(model, device string, ranks int) bool {
	return model != "none" || ranks > 1 || (device != "auto" && device != "cpu" && device != "")
}

// EmulatedDevice is the worker's --emu-* flags: StepMS of device work per
// step, launched as Kernels kernels spread through the step's host work
// into a queue of QueueDepth pending kernels, with Syncs mid-step syncs and
// each kernel's time varied by up to Jitter (a fraction). Zero Kernels and
// QueueDepth take the worker's defaults.
type EmulatedDevice struct {
	StepMS     float64 `yaml:"step_ms" json:"step_ms"`
	Kernels    int     `yaml:"kernels" json:"kernels,omitempty"`
	QueueDepth int     `yaml:"queue_depth" json:"queue_depth,omitempty"`
	Syncs      int     `yaml:"syncs" json:"syncs,omitempty"`
	Jitter     float64 `yaml:"jitter" json:"jitter,omitempty"`
}

// MaxEmulatedKernels is the most kernels per step the emulated device
// takes: the worker's EMU_MAX_KERNELS, which sizes its preallocated
// per-step answer (a busy span and an end per kernel).
const MaxEmulatedKernels = 256

// Validate checks e as the worker would, naming the bad key.
func (e EmulatedDevice) Validate() (key string, err error) {
	kernels := e.Kernels
	if kernels == 0 {
		kernels = 8
	}
	switch {
	case !(e.StepMS > 0 && e.StepMS <= MaxDeviceWaitMS):
		return "step_ms", fmt.Errorf("must be in (0, %d] milliseconds of device work per step, got %v", MaxDeviceWaitMS, e.StepMS)
	case e.Kernels < 0 || e.Kernels > MaxEmulatedKernels:
		return "kernels", fmt.Errorf("must be in 1..%d (0: the worker's default, 8), got %d", MaxEmulatedKernels, e.Kernels)
	case e.QueueDepth < 0 || e.QueueDepth > 4096:
		return "queue_depth", fmt.Errorf("must be in 1..4096 (0: the worker's default, 2), got %d", e.QueueDepth)
	case e.Syncs < 0 || e.Syncs >= kernels:
		return "syncs", fmt.Errorf("must be fewer than the kernels per step, got %d", e.Syncs)
	case !(e.Jitter >= 0 && e.Jitter < 1):
		return "jitter", fmt.Errorf("must be in [0, 1), got %v", e.Jitter)
	}
	return "", nil
}

// DefaultConfig returns the worker's defaults.
func DefaultConfig() Config {
	return Config{
		Model: "mlp", Device: "auto", Policy: "default",
		Steps: 100, Warmup: 10, Seed: 1,
		Batch: 8, Hidden: 256, Layers: 2, Heads: 4, Seq: 64, Vocab: 1024, Image: 32, Work: 20000,
		Garbage: "none", Cycles: 100, Objects: 4,
	}
}

// Args returns the worker's command-line flags for c.
func (c Config) Args() []string {
	itoa := strconv.Itoa
	args := []string{
		"--model", c.Model, "--device", c.Device, "--policy", c.Policy,
		"--steps", itoa(c.Steps), "--warmup", itoa(c.Warmup), "--seed", strconv.FormatInt(c.Seed, 10),
		"--batch", itoa(c.Batch), "--hidden", itoa(c.Hidden), "--layers", itoa(c.Layers),
		"--heads", itoa(c.Heads), "--seq", itoa(c.Seq), "--vocab", itoa(c.Vocab),
		"--image", itoa(c.Image), "--work", itoa(c.Work), "--threads", itoa(c.Threads),
		"--garbage", c.Garbage, "--cycles", itoa(c.Cycles), "--objects", itoa(c.Objects),
		"--long-lived", itoa(c.LongLived), "--retain", itoa(c.Retain),
	}
	if c.CPUs != "" {
		args = append(args, "--cpus", c.CPUs)
	}
	if c.LongLivedRefs != 0 { // only when set: existing cases' argv is unchanged
		args = append(args, "--long-lived-refs", itoa(c.LongLivedRefs))
	}
	if c.GarbageEvery > 1 { // only when set: existing cases' argv is unchanged
		args = append(args, "--garbage-every", itoa(c.GarbageEvery))
	}
	if c.LeakKiBPerStep != 0 {
		args = append(args, "--leak-kib-per-step", itoa(c.LeakKiBPerStep))
	}
	if c.GarbageJitter != 0 {
		args = append(args, "--garbage-jitter", strconv.FormatFloat(c.GarbageJitter, 'g', -1, 64))
	}
	if c.ComputeScale != 0 {
		args = append(args, "--compute-scale", strconv.FormatFloat(c.ComputeScale, 'g', -1, 64))
	}
	if c.DeviceWaitMS != 0 {
		args = append(args, "--device-wait-ms", strconv.FormatFloat(c.DeviceWaitMS, 'g', -1, 64))
	}
	if e := c.Emulated; e.StepMS != 0 {
		args = append(args, "--emu-device-ms", strconv.FormatFloat(e.StepMS, 'g', -1, 64))
		if e.Kernels != 0 {
			args = append(args, "--emu-kernels", itoa(e.Kernels))
		}
		if e.QueueDepth != 0 {
			args = append(args, "--emu-queue-depth", itoa(e.QueueDepth))
		}
		if e.Syncs != 0 {
			args = append(args, "--emu-syncs", itoa(e.Syncs))
		}
		if e.Jitter != 0 {
			args = append(args, "--emu-jitter", strconv.FormatFloat(e.Jitter, 'g', -1, 64))
		}
	}
	if c.RankSeed != "" {
		args = append(args, "--rank-seed", c.RankSeed)
	}
	if c.NoRecorder {
		args = append(args, "--no-recorder")
	}
	if c.Census {
		args = append(args, "--census")
	}
	return args
}

// RegisterFlags binds c's fields to Go-style flags (-model gpt -steps 50).
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Model, "model", c.Model, "model: mlp, gpt, resnet or none")
	fs.StringVar(&c.Device, "device", c.Device, "device: auto, cpu, cuda[:i] or npu[:i]")
	fs.StringVar(&c.Policy, "policy", c.Policy, "GC policy: default, disabled, threshold:T0,T1,T2, freeze, manual:N[:gen], collect-every-step, empty-cache-every-step, joined by +")
	fs.IntVar(&c.Steps, "steps", c.Steps, "measured steps")
	fs.IntVar(&c.Warmup, "warmup", c.Warmup, "warm-up steps (recorded, excluded from statistics)")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed for weights, data and garbage")
	fs.IntVar(&c.Batch, "batch", c.Batch, "batch size")
	fs.IntVar(&c.Hidden, "hidden", c.Hidden, "hidden width")
	fs.IntVar(&c.Layers, "layers", c.Layers, "layers")
	fs.IntVar(&c.Heads, "heads", c.Heads, "gpt: attention heads")
	fs.IntVar(&c.Seq, "seq", c.Seq, "gpt: sequence length")
	fs.IntVar(&c.Vocab, "vocab", c.Vocab, "gpt: vocabulary size")
	fs.IntVar(&c.Image, "image", c.Image, "resnet: input image size")
	fs.IntVar(&c.Work, "work", c.Work, "model none: loop iterations per step")
	fs.IntVar(&c.Threads, "threads", c.Threads, "torch intra-op threads (0: torch's default)")
	fs.StringVar(&c.Garbage, "garbage", c.Garbage, "garbage pattern(s) joined by +: pairs, ring, graph, tensor-holders, traceback, logdict, or none")
	fs.IntVar(&c.Cycles, "cycles", c.Cycles, "garbage cycles per step")
	fs.IntVar(&c.Objects, "objects", c.Objects, "objects per cycle")
	fs.IntVar(&c.LongLived, "long-lived", c.LongLived, "tracked objects alive for the whole run")
	fs.IntVar(&c.Retain, "retain", c.Retain, "steps each step's garbage stays referenced before it dies")
	fs.IntVar(&c.LongLivedRefs, "long-lived-refs", c.LongLivedRefs, "each long-lived object a list of this many references (0: a plain object): a heavier heap per object")
	fs.IntVar(&c.GarbageEvery, "garbage-every", c.GarbageEvery, "make the garbage on one step in this many (0 or 1: every step)")
	fs.IntVar(&c.LeakKiBPerStep, "leak-kib-per-step", c.LeakKiBPerStep, "keep this many KiB alive for good after every step, outside the timed region: a planted leak")
	fs.StringVar(&c.CPUs, "cpus", c.CPUs, "pin the worker to these CPUs (e.g. 0-3,6)")
	fs.Float64Var(&c.ComputeScale, "compute-scale", c.ComputeScale, "multiply the compute per step (torch models: the batch; model none: the work), to make the host look slower or faster (0: the worker's default, 1)")
	fs.Float64Var(&c.DeviceWaitMS, "device-wait-ms", c.DeviceWaitMS, "wait this many ms per step inside the timed region, GIL released: an accelerator's share of the step (0: no wait)")
	fs.Float64Var(&c.Emulated.StepMS, "emu-device-ms", c.Emulated.StepMS, "an emulated asynchronous device: this many ms of device work per step, run by a separate process while the host runs ahead (0: none)")
	fs.IntVar(&c.Emulated.Kernels, "emu-kernels", c.Emulated.Kernels, "emulated device: kernels per step, launched through the step's host work (0: 8)")
	fs.IntVar(&c.Emulated.QueueDepth, "emu-queue-depth", c.Emulated.QueueDepth, "emulated device: pending kernels at most; a launch beyond blocks the host (0: 2)")
	fs.IntVar(&c.Emulated.Syncs, "emu-syncs", c.Emulated.Syncs, "emulated device: mid-step syncs per step")
	fs.Float64Var(&c.Emulated.Jitter, "emu-jitter", c.Emulated.Jitter, "emulated device: vary each kernel's time by up to this fraction")
	fs.BoolVar(&c.NoRecorder, "no-recorder", c.NoRecorder, "do not install the gc callback")
	fs.BoolVar(&c.Census, "census", c.Census, "count the objects each collection walks (never for timings)")
}
