"""The paper's "Tracking the Evolution of Image Manifolds": small convolutional networks trained from several
initialisations on the scikit-learn digits (8×8, 1 797 images; a stand-in for VGG-16 on CIFAR), IMD of each layer's
representation of the held-out images relative to the last layer (the penultimate, fully connected one) with intervals
across the networks; and during training, IMD of the last layer relative to the last layers of two trained reference
networks of different widths, beside the validation error.

IMD is computed from exact heat traces by default (`trace_method: exact`, a dense eigendecomposition of 539 rows):
its probe noise is removed, so the variation across networks is the networks' own. runs.csv holds every number (part
"layers": network, layer, IMD; part "training": network, epoch, reference, IMD and validation error); `regenerate`
makes summary.csv, summary.json and verdict.md again from it.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ganeval.results.power import one_sided_mde
from ganeval.results.thresholds import OURS, Threshold
from ganeval.results.verdicts import one_sided_p, sign_label
from ganeval.studies.manifold_pairs import shown_command
from ganeval.studies.stored import write_claims_record

INPUTS: tuple[str, ...] = ()  # no data node: the digits ship with scikit-learn
OUTPUTS = ("runs.csv", "summary.csv", "summary.json", "verdict.md", "nn_internals.png", "report.html")
LAYERS = ("input", "conv1", "conv2", "conv3", "conv4")  # compared with LAST
LAST = "fc"
HELD_OUT = 0.3  # the held-out share of the digits
TRACE_METHODS = ("exact", "slq")
SETTING = "VGG-16 and ResNet-20 on CIFAR-10/100"  # the paper's; this study runs a stand-in
LOW_CV = Threshold("CV of IMD across networks below", 0.2, 0.1, 0.3,
                   f"{OURS}: the paper says \"a low variance\" with no size; a spread of 10–30 % of the mean is where "
                   "\"low\" is arguable")
SETTLED = Threshold("settling epochs within ±", 2.0, 1.0, 4.0,
                    f"{OURS}: the paper says IMD \"correctly identifies the convergence point\" with no tolerance; 2 "
                    "is 10 % of the 20 epochs, 1–4 the range of a reader's choice", unit=" epochs")
STAGE = Threshold("monotone decrease from layer", 1.0, 1.0, 3.0,
                  f"{OURS}: the paper's initial stage is \"comprised of 4 convolutional blocks\" of VGG-16's 5; the "
                  "stand-in's 4 conv layers have no such blocks, so every end of the initial stage from conv1 to conv3 "
                  "is tried", names=LAYERS)


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


def tracer(imd_options: Mapping[str, Any], method: str, seed: int) -> Any:
    """trace(x, key) -> x's heat trace: exact (`method` "exact": no probes, no noise) or by SLQ with probes drawn from
    `default_rng([seed, *key])` (each trace its own draw)."""
    from ganeval.metrics import heat_trace

    if method not in TRACE_METHODS:
        raise ValueError(f"trace_method must be one of {', '.join(TRACE_METHODS)}, got {method!r}")
    opts = {k: v for k, v in imd_options.items() if k != "method"}

    def trace(x: np.ndarray, key: Sequence[int]) -> np.ndarray:
        rng = None if method == "exact" else np.random.default_rng([seed, *key])
        return heat_trace(x, seed=rng if rng is not None else 0, method=method, **opts)

    return trace


def measure(layers: Sequence[str], networks: int, epochs: int, width: int, references: Sequence[Mapping[str, Any]],
            seed: int, imd_options: Mapping[str, Any], lr: float = 1e-3, batch: int = 64,
            trace_method: str = "exact") -> pd.DataFrame:
    """runs.csv: the reference networks (trained, or loaded from their checkpoints), then `networks` networks of
    `width` from seeds seed+1.. tracked each epoch against them, and their layers against their last at the end; IMD
    from heat traces by `trace_method` (each reference's trace computed once)."""
    from ganeval.metrics import imd_from_traces

    trace = tracer(imd_options, trace_method, seed)
    x, y, xv, yv = split(seed)
    refs = {}
    for j, r in enumerate(references):
        name = f"width {int(r['width'])}"
        net = load_reference(int(r["width"]), r["checkpoint"]) if r.get("checkpoint") else \
            train(int(r["width"]), 10_000 + seed + j, x, y, xv, yv, epochs, lr, batch)
        net.eval()
        refs[name] = trace(representations(net, xv)[LAST], (20_000 + j,))
    rows: list[dict[str, Any]] = []
    for n in range(networks):
        def track(e: int, net: Any, err: float, n: int = n) -> None:
            last = trace(representations(net, xv)[LAST], (n, e))
            rows.append({"part": "training", "network": n, "epoch": e, "layer": LAST, "reference": "",
                         "metric": "val_error", "value": err})
            for name, ref in refs.items():
                rows.append({"part": "training", "network": n, "epoch": e, "layer": LAST, "reference": name,
                             "metric": "imd", "value": imd_from_traces(last, ref)})

        net = train(width, seed + 1 + n, x, y, xv, yv, epochs, lr, batch, track)
        reps = representations(net, xv)
        last = trace(reps[LAST], (n, 10_000))
        for i, layer in enumerate(layers):
            rows.append({"part": "layers", "network": n, "epoch": epochs, "layer": layer, "reference": LAST,
                         "metric": "imd", "value": imd_from_traces(trace(reps[layer], (n, 10_001 + i)), last)})
    return pd.DataFrame(rows)


def layer_table(rows: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per layer (in order): IMD relative to the last layer, mean and Student-t interval over networks, and the
    coefficient of variation across networks with its χ² interval (std's interval ÷ the mean)."""
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


def settle_epoch(curve: Sequence[float]) -> float:
    """The epoch a curve settles: the knee κ of the least-squares hinge y = c + s·max(0, κ − e) over epochs e = 0..E
    (a straight approach, then a plateau), κ on a grid of 0.01 epoch (of equal fits, the latest κ: a curve at its
    plateau from epoch 1 settles at 1). Every epoch's value enters the fit, so noise around the plateau moves κ
    little (a rule reading the last epoch outside a band around the end reads the noise instead)."""
    y = np.asarray(curve, dtype=np.float64)
    e = np.arange(len(y), dtype=np.float64)
    if len(y) < 3 or np.ptp(y) == 0:
        return 0.0
    knees = np.round(np.arange(0.0, e[-1] + 1e-9, 0.01), 2)
    x = np.maximum(0.0, knees[:, None] - e[None, :])  # one row per κ
    xc, yc = x - x.mean(1, keepdims=True), y - y.mean()
    sxx, sxy = (xc ** 2).sum(1), xc @ yc
    rss = (yc ** 2).sum() - np.divide(sxy ** 2, sxx, out=np.zeros_like(sxx), where=sxx > 0)
    best = np.flatnonzero(rss <= rss.min() + 1e-12 * max(1.0, float((yc ** 2).sum())))
    return float(knees[best[-1]])


def training_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per network and reference: the epoch IMD settled, the epoch the validation error settled (`settle_epoch`),
    their difference, IMD at initialisation and at the end (mean of the last 3 epochs), and Spearman ρ of the two
    curves over epochs."""
    from scipy.stats import spearmanr

    g = rows[rows.part == "training"]
    out = []
    for n, h in g.groupby("network"):
        err = h[h.metric == "val_error"].sort_values("epoch")["value"].to_numpy(float)
        e_val = settle_epoch(err)
        for ref, r in h[h.metric == "imd"].groupby("reference", sort=False):
            c = r.sort_values("epoch")["value"].to_numpy(float)
            e_imd = settle_epoch(c)
            out.append({"network": n, "reference": ref, "epoch_imd": e_imd, "epoch_val": e_val,
                        "difference": e_imd - e_val, "imd_start": float(c[0]), "imd_end": float(np.mean(c[-3:])),
                        "rho": float(spearmanr(c, err).statistic)})
    return pd.DataFrame(out)


def layer_steps(rows: pd.DataFrame) -> tuple[list[str], dict[str, np.ndarray]]:
    """The layers in order and each one's IMD relative to the last layer per network (sorted by network)."""
    g = rows[rows.part == "layers"]
    layers = list(dict.fromkeys(g.layer))
    return layers, {ly: g[g.layer == ly].sort_values("network")["value"].to_numpy(float) for ly in layers}


def rise_claim(rows: pd.DataFrame, confidence: float, holm_level: float) -> Any:
    """"Consequent layers do not monotonically contribute to the separation": some step between consecutive layers
    rises (one-sided paired t per step, Bonferroni over the steps); contradicted when every step falls (each one-sided
    test significant: intersection–union). Its smallest detectable rise at its own level: one-sided, α ÷ steps, at
    the family's Holm level `holm_level`."""
    from ganeval.results import t_interval
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, Claim, vs_paper

    layers, per = layer_steps(rows)
    steps = [(a, b, per[b] - per[a]) for a, b in zip(layers, layers[1:])]
    name = "layers do not separate monotonically (digits CNN stand-in)"
    statement = "consequent layers do not monotonically contribute to the separation of image representations"
    if not steps:
        return Claim(name, statement, NOT_TESTABLE, "per step between consecutive layers", "any rise",
                     vs_paper(NOT_TESTABLE), "one layer: no step", detectable="nothing: name two layers or more")
    ps = [one_sided_p(d)[0] for _, _, d in steps]
    rise = min(1.0, min(ps) * len(steps))
    fall = max(one_sided_p(d)[1] for _, _, d in steps)
    alpha = 1 - confidence
    v = HOLDS if rise <= alpha else CONTRADICTED if fall <= alpha else NOT_TESTABLE
    a, b, d = steps[int(np.argmin(ps))]
    iv = t_interval(d, confidence)
    ups = int((d > 0).sum())
    level = (1 - holm_level) / len(steps)
    return Claim(
        name, statement, v,
        f"per step between consecutive layers, IMD(next, last) − IMD(layer, last) over {len(d)} networks: one-sided "
        f"paired t-test that some step rises (Bonferroni over {len(steps)} steps); contradicted when every step falls "
        "(one-sided paired t-tests, the largest p)", "any rise (the paper gives no size)",
        vs_paper(v), f"largest rise {a}→{b}: {iv['mean']:.4g} [{iv['ci_low']:.4g}, {iv['ci_high']:.4g}], rising in "
        f"{ups} of {len(d)} networks; IMD per layer: " + ", ".join(f"{ly} {per[ly].mean():.4g}" for ly in layers),
        p_value=fall if v == CONTRADICTED else rise,
        detectable=f"a rise of {one_sided_mde(float(np.std(d, ddof=1)), len(d), level):.3g} (one-sided, "
        f"{1 - holm_level:.2g}/{len(steps)} steps)")


def decrease_claim(rows: pd.DataFrame, confidence: float) -> Any:
    """"... but start to do so after initial feature extraction stage": from the end of the initial stage on, every
    step falls. At each candidate end (`STAGE`): holds when every later step's one-sided upper bound (level 1 − α)
    lies below 0, contradicted when some step's one-sided lower bound (Bonferroni over those steps) lies above 0."""
    from ganeval.results.thresholds import across
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, Claim, vs_paper

    layers, per = layer_steps(rows)
    alpha = 1 - confidence
    pos = {ly: LAYERS.index(ly) for ly in layers if ly in LAYERS}

    def after(start: float) -> list[tuple[str, str, np.ndarray]]:
        lay = [ly for ly in layers if ly in pos and pos[ly] >= start]
        return [(a, b, per[b] - per[a]) for a, b in zip(lay, lay[1:])]

    def rule(start: float) -> str:
        steps = after(start)
        if not steps:
            return NOT_TESTABLE
        if max(one_sided_p(d)[1] for _, _, d in steps) <= alpha:
            return HOLDS
        return CONTRADICTED if min(one_sided_p(d)[0] for _, _, d in steps) * len(steps) <= alpha else NOT_TESTABLE

    name = "layers separate monotonically after the initial stage (digits CNN stand-in)"
    statement = ("[consequent layers] start to do so after initial feature extraction stage comprised of 4 "
                 "convolutional blocks")
    rule_text = (f"from the initial stage's end on, each step IMD(next, last) − IMD(layer, last) over "
                 f"{len(per[layers[0]])} networks: holds when every step's one-sided {confidence:.0%} upper bound lies "
                 "below 0; contradicted when some step's one-sided lower bound (Bonferroni over the steps) lies above 0")
    ends = [e for e in range(int(STAGE.low), int(STAGE.high) + 1) if after(e)]  # the ends with a step after them
    if not ends:
        return Claim(name, statement, NOT_TESTABLE, rule_text, STAGE.text(), vs_paper(NOT_TESTABLE),
                     "no two layers after any end of the initial stage", detectable="nothing: name two layers from "
                     f"{STAGE.names[int(STAGE.low)]} on")
    th = Threshold(STAGE.what, min(max(STAGE.value, ends[0]), ends[-1]), ends[0], ends[-1], STAGE.source,
                   names=STAGE.names)
    res = across(rule, th)
    v = res.verdict
    worst = max(after(th.value), key=lambda s: one_sided_p(s[2])[1])
    ev = "; ".join(f"{a}→{b} {d.mean():+.3g} (p {one_sided_p(d)[1]:.2g} that it falls)" for a, b, d in after(th.low))
    return Claim(name, statement, v, rule_text, th.text(), vs_paper(v), ev, across=res.text(),
                 detectable="" if v != NOT_TESTABLE else f"a fall of "
                 f"{one_sided_mde(float(np.std(worst[2], ddof=1)), len(worst[2]), alpha):.3g} at {worst[0]}→{worst[1]} "
                 f"(one-sided, {alpha:.2g})")


def variance_claim(rows: pd.DataFrame, confidence: float, trace_method: str) -> Any:
    """"A low variance across the networks trained from different random initializations": per layer the CV of IMD
    across networks with its χ² interval, below `LOW_CV` at every layer (holds), above it at one (contradicted), across
    the threshold's declared range. Only on exact heat traces: with SLQ the spread holds IMD's probe noise too, and
    the claim is not testable."""
    from ganeval.results.thresholds import across, all_hold, interval_label
    from ganeval.results.verdicts import NOT_TESTABLE, Claim, vs_paper

    lt = layer_table(rows, confidence)
    worst = lt.iloc[int(np.argmax(lt.cv_high.to_numpy()))]
    ev = ", ".join(f"{r.layer} {r.cv:.3f} [{r.cv_low:.3f}, {r.cv_high:.3f}]" for _, r in lt.iterrows())
    rule_text = (f"per layer, the coefficient of variation of IMD across {int(worst['n_runs'])} networks (exact heat "
                 "traces: IMD's probe noise removed, the spread is the networks') with its χ² interval; holds when "
                 "every layer's interval lies below the threshold, contradicted when one lies above")
    statement = "A low variance across the networks trained from different random initializations indicates stability"
    name = "low variance across initialisations (digits CNN stand-in)"
    if trace_method != "exact":
        return Claim(name, statement, NOT_TESTABLE, rule_text, LOW_CV.text(), vs_paper(NOT_TESTABLE),
                     f"CV per layer {ev}; the heat traces are SLQ estimates, so the spread holds IMD's probe noise",
                     detectable="nothing: the probe noise is not separated (run with trace_method=exact)")
    res = across(lambda tau: all_hold([interval_label(r.cv_low, r.cv_high, tau, "below") for _, r in lt.iterrows()]),
                 LOW_CV)
    v = res.verdict
    return Claim(name, statement, v, rule_text, LOW_CV.text(), vs_paper(v), f"CV per layer: {ev}", across=res.text(),
                 detectable="" if v != NOT_TESTABLE else f"intervals clear of the threshold (widest: {worst.layer} "
                 f"[{worst.cv_low:.3f}, {worst.cv_high:.3f}])")


def convergence_claims(rows: pd.DataFrame, confidence: float) -> list[Any]:
    """"IMD correctly identifies the convergence point": per network, the epoch IMD settles minus the epoch the
    validation error settles (`settle_epoch`), its Student-t interval over networks within ±`SETTLED` epochs, across
    the threshold's declared range."""
    from ganeval.results import t_interval
    from ganeval.results.thresholds import across, interval_label
    from ganeval.results.verdicts import NOT_TESTABLE, Claim, vs_paper

    tt = training_table(rows)
    out = []
    for ref, h in tt.groupby("reference", sort=False):
        iv = t_interval(h["difference"].to_numpy(float), confidence)
        res = across(partial(interval_label, iv["ci_low"], iv["ci_high"], side="within"), SETTLED)
        v = res.verdict
        out.append(Claim(
            f"IMD to the {ref} reference's last layer identifies the convergence point (digits CNN stand-in)",
            "even in such unaligned spaces, IMD correctly identifies the convergence point of the networks", v,
            f"per network, the epoch IMD settled minus the epoch the validation error settled (each the knee of the "
            f"least-squares hinge: a straight approach, then a plateau); its Student-t interval over {len(h)} networks "
            "within ±threshold", SETTLED.text(), vs_paper(v),
            f"difference {iv['mean']:+.2f} [{iv['ci_low']:+.2f}, {iv['ci_high']:+.2f}] epochs; IMD settled at "
            f"{h.epoch_imd.mean():.1f}, the validation error at {h.epoch_val.mean():.1f}; Spearman ρ(IMD, error) over "
            f"epochs {h.rho.mean():.3f}", across=res.text(),
            detectable="" if v != NOT_TESTABLE else f"an interval half-width below the threshold's distance to its "
            f"mean (measured {iv['half_width']:.2g})"))
    return out


def progress_claims(rows: pd.DataFrame, confidence: float, holm_level: float) -> list[Any]:
    """"VGG-16 representations progress towards not only the VGG-16 final layer, but the ResNet-20 final layer
    representation as well": per network and reference, IMD at initialisation minus IMD at the end (mean of the last 3
    epochs); one-sided paired t that it falls (the paper gives no size: any fall)."""
    from ganeval.results import t_interval
    from ganeval.results.verdicts import Claim, vs_paper

    tt = training_table(rows)
    out = []
    for ref, h in tt.groupby("reference", sort=False):
        d = (h.imd_start - h.imd_end).to_numpy(float)
        v, p = sign_label(d, confidence)
        iv = t_interval(d, confidence)
        out.append(Claim(
            f"the last layer progresses towards the {ref} reference (digits CNN stand-in)",
            "VGG-16 representations progress towards not only the VGG-16 final layer, but the ResNet-20 final layer "
            "representation as well", v,
            f"per network, IMD to the reference at initialisation minus at the end (mean of the last 3 epochs); "
            f"one-sided paired t over {len(d)} networks that it falls; contradicted when it rises", "any fall (the "
            "paper gives no size)", vs_paper(v),
            f"fall {iv['mean']:.4g} [{iv['ci_low']:.4g}, {iv['ci_high']:.4g}] (IMD {h.imd_start.mean():.4g} → "
            f"{h.imd_end.mean():.4g}, {100 * (h.imd_end.mean() / h.imd_start.mean() - 1):+.0f} %)",
            p_value=p,
            detectable=f"a fall of {one_sided_mde(float(np.std(d, ddof=1)), len(d), 1 - holm_level):.3g} (one-sided)"))
    return out


PAPER_CLAIMS = (  # (the stand-in claims' names start with, the paper's claim): each paper claim reads stand-in here
    (("layers do not separate", "layers separate"),
     "layers do not separate monotonically, then do after 4 blocks (VGG-16 on CIFAR)"),
    (("low variance",), "low variance across 10 VGG-16 initialisations (CIFAR)"),
    (("IMD to the",), "IMD identifies the convergence point (VGG-16 against VGG-16 and ResNet-20, CIFAR)"),
    (("the last layer progresses",), "VGG-16 progresses towards ResNet-20's final layer too (CIFAR)"))


def paper_claims(claims: Sequence[Any]) -> list[Any]:
    """The paper's own claims, one per statement: *not tested: stand-in data* (this run trains digits CNNs, not
    VGG-16 and ResNet-20 on CIFAR), with the stand-in's labels as their numbers."""
    from ganeval.results.verdicts import NO_COMPARISON, STAND_IN, Claim

    out = []
    for prefixes, name in PAPER_CLAIMS:
        mine = [c for c in claims if c.name.startswith(prefixes)]
        if mine:
            out.append(Claim(name, mine[0].statement, STAND_IN, "none: the paper's networks and data are not run",
                             f"the paper's setting ({SETTING})", NO_COMPARISON,
                             "on the digits CNN stand-in: " + "; ".join(f"{c.name.split(' (digits')[0]}: {c.label()}"
                                                                         for c in mine)))
    return out


def decide(rows: pd.DataFrame, confidence: float, trace_method: str = "exact") -> list[Any]:
    """The section's claims on the digits stand-in, the tests among them Holm-corrected together (each smallest
    detectable effect at the family's Holm level), then the paper's claims, each *not tested: stand-in data*."""
    from ganeval.results.verdicts import holm_family

    def build(holm_level: float) -> list[Any]:
        return [rise_claim(rows, confidence, holm_level), decrease_claim(rows, confidence),
                variance_claim(rows, confidence, trace_method), *convergence_claims(rows, confidence),
                *progress_claims(rows, confidence, holm_level)]

    claims = holm_family(build, confidence)
    return claims + paper_claims(claims)


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
            + ("exact heat traces: a dense eigendecomposition, no probes, so no estimator noise"
               if trace_method(config) == "exact" else
               f"SLQ with m = {config['imd']['m']}, nv = {config['imd']['nv']}: the values carry its probe noise")
            + f") between representations of the held-out images; "
            f"reference networks: {refs}. A stand-in for the paper's 10 VGG-16 on CIFAR-10/100 against VGG-16 "
            f"(d = 512) and ResNet-20 (d = 64): the claims are decided on the stand-in, {percent(confidence)} "
            "intervals across networks; the paper's own claims read *not tested: stand-in data*. Settling epoch: the "
            "knee of the least-squares hinge (a straight approach, then a plateau) fitted to every epoch's value, "
            "tested on simulated curves whose knee is known, with noise added (tests/test_study_rules.py).", "",
            claims_table(claims, confidence).rstrip("\n"), "",
            "| layer | IMD relative to the last layer | interval | CV across networks | CV interval |",
            "|---|---|---|---|---|"]
    body += [f"| {r.layer} | {r['mean']:.4g} | [{r.ci_low:.4g}, {r.ci_high:.4g}] | {r.cv:.3f} | "
             f"[{r.cv_low:.3f}, {r.cv_high:.3f}] |" for _, r in lt.iterrows()]
    body += ["", "| reference | IMD settled (epoch, mean) | validation error settled | IMD at epoch 0 | IMD at the "
             "end | ρ(IMD, error) |", "|---|---|---|---|---|---|"]
    body += [f"| {ref} | {h.epoch_imd.mean():.1f} | {h.epoch_val.mean():.1f} | {h.imd_start.mean():.4g} | "
             f"{h.imd_end.mean():.4g} | {h.rho.mean():.3f} |" for ref, h in tt.groupby("reference", sort=False)]
    return verdict_markdown(claim_sentences(claims, confidence, rule=True), "Evolution of image manifolds: verdict",
                            "\n".join(body))


def trace_method(config: Mapping[str, Any]) -> str:
    """How a stored run's heat traces were computed: its config's `trace_method` (runs made before it was recorded
    used SLQ)."""
    return str(config.get("trace_method", "slq"))


def write(out: str | Path, rows: pd.DataFrame, config: Mapping[str, Any]) -> list[Any]:
    """The derived files of stored runs: summary.csv (per layer), summary.json (config and claims), verdict.md."""
    from ganeval.common import atomic_write_text
    from ganeval.results import write_csv

    out, conf = Path(out), float(config["confidence"])
    claims = decide(rows, conf, trace_method(config))
    write_csv(layer_table(rows, conf), out / "summary.csv")
    write_claims_record(out, config, claims)
    atomic_write_text(out / "verdict.md", verdict_text(claims, rows, config, conf))
    return claims


def plot(rows: pd.DataFrame, path: str | Path, confidence: float) -> Path:
    """The paper's figure: (left) IMD of each layer relative to the last, band across networks; (right) IMD of the
    last layer to each reference during training, beside the validation error, each curve's mean settling epoch
    dotted."""
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
    tt = training_table(rows)
    for i, (_, h) in enumerate(tt.groupby("reference", sort=False)):
        bx.axvline(h.epoch_imd.mean(), color=f"C{i}", ls=":", lw=1)
    cx = bx.twinx()
    err = g[g.metric == "val_error"].groupby("epoch")["value"].mean()
    cx.plot(err.index, err.values, color="k", ls="--", label="validation error")
    cx.axvline(tt.epoch_val.mean(), color="k", ls=":", lw=1)
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
    method = str(cfg.get("trace_method", "exact"))
    if method not in TRACE_METHODS:
        raise ValueError(f"trace_method must be one of {', '.join(TRACE_METHODS)}, got {method!r}")
    with plan.stage("train and measure"):
        rows = measure(layers, int(cfg.networks), int(cfg.epochs), int(cfg.width), refs, s.seed, imd_options,
                       float(cfg.lr), int(cfg.batch), method)
    write_csv(rows, plan.results_dir / "runs.csv")
    config = {"layers": layers, "networks": int(cfg.networks), "epochs": int(cfg.epochs), "width": int(cfg.width),
              "references": refs, "lr": float(cfg.lr), "batch": int(cfg.batch), "seed": s.seed,
              "confidence": s.confidence, "imd": {k: imd_options[k] for k in ("k", "m", "nv", "normalization", "variance_reduction")},
              "trace_method": method, "command": shown_command(plan)}
    write(plan.results_dir, rows, config)
    if plan.options.plots:
        plot(rows, plan.results_dir / "nn_internals.png", s.confidence)
    return rows


def regenerate(src: Any, out: Any) -> None:
    """Make the stored result's derived files again from its runs.csv and the config in its summary.json."""
    config = json.loads((Path(src) / "summary.json").read_text())["config"]
    write(out, pd.read_csv(Path(src) / "runs.csv", keep_default_na=False), config)
