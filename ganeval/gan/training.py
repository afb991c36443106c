"""Training WGAN, WGAN-GP and the vanilla GAN: seeded, resumable, with loss logs, plots and sample grids.

An epoch is one pass of the critic over the real data (one real batch per critic step, the last
incomplete batch dropped); every `n_critic` critic steps the generator takes one step. The data
order of epoch e is a permutation drawn from (seed, e) alone, so a run resumed from a checkpoint
sees exactly the batches the uninterrupted run would have seen.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ganeval.common import atomic_torch_save, atomic_write_text, resolve_device
from ganeval.gan import plots
from ganeval.gan.architectures import build, get_architecture, resolve_arch_kwargs
from ganeval.gan.checkpoint import FORMAT, VERSION, capture_rng, checkpoint_config, load_checkpoint, restore_rng
from ganeval.gan.config import GanConfig, gan_config
from ganeval.gan.sampling import generate, latent
from ganeval.hashing import array_identity, stable_hash

log = logging.getLogger(__name__)

CHECKPOINT_NAME = "checkpoint.pt"
# Training on CPU runs on one torch thread unless told otherwise. Measured with scripts/bench_threads.py on the
# 2-core development machine (quickstart WGAN-GP, critic iterations/s, 1 thread vs 2): quiet 11.3 vs 16.6,
# beside one busy process 10.7 vs 3.8, beside two 6.2 vs 3.2 — two threads spin against any other load. The
# count cannot follow the load: 1 and 2 threads train different weights (float sums in another order).
CPU_THREADS = 1
GRID_SAMPLES = 64


def train(
    images_or_points: np.ndarray,
    *,
    arch: str,
    gan: str | Mapping[str, Any] | GanConfig,
    out_dir: str | Path,
    epochs: int,
    batch_size: int = 64,
    seed: int = 0,
    device: str | torch.device | None = None,
    checkpoint_every: int = 500,
    sample_every: int = 10,
    progress: bool = True,
    arch_kwargs: Mapping[str, Any] | None = None,
    callback: Callable[[dict[str, int]], None] | None = None,
    threads: int | None = None,
    **hyper: Any,
) -> Path:
    """Train generator/critic pair `arch` on real data with trainer `gan`; return the final checkpoint's path.

    images_or_points: uint8 N×C×H×W images (resized to the architecture's resolution; non-square
    ones centre-cropped first) or float N×D points (arch "mlp"). gan: a preset name ("wgan",
    "wgan_gp", "gan", "wgan_quick", "wgan_gp_quick"), a mapping or a GanConfig; `**hyper` overrides
    its fields (e.g. lr_d=1e-3). arch_kwargs override the architecture's sizes; `channels` (images)
    and `out_dim` (points) default to the data's. checkpoint_every: critic steps between
    checkpoints; sample_every: epochs between sample grids (0: only at the end). `callback` is
    called after every critic step with the counters (monitoring; tests use it to interrupt).
    threads: torch's CPU threads while training (default `CPU_THREADS`, 1: see its comment); the count is
    part of the run's identity, since another count sums in another order and trains other weights.

    Writes into out_dir: checkpoint.pt, config.json, losses.csv, losses.png, samples_final.png
    (and samples_epochNNNN.png). A checkpoint already in out_dir is resumed when its config hash
    (architecture, trainer, batch size, seed, data fingerprint) matches and refused otherwise.
    """
    cfg = gan_config(gan, **hyper)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    x, arch_kw = _check_inputs(
        images_or_points, arch, arch_kwargs, epochs, batch_size, checkpoint_every, sample_every
    )
    dev = resolve_device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={str(dev)!r} but CUDA is not available here; use device='cpu'")
    n_threads = cpu_threads(threads) if dev.type == "cpu" else None
    out_dir = Path(out_dir)
    run_config = {
        "format": FORMAT,
        "version": VERSION,
        "arch": arch,
        "arch_kwargs": arch_kw,
        "gan": cfg.to_dict(),
        "batch_size": int(batch_size),
        "seed": int(seed),
        "threads": n_threads,
        "data": array_identity(x),  # shape, dtype, SHA-256: resume only on the same data
    }
    config_hash = stable_hash(run_config)
    ckpt_path = out_dir / CHECKPOINT_NAME
    resume = _load_matching(ckpt_path, config_hash, run_config, epochs) if ckpt_path.exists() else None
    if resume is not None and resume.get("done") and int(resume["epoch"]) == epochs:
        log.info("%s already holds the finished training; nothing to do", ckpt_path)
        return ckpt_path  # untouched, so its sha256 (the generator's identity) stays the same

    with torch_threads(n_threads):  # one fixed count: the same weights whatever else the machine runs
        _seed_everything(seed)
        gen, critic = build(arch, **arch_kw)
        gen.to(dev)
        critic.to(dev)
        opt_g, opt_d = _optimizer(cfg, gen.parameters(), cfg.lr_g), _optimizer(cfg, critic.parameters(), cfg.lr_d)
        noise = torch.Generator(device=dev).manual_seed(int(seed))
        state = {"epoch": 0, "batch": 0, "critic_step": 0, "gen_step": 0}
        history = np.zeros((0, len(plots.LOSS_COLUMNS)))
        acc = torch.zeros(3, device=dev)  # critic loss, gap, penalty summed since the last generator step
        if resume is not None:
            gen.load_state_dict(resume["generator"])
            critic.load_state_dict(resume["critic"])
            opt_g.load_state_dict(resume["opt_g"])
            opt_d.load_state_dict(resume["opt_d"])
            state = {k: int(resume[k]) for k in state}
            history = resume["history"].numpy()
            acc = resume["acc"].to(dev)
            restore_rng(resume["rng"], noise)
            log.info("resuming %s at epoch %d, critic step %d", ckpt_path, state["epoch"], state["critic_step"])
        config_text = json.dumps({"config_hash": config_hash, **run_config}, indent=2) + "\n"
        atomic_write_text(out_dir / "config.json", config_text)

        data = _prepare_data(x, gen, dev)
        n_batches = len(x) // batch_size
        fixed_z = latent(GRID_SAMPLES, gen.latent_shape, seed + 1)
        writer = _Outputs(out_dir, gen, fixed_z, dev, x if gen.output_range is None else None, f"{arch} {cfg.name}")

        def save(done: bool) -> None:
            nonlocal history
            history = _flush(history, pending)
            ckpt = {
                "format": FORMAT,
                "version": VERSION,
                "config_hash": config_hash,
                "config_json": json.dumps(run_config, sort_keys=True),
                "arch": arch,
                "arch_kwargs": dict(arch_kw),
                "output_range": list(gen.output_range) if gen.output_range is not None else None,
                "latent_shape": list(gen.latent_shape),
                "output_shape": list(gen.output_shape),
                "generator": gen.state_dict(),
                "critic": critic.state_dict(),
                "opt_g": opt_g.state_dict(),
                "opt_d": opt_d.state_dict(),
                **state,
                "epochs": int(epochs),
                "done": done,
                "acc": acc.detach().cpu(),
                "history": torch.from_numpy(np.ascontiguousarray(history)),
                "rng": capture_rng(noise),
                "device": str(dev),
            }
            atomic_torch_save(ckpt, ckpt_path)
            plots.write_loss_csv(out_dir / "losses.csv", history)

        pending: list[tuple[int, int, int, torch.Tensor]] = []
        total = epochs * n_batches
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=state["critic_step"], disable=not progress, unit="it", desc=f"{arch}/{cfg.name} seed {seed}")
        gen.train()
        critic.train()
        try:
            while state["epoch"] < epochs:
                order = _epoch_order(len(x), seed, state["epoch"]).to(data.device)
                while state["batch"] < n_batches:
                    b = state["batch"]
                    real = _to_float(data[order[b * batch_size : (b + 1) * batch_size]], gen, dev)
                    acc += _critic_step(gen, critic, opt_d, cfg, real, noise)
                    state["critic_step"] += 1
                    if state["critic_step"] % cfg.n_critic == 0:
                        loss_g = _generator_step(gen, critic, opt_g, cfg, batch_size, noise)
                        state["gen_step"] += 1
                        pending.append((state["gen_step"], state["critic_step"], state["epoch"],
                                        torch.cat([acc / cfg.n_critic, loss_g.view(1)])))  # fmt: skip
                        acc = torch.zeros_like(acc)
                        if len(pending) >= 20:
                            history = _flush(history, pending)
                            bar.set_postfix(_postfix(history), refresh=False)
                    state["batch"] += 1
                    bar.update(1)
                    if state["batch"] == n_batches:
                        state["epoch"] += 1
                        state["batch"] = 0
                    done = state["epoch"] == epochs
                    if state["critic_step"] % checkpoint_every == 0 and not done:
                        save(done=False)
                    if callback is not None:
                        callback(dict(state))
                    if state["batch"] == 0:
                        break
                if sample_every and state["epoch"] % sample_every == 0 and state["epoch"] < epochs:
                    history = _flush(history, pending)
                    writer.samples(f"samples_epoch{state['epoch']:04d}.png")
                    writer.losses(history)
        finally:
            bar.close()
        save(done=True)
        writer.samples("samples_final.png")
        writer.losses(history)
        return ckpt_path


def cpu_threads(threads: int | None) -> int:
    """The torch thread count for CPU training: `threads`, or CPU_THREADS; a positive integer."""
    n = CPU_THREADS if threads is None else threads
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    return int(n)


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op thread count at `n` for the block (unchanged when None), restored after."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# --------------------------------------------------------------------------------------------------
# Steps
# --------------------------------------------------------------------------------------------------
def _critic_step(
    gen: nn.Module, critic: nn.Module, opt: torch.optim.Optimizer, cfg: GanConfig, real: torch.Tensor,
    noise: torch.Generator,
) -> torch.Tensor:  # fmt: skip
    """One critic update; returns the detached [loss, D(real)-D(fake), gradient penalty]."""
    z = torch.randn((len(real), *gen.latent_shape), generator=noise, device=real.device)  # type: ignore[misc]
    with torch.no_grad():
        fake = gen(z)
    d_real, d_fake = critic(real), critic(fake)
    gap = d_real.mean() - d_fake.mean()
    if cfg.loss == "wasserstein":
        loss = -gap
    else:
        loss = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
    gp = torch.zeros((), device=real.device)
    if cfg.gp_weight > 0:
        shape = (len(real),) + (1,) * (real.dim() - 1)
        alpha = torch.rand(shape, generator=noise, device=real.device)
        mix = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        (grad,) = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
        gp = ((grad.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        loss = loss + cfg.gp_weight * gp
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if cfg.clip is not None:
        with torch.no_grad():
            for p in critic.parameters():
                p.clamp_(-cfg.clip, cfg.clip)
    return torch.stack([loss.detach(), gap.detach(), gp.detach()])


def _generator_step(
    gen: nn.Module, critic: nn.Module, opt: torch.optim.Optimizer, cfg: GanConfig, batch_size: int,
    noise: torch.Generator,
) -> torch.Tensor:  # fmt: skip
    """One generator update against the current critic; returns the detached generator loss."""
    device = next(gen.parameters()).device
    z = torch.randn((batch_size, *gen.latent_shape), generator=noise, device=device)  # type: ignore[misc]
    critic.requires_grad_(False)
    try:
        score = critic(gen(z))
        loss = -score.mean() if cfg.loss == "wasserstein" else F.softplus(-score).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    finally:
        critic.requires_grad_(True)
    return loss.detach()


def _optimizer(cfg: GanConfig, params: Any, lr: float) -> torch.optim.Optimizer:
    if cfg.optimizer == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr)
    return torch.optim.Adam(params, lr=lr, betas=cfg.betas)


# --------------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------------
def _check_inputs(
    x: Any, arch: str, arch_kwargs: Mapping[str, Any] | None, epochs: int, batch_size: int,
    checkpoint_every: int, sample_every: int,
) -> tuple[np.ndarray, dict[str, Any]]:  # fmt: skip
    """Validate everything cheap before any work; returns the data array and the full arch kwargs."""
    spec = get_architecture(arch)
    limits = (("epochs", epochs, 1), ("batch_size", batch_size, 1), ("checkpoint_every", checkpoint_every, 1),
              ("sample_every", sample_every, 0))  # fmt: skip
    for name, v, lo in limits:
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < lo:
            raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    if not isinstance(x, np.ndarray):
        raise ValueError(f"images_or_points must be a numpy array, got {type(x).__name__}")
    kw = dict(arch_kwargs or {})
    points = "out_dim" in spec.defaults
    if points:
        if x.ndim != 2 or not np.issubdtype(x.dtype, np.floating):
            raise ValueError(f"arch={arch!r} trains on float points N×D; got {x.dtype} array of shape {x.shape}")
        if not np.isfinite(x).all():
            raise ValueError("images_or_points contains NaN or inf; clean the points first")
        kw.setdefault("out_dim", int(x.shape[1]))
        if kw["out_dim"] != x.shape[1]:
            raise ValueError(f"arch_kwargs out_dim={kw['out_dim']} but the points have D={x.shape[1]}")
    else:
        if x.ndim != 4 or x.dtype != np.uint8:
            raise ValueError(
                f"arch={arch!r} trains on uint8 images N×C×H×W; got {x.dtype} array of shape {x.shape} "
                "(convert floats with ganeval.data.to_uint8, add a channel axis to N×H×W)"
            )
        kw.setdefault("channels", int(x.shape[1]))
        if kw["channels"] != x.shape[1]:
            raise ValueError(f"arch_kwargs channels={kw['channels']} but the images have C={x.shape[1]}")
    if len(x) < batch_size:
        raise ValueError(f"batch_size={batch_size} is larger than the data ({len(x)} rows); lower batch_size")
    return x, resolve_arch_kwargs(arch, kw)


def _prepare_data(x: np.ndarray, gen: nn.Module, dev: torch.device) -> torch.Tensor:
    """Real data as a tensor: images resized to the generator's resolution (still uint8), points float32.

    On CUDA the data lives on the device when it takes under a quarter of the free memory, else
    in pinned host memory (batches are then copied with non_blocking=True).
    """
    if gen.output_range is None:
        t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    else:
        t = _resize(torch.from_numpy(np.ascontiguousarray(x)), tuple(gen.output_shape[1:]))
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return t.to(dev) if t.numel() * t.element_size() < free // 4 else t.pin_memory()
    return t


def _resize(x: torch.Tensor, size: tuple[int, int], chunk: int = 2048) -> torch.Tensor:
    """Centre-crop uint8 images to a square when the target is square, then resize (bilinear, antialiased)."""
    h, w = x.shape[-2:]
    if (h, w) == size:
        return x
    if size[0] == size[1] and h != w:
        s = min(h, w)
        top, left = (h - s) // 2, (w - s) // 2
        x = x[..., top : top + s, left : left + s]
    out = torch.empty((len(x), x.shape[1], *size), dtype=torch.uint8)
    for i in range(0, len(x), chunk):
        y = F.interpolate(x[i : i + chunk].float(), size=size, mode="bilinear", antialias=True, align_corners=False)
        out[i : i + chunk] = y.round_().clamp_(0, 255).to(torch.uint8)
    return out


def _to_float(batch: torch.Tensor, gen: nn.Module, dev: torch.device) -> torch.Tensor:
    """A data batch on `dev` as float in the generator's output range (points pass through)."""
    batch = batch.to(dev, non_blocking=True)
    if gen.output_range is None:
        return batch
    lo, hi = gen.output_range
    return batch.float().mul_((hi - lo) / 255.0).add_(lo)


def _epoch_order(n: int, seed: int, epoch: int) -> torch.Tensor:
    """The data order of one epoch: a permutation depending only on (seed, epoch)."""
    s = int(np.random.SeedSequence([int(seed), int(epoch)]).generate_state(1)[0])
    return torch.randperm(n, generator=torch.Generator().manual_seed(s))


def _seed_everything(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)
    random.seed(seed)


# --------------------------------------------------------------------------------------------------
# Resume and outputs
# --------------------------------------------------------------------------------------------------
def _load_matching(path: Path, config_hash: str, run_config: dict[str, Any], epochs: int) -> dict[str, Any]:
    """Load the checkpoint in out_dir if it was made by this same config; refuse clearly otherwise."""
    ckpt = load_checkpoint(path, what=f"train(out_dir={str(path.parent)!r})")
    if ckpt["config_hash"] != config_hash:
        old = checkpoint_config(ckpt)
        diff = _diff(old, run_config)
        raise ValueError(
            f"{path} was written by a different training config (hash {ckpt['config_hash']} != {config_hash}; "
            f"differs in {'; '.join(diff) or 'format'}). It is not resumed: choose another out_dir, "
            "or delete the checkpoint to start over."
        )
    if int(ckpt["epoch"]) > epochs:
        raise ValueError(
            f"{path} has already trained {int(ckpt['epoch'])} epochs, more than epochs={epochs}; "
            "ask for at least that many epochs or use another out_dir"
        )
    return ckpt


def _diff(old: Any, new: Any, prefix: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for k in sorted(set(old) | set(new)):
            out += _diff(old.get(k), new.get(k), f"{prefix}{k}.")
        return out
    return [] if old == new else [f"{prefix.rstrip('.')}: {old!r} -> {new!r}"]


def _flush(history: np.ndarray, pending: list[tuple[int, int, int, torch.Tensor]]) -> np.ndarray:
    """Move pending per-generator-step losses (device tensors) into the host history (one sync)."""
    if not pending:
        return history
    losses = torch.stack([p[3] for p in pending]).double().cpu().numpy()
    counters = np.array([p[:3] for p in pending], dtype=np.float64)
    # columns: gen_step, critic_step, epoch, loss_critic, loss_gen, critic_gap, grad_penalty
    rows = np.column_stack([counters, losses[:, 0], losses[:, 3], losses[:, 1], losses[:, 2]])
    pending.clear()
    return np.concatenate([history, rows])


def _postfix(history: np.ndarray) -> dict[str, str]:
    last = history[-20:].mean(axis=0)
    return {"D": f"{last[3]:.3g}", "G": f"{last[4]:.3g}", "gap": f"{last[5]:.3g}"}


class _Outputs:
    """Writes sample grids (or point plots) from fixed latents, and the loss plot."""

    def __init__(self, out_dir: Path, gen: nn.Module, z: torch.Tensor, dev: torch.device,
                 real_points: np.ndarray | None, title: str) -> None:  # fmt: skip
        self.out_dir, self.gen, self.z, self.dev, self.title = out_dir, gen, z, dev, title
        self.real_points = real_points

    def samples(self, name: str) -> None:
        if self.real_points is not None:
            z = latent(1000, self.gen.latent_shape, 1)
            pts = generate(self.gen, z, output_range=None, device=self.dev)
            real = self.real_points[:: max(1, len(self.real_points) // 1000)]
            plots.save_points_plot(self.out_dir / name, pts, real, self.title)
            return
        imgs = generate(self.gen, self.z, output_range=self.gen.output_range, device=self.dev)
        plots.save_image_grid(self.out_dir / name, imgs, nrow=8, scale=2 if imgs.shape[-1] <= 32 else 1)

    def losses(self, history: np.ndarray) -> None:
        plots.plot_losses(self.out_dir / "losses.png", history, self.title)
