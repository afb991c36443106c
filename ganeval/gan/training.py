"""Training WGAN, WGAN-GP and the vanilla GAN: seeded, resumable, with loss logs, plots and sample grids.

An epoch is one pass of the critic over the real data (one real batch per critic step, the last
incomplete batch dropped); every `n_critic` critic steps the generator takes one step (`ganeval.gan.steps`). The
data order of epoch e is a permutation drawn from (seed, e) alone (`ganeval.gan.train_data`), so a run resumed
from a checkpoint sees exactly the batches the uninterrupted run would have seen.
"""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import torch
from torch import nn

from ganeval.common import atomic_torch_save, atomic_write_text, resolve_device
from ganeval.gan import plots
from ganeval.gan.architectures import _Generator, build
from ganeval.gan.checkpoint import FORMAT, VERSION, capture_rng, checkpoint_config, load_checkpoint, restore_rng
from ganeval.gan.config import GanConfig, gan_config
from ganeval.gan.sampling import generate, latent
from ganeval.gan.steps import critic_step, generator_step, make_optimizer
from ganeval.gan.train_data import check_inputs, epoch_order, prepare_data, seed_everything, to_float
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
    x, arch_kw = check_inputs(images_or_points, arch, arch_kwargs, epochs, batch_size, checkpoint_every, sample_every)
    dev = resolve_device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={str(dev)!r} but CUDA is not available here; use device='cpu'")
    n_threads = cpu_threads(threads) if dev.type == "cpu" else None
    run_config = _run_config(arch, arch_kw, cfg, batch_size, seed, n_threads, x)
    job = _Job(arch, arch_kw, cfg, run_config, stable_hash(run_config), epochs, batch_size, seed, checkpoint_every,
               sample_every, dev, Path(out_dir), callback)
    ckpt_path = job.out_dir / CHECKPOINT_NAME
    resume = _load_matching(ckpt_path, job.config_hash, run_config, epochs) if ckpt_path.exists() else None
    if resume is not None and resume.get("done") and int(resume["epoch"]) == epochs:
        log.info("%s already holds the finished training; nothing to do", ckpt_path)
        return ckpt_path  # untouched, so its sha256 (the generator's identity) stays the same

    with torch_threads(n_threads):  # one fixed count: the same weights whatever else the machine runs
        run = _start(job, resume)
        config_text = json.dumps({"config_hash": job.config_hash, **run_config}, indent=2) + "\n"
        atomic_write_text(job.out_dir / "config.json", config_text)
        data = prepare_data(x, run.gen, dev)
        fixed_z = latent(GRID_SAMPLES, run.gen.latent_shape, seed + 1)
        writer = _Outputs(job.out_dir, run.gen, fixed_z, dev, x if run.gen.output_range is None else None,
                          f"{arch} {cfg.name}")
        _epochs(job, run, data, writer, progress)
        _save(job, run, done=True)
        writer.samples("samples_final.png")
        writer.losses(run.history)
        return ckpt_path


def _run_config(arch: str, arch_kw: dict[str, Any], cfg: GanConfig, batch_size: int, seed: int,
                n_threads: int | None, x: np.ndarray) -> dict[str, Any]:
    """What makes a training run itself: its hash names the checkpoint a later call may resume."""
    return {
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


@dataclass(frozen=True)
class _Job:
    """What one `train` call asks for, fixed while it runs (the arguments as given, checked by `check_inputs`)."""

    arch: str
    arch_kw: dict[str, Any]
    cfg: GanConfig
    run_config: dict[str, Any]
    config_hash: str
    epochs: int
    batch_size: int
    seed: int
    checkpoint_every: int
    sample_every: int
    dev: torch.device
    out_dir: Path
    callback: Callable[[dict[str, int]], None] | None


@dataclass
class _Run:
    """What a training run changes as it goes: models, optimisers, noise, counters and losses (the checkpoint)."""

    gen: _Generator
    critic: nn.Module
    opt_g: torch.optim.Optimizer
    opt_d: torch.optim.Optimizer
    noise: torch.Generator
    state: dict[str, int]
    history: np.ndarray
    acc: torch.Tensor  # critic loss, gap, penalty summed since the last generator step
    pending: list[tuple[int, int, int, torch.Tensor]] = field(default_factory=list)


def _start(job: _Job, resume: dict[str, Any] | None) -> _Run:
    """Seeded models and optimisers, fresh or restored from the matching checkpoint `resume`."""
    seed_everything(job.seed)
    gen, critic = build(job.arch, **job.arch_kw)
    gen.to(job.dev)
    critic.to(job.dev)
    cfg = job.cfg
    opt_g, opt_d = make_optimizer(cfg, gen.parameters(), cfg.lr_g), make_optimizer(cfg, critic.parameters(), cfg.lr_d)
    noise = torch.Generator(device=job.dev).manual_seed(int(job.seed))
    run = _Run(gen, critic, opt_g, opt_d, noise, {"epoch": 0, "batch": 0, "critic_step": 0, "gen_step": 0},
               np.zeros((0, len(plots.LOSS_COLUMNS))), torch.zeros(3, device=job.dev))
    if resume is not None:
        gen.load_state_dict(resume["generator"])
        critic.load_state_dict(resume["critic"])
        opt_g.load_state_dict(resume["opt_g"])
        opt_d.load_state_dict(resume["opt_d"])
        run.state = {k: int(resume[k]) for k in run.state}
        run.history = resume["history"].numpy()
        run.acc = resume["acc"].to(job.dev)
        restore_rng(resume["rng"], noise)
        log.info("resuming %s at epoch %d, critic step %d", job.out_dir / CHECKPOINT_NAME, run.state["epoch"],
                 run.state["critic_step"])
    return run


def _save(job: _Job, run: _Run, done: bool) -> None:
    """Write the checkpoint (atomically) and losses.csv, with the pending losses flushed into the history first."""
    run.history = _flush(run.history, run.pending)
    gen = run.gen
    ckpt = {
        "format": FORMAT,
        "version": VERSION,
        "config_hash": job.config_hash,
        "config_json": json.dumps(job.run_config, sort_keys=True),
        "arch": job.arch,
        "arch_kwargs": dict(job.arch_kw),
        "output_range": list(gen.output_range) if gen.output_range is not None else None,
        "latent_shape": list(gen.latent_shape),
        "output_shape": list(gen.output_shape),
        "generator": gen.state_dict(),
        "critic": run.critic.state_dict(),
        "opt_g": run.opt_g.state_dict(),
        "opt_d": run.opt_d.state_dict(),
        **run.state,
        "epochs": int(job.epochs),
        "done": done,
        "acc": run.acc.detach().cpu(),
        "history": torch.from_numpy(np.ascontiguousarray(run.history)),
        "rng": capture_rng(run.noise),
        "device": str(job.dev),
    }
    atomic_torch_save(ckpt, job.out_dir / CHECKPOINT_NAME)
    plots.write_loss_csv(job.out_dir / "losses.csv", run.history)


def _epochs(job: _Job, run: _Run, data: torch.Tensor, writer: _Outputs, progress: bool) -> None:
    """Train from the run's counters to `job.epochs`, with sample grids every `sample_every` epochs."""
    from ganeval.common import progress_bar

    n_batches = len(data) // job.batch_size
    bar = progress_bar(total=job.epochs * n_batches, initial=run.state["critic_step"], disable=not progress, unit="it",
                       desc=f"{job.arch}/{job.cfg.name} seed {job.seed}")
    run.gen.train()
    run.critic.train()
    try:
        while run.state["epoch"] < job.epochs:
            _epoch(job, run, data, n_batches, bar)
            epoch = run.state["epoch"]
            if job.sample_every and epoch % job.sample_every == 0 and epoch < job.epochs:
                run.history = _flush(run.history, run.pending)
                writer.samples(f"samples_epoch{epoch:04d}.png")
                writer.losses(run.history)
    finally:
        bar.close()


def _epoch(job: _Job, run: _Run, data: torch.Tensor, n_batches: int, bar: Any) -> None:
    """The rest of the current epoch, batch by batch in its seeded order; checkpoints every `checkpoint_every`
    critic steps (not at the very end: `train` saves the finished run)."""
    state = run.state
    order = epoch_order(len(data), job.seed, state["epoch"]).to(data.device)
    while state["batch"] < n_batches:
        b = state["batch"]
        _step(job, run, data[order[b * job.batch_size : (b + 1) * job.batch_size]], bar)
        state["batch"] += 1
        bar.update(1)
        if state["batch"] == n_batches:
            state["epoch"] += 1
            state["batch"] = 0
        done = state["epoch"] == job.epochs
        if state["critic_step"] % job.checkpoint_every == 0 and not done:
            _save(job, run, done=False)
        if job.callback is not None:
            job.callback(dict(state))
        if state["batch"] == 0:
            break


def _step(job: _Job, run: _Run, batch: torch.Tensor, bar: Any) -> None:
    """One critic step on `batch`, and a generator step after every `n_critic` of them (its losses logged)."""
    cfg, state = job.cfg, run.state
    real = to_float(batch, run.gen, job.dev)
    run.acc += critic_step(run.gen, run.critic, run.opt_d, cfg, real, run.noise)
    state["critic_step"] += 1
    if state["critic_step"] % cfg.n_critic == 0:
        loss_g = generator_step(run.gen, run.critic, run.opt_g, cfg, job.batch_size, run.noise)
        state["gen_step"] += 1
        run.pending.append((state["gen_step"], state["critic_step"], state["epoch"],
                            torch.cat([run.acc / cfg.n_critic, loss_g.view(1)])))  # fmt: skip
        run.acc = torch.zeros_like(run.acc)
        if len(run.pending) >= 20:
            run.history = _flush(run.history, run.pending)
            bar.set_postfix(_postfix(run.history), refresh=False)


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

    def __init__(self, out_dir: Path, gen: _Generator, z: torch.Tensor, dev: torch.device,
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
