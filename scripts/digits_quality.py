"""Train the quickstart digits GANs (WGAN and WGAN-GP) and measure how recognisable their samples are.

A scikit-learn RBF SVM (with its Platt-scaled probabilities) trained on 80% of the real embedded
digits scores samples: mean top-class probability and how many of the 10 classes appear
(as the top class of >= 2% of the samples).
The held-out real digits, uniform noise and the untrained generator are scored the same way, as
references. Sample grids go to results/reference/quickstart/ with a quality.json of the numbers.

    python scripts/digits_quality.py [--device cpu] [--threads 2] [--samples 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch

from ganeval.app.main import config_dir
from ganeval.common import atomic_write_text
from ganeval.data import digits
from ganeval.gan import CheckpointGenerator, build_generator, gan_config
from ganeval.gan.plots import save_image_grid
from ganeval.gan.sampling import generate, latent
from ganeval.gan.training import train

ROOT = Path(__file__).resolve().parents[1]


def classifier(real: np.ndarray, seed: int = 0):  # -> (fitted model, held-out images, their labels)
    """An RBF SVM with probabilities on 80% of the real digits (pixels in [0, 1]); returns it and the rest."""
    import warnings

    from sklearn.datasets import load_digits
    from sklearn.svm import SVC

    labels = load_digits().target
    idx = np.random.default_rng(seed).permutation(len(real))
    cut = int(0.8 * len(real))
    # SVC's own probabilities (pairwise Platt scaling) stay low on images unlike any digit (uniform
    # noise: ~0.27), which the suggested CalibratedClassifierCV(SVC()) replacement does not (~0.87).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        clf = SVC(probability=True, random_state=seed).fit(_flat(real[idx[:cut]]), labels[idx[:cut]])
    return clf, real[idx[cut:]], labels[idx[cut:]]


def quickstart_setups() -> dict[str, dict]:
    """The quickstart experiment's train specs by trainer preset, read from its config (their one source)."""
    from omegaconf import OmegaConf

    exp = OmegaConf.load(config_dir() / "experiment" / "quickstart.yaml")
    specs = [OmegaConf.to_container(g.train) for g in exp.generators.values()]
    return {str(s["gan"]): s for s in specs}  # type: ignore[index]


def _shown(path: Path) -> str:
    """`path` relative to the repository when inside it (what quality.json records)."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _flat(images: np.ndarray) -> np.ndarray:
    return images.reshape(len(images), -1).astype(np.float32) / 255.0


def score(clf, images: np.ndarray, min_share: float = 0.02) -> dict[str, float]:
    """Mean top-class probability and the number of classes that are the top class of >= min_share of images."""
    proba = clf.predict_proba(_flat(images))
    top = proba.argmax(1)
    counts = np.bincount(top, minlength=10)
    return {
        "mean_confidence": round(float(proba.max(1).mean()), 4),
        "classes_present": int((counts >= min_share * len(images)).sum()),
        "class_counts": counts.tolist(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (1 helps on a busy machine)")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    setups = quickstart_setups()
    ap.add_argument("--gans", nargs="+", default=list(setups), choices=list(setups))
    ap.add_argument("--models", type=Path, default=ROOT / "models" / "digits")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "reference" / "quickstart")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    real = digits(32)
    clf, held_out, _ = classifier(real, args.seed)
    rng = np.random.default_rng(args.seed)
    noise = rng.integers(0, 256, size=(args.samples, 1, 32, 32), dtype=np.uint8)
    results: dict[str, object] = {
        "command": " ".join(["python", "scripts/" + Path(__file__).name, *(sys.argv[1:] if argv is None else argv)]),
        "device": args.device,
        "torch_threads": torch.get_num_threads(),
        "samples": args.samples,
        "reference": {"real_held_out": score(clf, held_out), "uniform_noise": score(clf, noise)},
        "models": {},
    }
    print(f"real held-out: {results['reference']['real_held_out']}")  # type: ignore[index]
    print(f"uniform noise: {results['reference']['uniform_noise']}")  # type: ignore[index]
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.gans:
        setup = setups[name]
        out_dir = args.models / name
        if out_dir.exists():
            shutil.rmtree(out_dir)  # time a fresh training every time
        torch.manual_seed(args.seed)
        untrained = generate(build_generator(setup["arch"], **setup["arch_kwargs"]).to(args.device),
                             latent(args.samples, (setup["arch_kwargs"].get("latent_dim", 32),), args.seed),
                             output_range=(-1, 1), device=args.device)  # fmt: skip
        t0 = time.perf_counter()
        ckpt = train(real, arch=setup["arch"], gan=name, out_dir=out_dir, epochs=setup["epochs"],
                     batch_size=setup["batch_size"], seed=args.seed, device=args.device,
                     arch_kwargs=setup["arch_kwargs"], sample_every=0, progress=True)  # fmt: skip
        seconds = time.perf_counter() - t0
        fake = CheckpointGenerator(ckpt).sample(args.samples, seed=args.seed + 1, device=args.device)
        save_image_grid(args.out / f"digits_{name}.png", fake[:64], nrow=8, scale=2)
        entry = {
            "train_seconds": round(seconds, 1),
            "epochs": setup["epochs"],
            "batch_size": setup["batch_size"],
            "arch": setup["arch"],
            "arch_kwargs": setup["arch_kwargs"],
            "gan": gan_config(name).to_dict(),
            "samples": score(clf, fake),
            "untrained_generator": score(clf, untrained),
            "grid": _shown(args.out / f"digits_{name}.png"),
        }
        results["models"][name] = entry  # type: ignore[index]
        print(f"{name}: {seconds:.1f} s, samples {entry['samples']}, untrained {entry['untrained_generator']}")
    atomic_write_text(args.out / "quality.json", json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
