"""The paper's "Tracking the Evolution of Image Manifolds": small convolutional networks trained from several
initialisations on the scikit-learn digits (8×8, 1 797 images; a stand-in for VGG-16 on CIFAR), IMD of each layer's
representation of the held-out images relative to the last layer (the penultimate, fully connected one) with intervals
across the networks; and during training, IMD of the last layer relative to the last layers of two trained reference
networks of different widths, beside the validation error.

runs.csv holds every number (part "layers": network, layer, IMD; part "training": network, epoch, reference, IMD and
validation error); `regenerate` makes summary.csv, summary.json and verdict.md again from it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ganeval.studies.manifold_pairs import shown_command
from ganeval.studies.stored import write_claims_record

INPUTS: tuple[str, ...] = ()  # no data node: the digits ship with scikit-learn
OUTPUTS = ("runs.csv", "summary.csv", "summary.json", "verdict.md", "nn_internals.png", "report.html")
LAYERS = ("input", "conv1", "conv2", "conv3", "conv4")  # compared with LAST
LAST = "fc"
LOW_CV = 0.2  # practical threshold: a coefficient of variation across networks below this is "low variance"
CONVERGED = 0.1  # a curve has converged from the first epoch after which it stays within 10 % of its range of its end
HELD_OUT = 0.3  # the held-out share of the digits


def make_cnn(width: int) -> Any:
    """The digits CNN: conv1 (w) → conv2 (2w, pool) → conv3 (2w) → conv4 (4w, pool) → fc (4w, the last layer) → 10."""
    import torch.nn as nn

    w = int(width)
    return nn.ModuleDict({
        "conv1": nn.Sequential(nn.Conv2d(1, w, 3, padding=1), nn.ReLU()),
        "conv2": nn.Sequential(nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)),
        "conv3": nn.Sequential(nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.ReLU()),
        "conv4": nn.Sequential(nn.Conv2d(2 * w, 4 * w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)),
        "fc": nn.Sequential(nn.Flatten(), nn.Linear(16 * w, 4 * w), nn.ReLU()),
        "head": nn.Linear(4 * w, 10)})


def representations(net: Any, x: Any) -> dict[str, np.ndarray]:
    """Each layer's output for images x (N×1×8×8), flattened: input, conv1..conv4, fc; and the logits (head)."""
    import torch

    out = {"input": x.reshape(len(x), -1).numpy()}
    with torch.no_grad():
        h = x
        for name, layer in net.items():
            h = layer(h)
            out[name] = h.reshape(len(h), -1).numpy().copy()
    return out


def split(seed: int) -> tuple[Any, Any, Any, Any]:
    """(train images, train labels, held-out images, held-out labels) of the digits in [0, 1], the held-out
    HELD_OUT share drawn with `default_rng([seed, 7])`."""
    import torch
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.from_numpy((d.images / 16.0).astype(np.float32))[:, None]
    y = torch.from_numpy(d.target.astype(np.int64))
    perm = np.random.default_rng([seed, 7]).permutation(len(x))
    n_test = int(round(HELD_OUT * len(x)))
    test, train = perm[:n_test], perm[n_test:]
    return x[train], y[train], x[test], y[test]


def check(layers: Sequence[str], references: Sequence[Mapping[str, Any]], networks: int, epochs: int) -> list[str]:
    """The layer list (non-empty, known names), ≥ 2 networks, ≥ 1 epoch and the references' widths, before any work."""
    ls = [str(n) for n in layers]
    if not ls:
        raise ValueError(f"layers is empty: name some of {', '.join(LAYERS)} (each is compared with the last layer)")
    bad = [n for n in ls if n not in LAYERS]
    if bad:
        raise ValueError(f"layers {bad} unknown: choose among {', '.join(LAYERS)}")
    if int(networks) < 2:
        raise ValueError(f"networks must be at least 2 (intervals across networks), got {networks}")
    if int(epochs) < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    for r in references:
        if int(r["width"]) < 1:
            raise ValueError(f"reference width must be a positive whole number, got {r['width']}")
    return ls


def load_reference(width: int, checkpoint: str) -> Any:
    """A reference network of `width` from a state-dict checkpoint; another architecture is refused in one line."""
    import torch

    path = Path(checkpoint)
    if not path.is_file():
        raise ValueError(f"reference checkpoint {checkpoint} does not exist or is not a file")
    net = make_cnn(width)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        net.load_state_dict(state)
    except Exception as e:  # noqa: BLE001 - any unreadable or mismatched state is the same user error
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"reference checkpoint {checkpoint} is not a width-{width} nn_internals CNN (another "
                         f"architecture): {first[:200]}") from None
    return net


def train(width: int, seed: int, x: Any, y: Any, xv: Any, yv: Any, epochs: int, lr: float, batch: int,
          each_epoch: Any = None) -> Any:
    """Train a width-`width` CNN from seed `seed` (Adam, cross-entropy); `each_epoch(epoch, net, val_error)` is
    called before training (epoch 0) and after each epoch."""
    import torch

    torch.manual_seed(seed)
    net = make_cnn(width)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)

    def val_error() -> float:
        with torch.no_grad():
            return float((forward(net, xv).argmax(1) != yv).float().mean())

    if each_epoch:
        each_epoch(0, net, val_error())
    for e in range(1, epochs + 1):
        net.train()
        for idx in torch.randperm(len(x), generator=gen).split(batch):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(forward(net, x[idx]), y[idx]).backward()
            opt.step()
        net.eval()
        if each_epoch:
            each_epoch(e, net, val_error())
    return net


def forward(net: Any, x: Any) -> Any:
    for layer in net.values():
        x = layer(x)
    return x


def measure(layers: Sequence[str], networks: int, epochs: int, width: int, references: Sequence[Mapping[str, Any]],
            seed: int, imd_options: Mapping[str, Any], lr: float = 1e-3, batch: int = 64) -> pd.DataFrame:
    """runs.csv: the reference networks (trained, or loaded from their checkpoints), then `networks` networks of
    `width` from seeds seed+1.. tracked each epoch against them, and their layers against their last at the end."""
    from ganeval.metrics import imd

    x, y, xv, yv = split(seed)
    refs = {}
    for j, r in enumerate(references):
        name = f"width {int(r['width'])}"
        net = load_reference(int(r["width"]), r["checkpoint"]) if r.get("checkpoint") else \
            train(int(r["width"]), 10_000 + seed + j, x, y, xv, yv, epochs, lr, batch)
        net.eval()
        refs[name] = representations(net, xv)[LAST]
    rows: list[dict[str, Any]] = []
    for n in range(networks):
        def track(e: int, net: Any, err: float, n: int = n) -> None:
            last = representations(net, xv)[LAST]
            rows.append({"part": "training", "network": n, "epoch": e, "layer": LAST, "reference": "",
                         "metric": "val_error", "value": err})
            for j, (name, ref) in enumerate(refs.items()):
                v = imd(last, ref, seed=np.random.default_rng([seed, n, e, j]), **imd_options)
                rows.append({"part": "training", "network": n, "epoch": e, "layer": LAST, "reference": name,
                             "metric": "imd", "value": v})

        net = train(width, seed + 1 + n, x, y, xv, yv, epochs, lr, batch, track)
        reps = representations(net, xv)
        for i, layer in enumerate(layers):
            v = imd(reps[layer], reps[LAST], seed=np.random.default_rng([seed, n, 10_000 + i]), **imd_options)
            rows.append({"part": "layers", "network": n, "epoch": epochs, "layer": layer, "reference": LAST,
                         "metric": "imd", "value": v})
    return pd.DataFrame(rows)


def layer_table(rows: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per layer (in order): IMD relative to the last layer, mean and interval over networks, its CV's interval."""
    from scipy import stats

    from ganeval.results import t_interval

    g = rows[rows.part == "layers"]
    out = []
    for layer in dict.fromkeys(g.layer):
        v = g[g.layer == layer].sort_values("network")["value"].to_numpy(float)
        iv = t_interval(v, confidence)
        n, a = len(v), 1 - confidence
        s = float(np.std(v, ddof=1))
        lo, hi = s * np.sqrt((n - 1) / stats.chi2.ppf(1 - a / 2, n - 1)), s * np.sqrt((n - 1) / stats.chi2.ppf(a / 2, n - 1))
        out.append({"layer": layer, **iv, "cv": s / iv["mean"], "cv_low": lo / iv["mean"], "cv_high": hi / iv["mean"]})
    return pd.DataFrame(out)


def converged_at(curve: np.ndarray) -> int:
    """The first epoch after which the curve stays within CONVERGED of its range of its end (mean of its last 3)."""
    end = float(np.mean(curve[-3:]))
    tol = CONVERGED * float(np.ptp(curve)) if np.ptp(curve) > 0 else 0.0
    outside = np.flatnonzero(np.abs(curve - end) > tol)
    return min(int(outside[-1] + 1), len(curve) - 1) if outside.size else 0


def training_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per network and reference: the epoch IMD converged, the epoch the validation error converged, their
    difference, and Spearman ρ of the two curves over epochs."""
    from scipy.stats import spearmanr

    g = rows[rows.part == "training"]
    out = []
    for n, h in g.groupby("network"):
        err = h[h.metric == "val_error"].sort_values("epoch")["value"].to_numpy(float)
        e_val = converged_at(err)
        for ref, r in h[h.metric == "imd"].groupby("reference", sort=False):
            c = r.sort_values("epoch")["value"].to_numpy(float)
            e_imd = converged_at(c)
            out.append({"network": n, "reference": ref, "epoch_imd": e_imd, "epoch_val": e_val,
                        "difference": e_imd - e_val, "rho": float(spearmanr(c, err).statistic)})
    return pd.DataFrame(out)


def decide(rows: pd.DataFrame, confidence: float) -> list[Any]:
    """The section's three claims (on the digits stand-in), the tests among them Holm-corrected together."""
    from scipy import stats

    from ganeval.results import t_interval
    from ganeval.results.power import paired_t_mde
    from ganeval.results.verdicts import (CONTRADICTED, HOLDS, NOT_TESTABLE, Claim,
                                          holm, vs_paper)

    way = vs_paper
    g = rows[rows.part == "layers"]
    layers = list(dict.fromkeys(g.layer))
    per = {ly: g[g.layer == ly].sort_values("network")["value"].to_numpy(float) for ly in layers}
    claims = []
    steps = [(a, b, per[b] - per[a]) for a, b in zip(layers, layers[1:])]
    if steps:
        ps = [float(stats.ttest_1samp(d, 0.0, alternative="greater").pvalue) if np.std(d) > 0 else
              (0.0 if d.mean() > 0 else 1.0) for _, _, d in steps]
        rise = min(1.0, min(ps) * len(steps))  # Bonferroni over the steps: "some step rises"
        fall = max(float(stats.ttest_1samp(d, 0.0, alternative="less").pvalue) if np.std(d) > 0 else
                   (0.0 if d.mean() < 0 else 1.0) for _, _, d in steps)  # intersection-union: "every step falls"
        alpha = 1 - confidence
        v = HOLDS if rise <= alpha else CONTRADICTED if fall <= alpha else NOT_TESTABLE
        p = fall if v == CONTRADICTED else rise
        a, b, d = steps[int(np.argmin(ps))]
        iv = t_interval(d, confidence)
        claims.append(Claim(
            "layers do not separate monotonically (digits CNN stand-in)",
            "consequent layers do not monotonically contribute to the separation of image representations", v,
            f"per step between consecutive layers, IMD(next, last) − IMD(layer, last) over {len(d)} networks: one-sided "
            f"paired t-test that some step rises (Bonferroni over {len(steps)} steps); contradicted when every step "
            "falls (one-sided paired t-tests, the largest p)", "any rise",
            way(v), f"largest rise {a}→{b}: {iv['mean']:.4g} [{iv['ci_low']:.4g}, {iv['ci_high']:.4g}]; IMD per layer: "
            + ", ".join(f"{ly} {per[ly].mean():.4g}" for ly in layers), p_value=p,
            detectable=f"a rise of {paired_t_mde(float(np.std(d, ddof=1)), len(d), confidence):.3g}"))
    lt = layer_table(rows, confidence)
    worst = lt.iloc[int(np.argmax(lt.cv_high.to_numpy()))]
    v = HOLDS if (lt.cv_high < LOW_CV).all() else CONTRADICTED if (lt.cv_low > LOW_CV).any() else NOT_TESTABLE
    claims.append(Claim(
        "low variance across initialisations (digits CNN stand-in)",
        "A low variance across the networks trained from different random initializations indicates stability", v,
        f"per layer, the coefficient of variation of IMD across {int(worst['n_runs'])} networks with its χ² interval; holds "
        f"when every layer's interval lies below {LOW_CV:g}, contradicted when one lies above", f"CV below {LOW_CV:g}",
        way(v), f"largest CV: {worst.layer} {worst.cv:.3f} [{worst.cv_low:.3f}, {worst.cv_high:.3f}]",
        detectable="" if v != NOT_TESTABLE else f"an interval narrower than its distance to {LOW_CV:g} "
        f"(measured [{worst.cv_low:.3f}, {worst.cv_high:.3f}])"))
    tt = training_table(rows)
    epochs = int(rows[rows.part == "training"].epoch.max())
    tol = max(1, int(round(0.1 * epochs)))
    for ref, h in tt.groupby("reference", sort=False):
        iv = t_interval(h["difference"].to_numpy(float), confidence)
        inside = -tol <= iv["ci_low"] and iv["ci_high"] <= tol
        v = HOLDS if inside else CONTRADICTED if (iv["ci_low"] > tol or iv["ci_high"] < -tol) else NOT_TESTABLE
        claims.append(Claim(
            f"IMD to the {ref} reference's last layer identifies the convergence point (digits CNN stand-in)",
            "even in such unaligned spaces, IMD correctly identifies the convergence point of the networks", v,
            f"per network, the epoch IMD converged minus the epoch the validation error converged (each: the first "
            f"epoch after which the curve stays within {100 * CONVERGED:g} % of its range of its end); its Student-t "
            f"interval over {len(h)} networks against ±{tol} epochs", f"within ±{tol} epochs (10 % of {epochs})",
            way(v), f"difference {iv['mean']:+.2f} [{iv['ci_low']:+.2f}, {iv['ci_high']:+.2f}] epochs; IMD converged at "
            f"{h.epoch_imd.mean():.1f}, validation error at {h.epoch_val.mean():.1f}; Spearman ρ(IMD, error) over "
            f"epochs {h.rho.mean():.3f}",
            detectable="" if v != NOT_TESTABLE else f"an interval half-width below {tol} epochs "
            f"(measured {iv['half_width']:.2g})"))
    return holm(claims, confidence)


def verdict_text(claims: list[Any], rows: pd.DataFrame, config: Mapping[str, Any], confidence: float) -> str:
    """verdict.md: the claims' sentences, the protocol, the claims table, the per-layer and per-reference tables."""
    from ganeval.results.verdict import claim_sentences, percent, verdict_markdown
    from ganeval.results.verdicts import claims_table

    lt, tt = layer_table(rows, confidence), training_table(rows)
    refs = ", ".join(f"width {r['width']}" + (f" (checkpoint {Path(r['checkpoint']).name})" if r.get("checkpoint")
                                              else "") for r in config["references"])
    body = [f"Protocol: {config['networks']} CNNs of width {config['width']} (conv {config['width']}, "
            f"{2 * config['width']}, {2 * config['width']}, {4 * config['width']} channels, then a fully connected "
            f"last layer of {4 * config['width']} units) trained from seeds {config['seed'] + 1}.. for "
            f"{config['epochs']} epochs (Adam, lr {config['lr']}, batch {config['batch']}) on "
            f"{100 - 100 * HELD_OUT:g} % of the scikit-learn digits, the rest held out; IMD (k = {config['imd']['k']}, "
            f"m = {config['imd']['m']}, nv = {config['imd']['nv']}) between representations of the held-out images; "
            f"reference networks: {refs}. A stand-in for the paper's 10 VGG-16 on CIFAR-10/100 against VGG-16 "
            f"(d = 512) and ResNet-20 (d = 64): the claims are decided on the stand-in, {percent(confidence)} "
            "intervals across networks.", "", claims_table(claims, confidence).rstrip("\n"), "",
            "| layer | IMD relative to the last layer | interval | CV across networks | CV interval |",
            "|---|---|---|---|---|"]
    body += [f"| {r.layer} | {r['mean']:.4g} | [{r.ci_low:.4g}, {r.ci_high:.4g}] | {r.cv:.3f} | "
             f"[{r.cv_low:.3f}, {r.cv_high:.3f}] |" for _, r in lt.iterrows()]
    body += ["", "| reference | IMD converged (epoch, mean) | validation error converged | ρ(IMD, error) |",
             "|---|---|---|---|"]
    body += [f"| {ref} | {h.epoch_imd.mean():.1f} | {h.epoch_val.mean():.1f} | {h.rho.mean():.3f} |"
             for ref, h in tt.groupby("reference", sort=False)]
    return verdict_markdown(claim_sentences(claims, confidence, rule=True), "Evolution of image manifolds: verdict",
                            "\n".join(body))


def write(out: str | Path, rows: pd.DataFrame, config: Mapping[str, Any]) -> list[Any]:
    """The derived files of stored runs: summary.csv (per layer), summary.json (config and claims), verdict.md."""
    from ganeval.common import atomic_write_text
    from ganeval.results import write_csv

    out, conf = Path(out), float(config["confidence"])
    claims = decide(rows, conf)
    write_csv(layer_table(rows, conf), out / "summary.csv")
    write_claims_record(out, config, claims)
    atomic_write_text(out / "verdict.md", verdict_text(claims, rows, config, conf))
    return claims


def plot(rows: pd.DataFrame, path: str | Path, confidence: float) -> Path:
    """The paper's figure: (left) IMD of each layer relative to the last, band across networks; (right) IMD of the
    last layer to each reference during training, beside the validation error."""
    from ganeval.results import t_interval
    from ganeval.results.plots import _plt, _save

    plt = _plt()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.8))
    lt = layer_table(rows, confidence)
    xs = np.arange(len(lt))
    ax.plot(xs, lt["mean"], marker="o")
    ax.fill_between(xs, lt.ci_low, lt.ci_high, alpha=0.3)
    ax.set_xticks(xs, list(lt.layer))
    ax.set_ylabel("IMD relative to the last layer")
    g = rows[rows.part == "training"]
    for i, (ref, h) in enumerate(g[g.metric == "imd"].groupby("reference", sort=False)):
        s = pd.DataFrame([{"epoch": e, **t_interval(x["value"], confidence)} for e, x in h.groupby("epoch")])
        bx.plot(s.epoch, s["mean"], color=f"C{i}", label=f"IMD to {ref}")
        bx.fill_between(s.epoch, s.ci_low, s.ci_high, color=f"C{i}", alpha=0.25)
    bx.set_xlabel("epoch")
    bx.set_ylabel("IMD of the last layer")
    cx = bx.twinx()
    err = g[g.metric == "val_error"].groupby("epoch")["value"].mean()
    cx.plot(err.index, err.values, color="k", ls="--", label="validation error")
    cx.set_ylabel("validation error")
    bx.legend(loc="upper center", fontsize=8)
    cx.legend(loc="center right", fontsize=8)
    return _save(fig, path)


def run(plan: Any) -> pd.DataFrame:
    """Check the options (layers, reference checkpoints), train and measure, write runs.csv, the derived files and
    the figure."""
    from ganeval.results import write_csv

    cfg, s = plan.params, plan.settings
    layers = check(list(cfg.layers), list(cfg.references), int(cfg.networks), int(cfg.epochs))
    refs = [{"width": int(r.width), "checkpoint": r.get("checkpoint")} for r in cfg.references]
    for r in refs:  # another architecture is refused before any training
        if r["checkpoint"]:
            load_reference(r["width"], r["checkpoint"])
    if "imd" not in s.metrics:
        raise ValueError("nn_internals needs metrics.imd (its k, m, nv options)")
    imd_options = dict(s.metrics["imd"])
    with plan.stage("train and measure"):
        rows = measure(layers, int(cfg.networks), int(cfg.epochs), int(cfg.width), refs, s.seed, imd_options,
                       float(cfg.lr), int(cfg.batch))
    write_csv(rows, plan.results_dir / "runs.csv")
    config = {"layers": layers, "networks": int(cfg.networks), "epochs": int(cfg.epochs), "width": int(cfg.width),
              "references": refs, "lr": float(cfg.lr), "batch": int(cfg.batch), "seed": s.seed,
              "confidence": s.confidence, "imd": {k: imd_options[k] for k in ("k", "m", "nv", "normalization")},
              "command": shown_command(plan)}
    write(plan.results_dir, rows, config)
    if plan.options.plots:
        plot(rows, plan.results_dir / "nn_internals.png", s.confidence)
    return rows


def regenerate(src: Any, out: Any) -> None:
    """Make the stored result's derived files again from its runs.csv and the config in its summary.json."""
    config = json.loads((Path(src) / "summary.json").read_text())["config"]
    write(out, pd.read_csv(Path(src) / "runs.csv", keep_default_na=False), config)
