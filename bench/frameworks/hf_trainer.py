"""A Hugging Face Trainer loop, unchanged, on a tiny GPT-2 built from its
config (nothing downloaded) and a synthetic dataset: what `gcjitter trace`
meets on the stack users run. Gradient accumulation 2, so each optimizer
step (a step to gcjitter) takes two micro-batches.

    gcjitter trace -o hf -- python bench/frameworks/hf_trainer.py --steps 60

A callback leaves cyclic garbage each micro-batch, as a data pipeline or a
logger does, so the collector has work."""
import argparse
import tempfile

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, length, vocab):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, length), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


class Node:
    __slots__ = ("ref", "payload")


class CyclicGarbage(TrainerCallback):
    """Cycles the reference-counter cannot free: what the collector is for."""

    def __init__(self, cycles):
        self.cycles = cycles

    def on_substep_end(self, args, state, control, **kw):
        self._leave()

    def on_step_end(self, args, state, control, **kw):
        self._leave()

    def _leave(self):
        for _ in range(self.cycles):
            a, b = Node(), Node()
            a.ref, b.ref, a.payload = b, a, [0] * 8


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--accum", type=int, default=2)
    p.add_argument("--cycles", type=int, default=400)
    a = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    cfg = GPT2Config(vocab_size=256, n_positions=64, n_embd=64, n_layer=2, n_head=2)
    model = GPT2LMHeadModel(cfg)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, max_steps=a.steps, per_device_train_batch_size=4,
                                 gradient_accumulation_steps=a.accum, learning_rate=1e-3, logging_steps=10_000,
                                 save_strategy="no", report_to=[], use_cpu=True, dataloader_num_workers=0,
                                 disable_tqdm=True, seed=0)
        trainer = Trainer(model=model, args=args, train_dataset=Tokens(4 * a.accum * a.steps, 32, 256),
                          callbacks=[CyclicGarbage(a.cycles)])
        trainer.train()
        print(f"hf_trainer: optimizer steps {trainer.state.global_step}")


if __name__ == "__main__":
    main()
