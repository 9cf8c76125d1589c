"""A Lightning Trainer loop, unchanged, on a tiny MLP and a synthetic
dataset (nothing downloaded): what `gcjitter trace` meets on the stack
users run. accumulate_grad_batches 2, so each optimizer step (a step to
gcjitter) takes two batches.

    gcjitter trace -o pl -- python bench/frameworks/lightning_trainer.py --steps 60

The module leaves cyclic garbage each batch, as a data pipeline or a
logger does, so the collector has work."""
import argparse

import lightning as L
import torch


class Node:
    __slots__ = ("ref", "payload")


class Tiny(L.LightningModule):
    def __init__(self, cycles):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
        self.cycles = cycles

    def training_step(self, batch, i):
        x, y = batch
        for _ in range(self.cycles):
            a, b = Node(), Node()
            a.ref, b.ref, a.payload = b, a, [0] * 8
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--accum", type=int, default=2)
    p.add_argument("--cycles", type=int, default=800)
    a = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    n = 16 * a.accum * a.steps
    data = torch.utils.data.TensorDataset(torch.randn(n, 64, generator=g), torch.randint(0, 10, (n,), generator=g))
    trainer = L.Trainer(max_steps=a.steps, accelerator="cpu", devices=1, accumulate_grad_batches=a.accum,
                        enable_checkpointing=False, logger=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Tiny(a.cycles), torch.utils.data.DataLoader(data, batch_size=16, num_workers=0))
    print(f"lightning_trainer: optimizer steps {trainer.global_step}")


if __name__ == "__main__":
    main()
