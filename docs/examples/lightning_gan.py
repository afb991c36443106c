"""A small GAN trained with Lightning that logs ganeval's IMD and Protocol (FID and KID with 99 % intervals over
subsamples) every N epochs, from its validation loop.

    python docs/examples/lightning_gan.py --epochs 6 --every 2

The data are 8-d vectors, so the metrics take them as features (features="identity"); for images give
features="inception" (or 2048, "dinov2", "clip", an nn.Module) and update with the image batches. Under DDP each rank
updates with its share of the batches and compute() gathers every rank's rows first: all ranks get the same numbers.
"""

from __future__ import annotations

import argparse
from typing import Sequence

import lightning as L
import torch
from torch import nn
from torch.nn.functional import binary_cross_entropy_with_logits as bce
from torch.utils.data import DataLoader, TensorDataset

from ganeval.torchmetrics import IMD, Protocol

DIM, NOISE = 8, 4


def real_data(n: int, seed: int) -> torch.Tensor:
    """n rows of the target: a skewed, shifted Gaussian in DIM dimensions (the same for every seed but the rows)."""
    mix = torch.randn(DIM, DIM, generator=torch.Generator().manual_seed(0)) / DIM**0.5
    return torch.randn(n, DIM, generator=torch.Generator().manual_seed(seed)) @ mix + 2.0


class GAN(L.LightningModule):
    """A two-layer generator and discriminator (non-saturating GAN loss); the metrics are attributes, so Lightning
    moves their states with the module."""

    def __init__(self, lr: float = 2e-3) -> None:
        super().__init__()
        self.automatic_optimization = False  # two optimisers, stepped by hand
        self.lr = lr
        self.generator = nn.Sequential(nn.Linear(NOISE, 32), nn.ReLU(), nn.Linear(32, DIM))
        self.discriminator = nn.Sequential(nn.Linear(DIM, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
        self.imd = IMD(features="identity")
        self.protocol = Protocol({"fid": {}, "kid": {"subsets": 10, "subset_size": 100}}, features="identity",
                                 runs=5, sample_size=200)
        self.history: list[dict[str, float]] = []

    def configure_optimizers(self) -> list[torch.optim.Optimizer]:
        return [torch.optim.Adam(m.parameters(), lr=self.lr, betas=(0.5, 0.9))
                for m in (self.generator, self.discriminator)]

    def sample(self, n: int) -> torch.Tensor:
        return self.generator(torch.randn(n, NOISE, device=self.device))

    def training_step(self, batch: Sequence[torch.Tensor], batch_idx: int) -> None:
        (x,) = batch
        opt_g, opt_d = self.optimizers()  # type: ignore[misc]
        fake = self.sample(len(x))
        ones, zeros = torch.ones(len(x), 1, device=self.device), torch.zeros(len(x), 1, device=self.device)
        d_loss = bce(self.discriminator(x), ones) + bce(self.discriminator(fake.detach()), zeros)
        opt_d.zero_grad()
        self.manual_backward(d_loss)
        opt_d.step()
        g_loss = bce(self.discriminator(fake), ones)
        opt_g.zero_grad()
        self.manual_backward(g_loss)
        opt_g.step()
        self.log_dict({"d_loss": d_loss, "g_loss": g_loss})

    def validation_step(self, batch: Sequence[torch.Tensor], batch_idx: int) -> None:
        (x,) = batch
        fake = self.sample(len(x))
        for metric in (self.imd, self.protocol):
            metric.update(x, real=True)
            metric.update(fake, real=False)

    def on_validation_epoch_end(self) -> None:
        scores = {"imd": self.imd.compute(), **self.protocol.compute()}
        self.log_dict(scores)
        if not self.trainer.sanity_checking:
            self.history.append({"epoch": self.current_epoch, **{k: v.item() for k, v in scores.items()}})
        self.imd.reset()
        self.protocol.reset()


def main(argv: Sequence[str] | None = None) -> GAN:
    """Train for --epochs, scoring every --every epochs on --eval-size held-out real rows; returns the module."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--every", type=int, default=2, help="score every N epochs")
    p.add_argument("--train-size", type=int, default=2048)
    p.add_argument("--eval-size", type=int, default=512)
    p.add_argument("--root", default="lightning_gan", help="Lightning's folder")
    args = p.parse_args(argv)
    torch.manual_seed(0)
    train = DataLoader(TensorDataset(real_data(args.train_size, 1)), batch_size=128, shuffle=True)
    held_out = DataLoader(TensorDataset(real_data(args.eval_size, 2)), batch_size=128)
    trainer = L.Trainer(max_epochs=args.epochs, check_val_every_n_epoch=args.every, accelerator="cpu", devices=1,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, default_root_dir=args.root)
    model = GAN()
    trainer.fit(model, train, held_out)
    for row in model.history:
        print("  ".join(f"{k} {v:.4g}" for k, v in row.items()))
    return model


if __name__ == "__main__":
    main()
