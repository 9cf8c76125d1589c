package advise

import (
	"fmt"
	"strings"

	"github.com/gcjitter/gcjitter/bench"
)

// Setting is how to apply a policy in one stack.
type Setting struct {
	Stack string `json:"stack"`
	How   string `json:"how"`
}

// Settings say how to set policy in the user's stack: plain Python first,
// then the training frameworks that have a switch for it. The framework
// names were checked against their sources: Megatron-LM's training loop
// (--manual-gc, --manual-gc-interval: gc.collect() every N iterations),
// torchtitan's job config (training.gc_freq: gc.collect(1) every N steps),
// NeMo 2's nemo.lightning.pytorch.callbacks.GarbageCollectionCallback
// (gc_interval_train, gc_interval_val: gc.collect()).
func Settings(policy string) []Setting {
	p, err := bench.ParsePolicy(policy)
	if err != nil {
		return nil
	}
	if policy == "default" {
		return []Setting{{"python", "nothing to change: leave the collector as CPython sets it"}}
	}
	var py []string
	if p.Disabled {
		py = append(py, "gc.disable() after the model is built, before the training loop (nothing frees cyclic garbage from then on)")
	}
	if len(p.Threshold) > 0 {
		args := make([]string, len(p.Threshold))
		for i, t := range p.Threshold {
			args[i] = fmt.Sprint(t)
		}
		py = append(py, fmt.Sprintf("gc.set_threshold(%s) at start", strings.Join(args, ", ")))
	}
	if p.Freeze {
		py = append(py, "gc.collect(); gc.freeze() after the model is loaded and the first steps have run (the worker froze after its warm-up)")
	}
	if p.ManualEvery > 0 {
		py = append(py, fmt.Sprintf("gc.disable() before the loop, then gc.collect(%d) at the end of every %d-th step, on every rank at the same step", p.ManualGen, p.ManualEvery))
	}
	if p.CollectEveryStep {
		py = append(py, "gc.collect() at the end of every step")
	}
	if p.EmptyCacheEveryStep {
		py = append(py, "torch.cuda.empty_cache() (torch.npu.empty_cache()) at the end of every step")
	}
	out := []Setting{{"python", strings.Join(py, "; ")}}
	out = append(out, callbacks(p)...)
	if p.ManualEvery == 0 {
		return out
	}
	n := p.ManualEvery
	extra := ""
	if p.Freeze {
		extra = ", plus the gc.freeze() above"
	}
	switch p.ManualGen {
	case 2:
		out = append(out,
			Setting{"megatron-lm", fmt.Sprintf("--manual-gc --manual-gc-interval %d%s", n, extra)},
			Setting{"nemo", fmt.Sprintf("GarbageCollectionCallback(gc_interval_train=%d, gc_interval_val=%d) in the trainer's callbacks%s", n, n, extra)},
			Setting{"torchtitan", fmt.Sprintf("training.gc_freq collects generation 1 only (gc.collect(1)), not this policy's full collection: measure manual:%d:1 to use --training.gc_freq %d", n, n)})
	case 1:
		out = append(out,
			Setting{"torchtitan", fmt.Sprintf("--training.gc_freq %d ([training] gc_freq = %d in the job's TOML)%s", n, n, extra)},
			Setting{"megatron-lm", fmt.Sprintf("--manual-gc-interval collects every generation (gc.collect()): measure manual:%d to use --manual-gc --manual-gc-interval %d", n, n)})
	}
	return out
}

// callbacks are the policy as a Lightning callback and a Hugging Face
// Trainer callback, which have no switch for it: Python code to paste, its
// hooks as the frameworks name them (lightning.pytorch.Callback's
// on_train_start and on_train_batch_end; transformers.TrainerCallback's
// on_train_begin and on_step_end, whose state.global_step counts optimizer
// steps). Only policies with a step-boundary action need one: a threshold
// or a plain disable is one line at start.
func callbacks(p bench.Policy) []Setting {
	if !p.Freeze && p.ManualEvery == 0 && !p.CollectEveryStep {
		return nil
	}
	var start, step []string
	if p.Freeze {
		// Freeze once the first steps have made the long-lived objects
		// (optimizer state, caches): after a warm-up, not at start.
		step = append(step, "if STEP == 10:  # after the warm-up: model, optimizer state and caches exist", "    gc.collect()", "    gc.freeze()")
	}
	if p.ManualEvery > 0 {
		start = append(start, "gc.disable()")
		step = append(step, fmt.Sprintf("if STEP %% %d == 0:", p.ManualEvery), fmt.Sprintf("    gc.collect(%d)", p.ManualGen))
	}
	if p.CollectEveryStep {
		step = append(step, "gc.collect()")
	}
	code := func(base, startSig, stepSig, stepVar, use string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "import gc\nclass GCPolicy(%s):\n", base)
		if len(start) > 0 {
			fmt.Fprintf(&b, "    def %s:\n", startSig)
			for _, l := range start {
				fmt.Fprintf(&b, "        %s\n", l)
			}
		}
		fmt.Fprintf(&b, "    def %s:\n", stepSig)
		for _, l := range step {
			fmt.Fprintf(&b, "        %s\n", strings.ReplaceAll(l, "STEP", stepVar))
		}
		b.WriteString(use)
		return b.String()
	}
	return []Setting{
		{"lightning", code("lightning.pytorch.Callback", "on_train_start(self, trainer, pl_module)",
			"on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx)", "trainer.global_step", "trainer = lightning.Trainer(..., callbacks=[GCPolicy()])")},
		{"hf-trainer", code("transformers.TrainerCallback", "on_train_begin(self, args, state, control, **kwargs)",
			"on_step_end(self, args, state, control, **kwargs)", "state.global_step", "trainer = transformers.Trainer(..., callbacks=[GCPolicy()])")},
	}
}
