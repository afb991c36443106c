"""One call each of ganeval's IMD, FID and KID against the peers' equivalents, on the same features.

Data: two different pool3-like sets (ganeval.metrics.synthetic.pool3_like; x and y come from two
different distributions), N×D float32. Peers (from the `peers` extra; run this script in a virtual
environment that has them, e.g. .venv-peers):
  IMD  piq.MSID() (a port of the reference IMD code; k=5, m=10, niters=100, 256 log-spaced t,
       'empty' normalisation), probes from numpy's global RNG seeded with --seed;
  FID  pytorch-fid: np.mean / np.cov(rowvar=False) statistics + fid_score.calculate_frechet_distance;
  KID  torch_fidelity.metric_kid.kid_features_to_metric, 100 subsets of 1000.
Every function is warmed up once on a tiny input first, so imports and first-call overheads
(numba compilation, thread pools, lazy imports) are excluded from the times. KID values differ
between the two by their random subsets only; FID must agree to 1e-6 relative.

    python scripts/bench_metrics.py                      # 10k vs 10k, 2048-d, CPU, with peers
    python scripts/bench_metrics.py --skip-peers --device cuda --approx-sizes 10000 50000 200000
    python scripts/bench_metrics.py --skip-ours --n 2000  # the peer half alone
    python scripts/bench_metrics.py --memory             # + peak RSS of IMD at 50k×2048 (subprocess)
    python scripts/bench_metrics.py --only-new             # the new metrics alone (peers: prdc, torch-fidelity)
    python scripts/bench_metrics.py --only-reviewer --n 4000 --repeats 2   # CMMD, sFID, FD∞, Vendi, authenticity, MiFID

--new-metrics: precision/recall/density/coverage and the Inception Score. Their cost per protocol run (both
subsamples prepared, the pair scored: `ganeval.metrics.suite`) added to IMD+FID+KID and alone, and the library
calls side by side with the `prdc` package (compute_prdc on the same features; its values must be equal) and
torch-fidelity's IS (isc_features_to_metric, no shuffle, on the same 1008-way logits). Here x and y are two
samples of one pool3-like distribution (y's scaled by 1.05), so the four are far from 0 and 1.

--reviewer-metrics (with --only-new, or --only-reviewer alone): CMMD, sFID, FD∞ (15 points), Vendi, authenticity
and MiFID, each added to IMD+FID+KID per protocol run, paired within each round as above (sFID on the same rows:
the time of FD on 2048-d stands in for 2023-d spatial rows, a 1% smaller covariance).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ganeval.metrics.streams import metric_draws
from ganeval.metrics.synthetic import pool3_like


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call, by time.perf_counter."""
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def make_sets(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two different pool3-like sets: x from distribution 0, y from distribution 1."""
    return pool3_like(n, d, seed=seed, distribution_seed=0), pool3_like(n, d, seed=seed + 1, distribution_seed=1)


# ----------------------------------------------------------------------------------------------- ours
def ours(device: str, seed: int) -> dict[str, Callable[[np.ndarray, np.ndarray], Any]]:
    """ganeval's metrics as name -> f(x, y)."""
    from ganeval.metrics import fid, imd, kid

    return {
        "IMD": lambda x, y: imd(x, y, seed=seed, device=device),
        "FID": lambda x, y: fid(x, y, device=device),
        "KID": lambda x, y: kid(x, y, subsets=100, subset_size=min(1000, len(x), len(y)), seed=seed, device=device),
    }


# ---------------------------------------------------------------------------------------------- peers
def peers(seed: int) -> dict[str, Callable[[np.ndarray, np.ndarray], Any]]:
    """The peers' public entry points as name -> f(x, y); raises ImportError naming the fix."""
    try:
        import piq
        import torch
        from pytorch_fid.fid_score import calculate_frechet_distance
        from torch_fidelity.metric_kid import (
            KEY_METRIC_KID_MEAN,
            KEY_METRIC_KID_STD,
            kid_features_to_metric,
        )
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{e}. The peers come from the `peers` extra (pip install -e '.[peers]'), or pass --skip-peers"
        ) from e

    def piq_msid(x: np.ndarray, y: np.ndarray) -> float:
        np.random.seed(seed)  # piq draws its probes from numpy's global RNG
        return float(piq.MSID()(torch.from_numpy(x), torch.from_numpy(y)))

    def pytorch_fid(x: np.ndarray, y: np.ndarray) -> float:
        mu1, s1 = np.mean(x, axis=0), np.cov(x, rowvar=False)
        mu2, s2 = np.mean(y, axis=0), np.cov(y, rowvar=False)
        return float(calculate_frechet_distance(mu1, s1, mu2, s2))

    def fidelity_kid(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        out = kid_features_to_metric(
            torch.from_numpy(x),
            torch.from_numpy(y),
            kid_subsets=100,
            kid_subset_size=min(1000, len(x), len(y)),
            rng_seed=seed,
            verbose=False,
        )
        return float(out[KEY_METRIC_KID_MEAN]), float(out[KEY_METRIC_KID_STD])

    return {"IMD": piq_msid, "FID": pytorch_fid, "KID": fidelity_kid}


PEER_NAMES = {"IMD": "piq.MSID", "FID": "pytorch-fid", "KID": "torch-fidelity"}


def run_all(funcs: dict[str, Callable], x: np.ndarray, y: np.ndarray, warm: tuple[np.ndarray, np.ndarray]) -> dict:
    """Warm each function up on `warm`, then time one call on (x, y): name -> (seconds, value)."""
    out = {}
    for name, f in funcs.items():
        f(*warm)
        out[name] = timed(lambda: f(x, y))
    return out


def fmt_value(v: Any) -> str:
    """A metric value for the table: a float, or mean±std for KID."""
    if v is None:
        return "-"
    if isinstance(v, tuple):
        return f"{v[0]:.6g}±{v[1]:.2g}"
    return f"{v:.8g}"


def print_table(mine: dict, theirs: dict) -> None:
    """metric | ganeval s | peer s | ratio | values; and FID's relative difference."""
    print(f"\n{'metric':<6} {'peer':<15} {'ganeval_s':>10} {'peer_s':>10} {'ratio':>8}  {'ganeval value':>22} {'peer value':>22}")
    for name in ("IMD", "FID", "KID"):
        t1, v1 = mine.get(name, (None, None))
        t2, v2 = theirs.get(name, (None, None))
        ratio = f"{t2 / t1:8.1f}" if t1 and t2 else f"{'-':>8}"
        s1 = f"{t1:10.3f}" if t1 is not None else f"{'-':>10}"
        s2 = f"{t2:10.3f}" if t2 is not None else f"{'-':>10}"
        print(f"{name:<6} {PEER_NAMES[name]:<15} {s1} {s2} {ratio}  {fmt_value(v1):>22} {fmt_value(v2):>22}")
    if "FID" in mine and "FID" in theirs:
        a, b = mine["FID"][1], theirs["FID"][1]
        rel = abs(a - b) / max(abs(b), 1e-300)
        print(f"FID relative difference |ganeval - pytorch-fid| / pytorch-fid = {rel:.2e} ({'OK' if rel <= 1e-6 else 'FAIL'}: must be <= 1e-6)")


# ------------------------------------------------------------------------------------------ new metrics
PRDC = ("precision", "recall", "density", "coverage")


def protocol_run(x: np.ndarray, y: np.ndarray, metrics: Any, device: str, seed: int) -> tuple[float, dict]:
    """(seconds, values) of one protocol run's metric work: both subsamples prepared, the pair scored."""
    from ganeval.metrics import Metrics
    from ganeval.metrics.suite import prepare_set, score_pair

    chosen = Metrics(metrics)
    t, c = time.perf_counter(), time.process_time()
    sx, sy = prepare_set(x, chosen, device), prepare_set(y, chosen, device)
    values = score_pair(sx, sy, metric_draws(seed), chosen, device)
    return time.perf_counter() - t, {**values, "cpu_s": time.process_time() - c}


def best_of(repeats: int, fn: Callable[[], tuple[float, Any]]) -> tuple[float, Any]:
    """The fastest of `repeats` timed calls (the machine is shared: the minimum is the least disturbed)."""
    runs = [fn() for _ in range(repeats)]
    return min(runs, key=lambda r: r[0])


def new_metrics(n: int, d: int, device: str, seed: int, repeats: int, skip_peers: bool) -> None:
    """The new metrics' cost per protocol run and side by side with the peers (see the module docstring)."""
    import contextlib
    import io

    import torch

    from ganeval.metrics import inception_score, prdc

    x = pool3_like(n, d, seed=seed, distribution_seed=0)
    y = 1.05 * pool3_like(n, d, seed=seed + 1, distribution_seed=0)
    kid = {"subsets": 100, "subset_size": min(1000, n)}
    base = {"imd": {}, "fid": {}, "kid": kid}
    warm = (x[:300, :64].copy(), y[:300, :64].copy())
    protocol_run(*warm, {"imd": {}, "fid": {}, "kid": {"subsets": 10, "subset_size": 100}, **{m: {} for m in PRDC}}, device, seed)
    print(f"\nnew metrics: cost per protocol run ({n} vs {n}, {d}-d, device={device}; both sets prepared, the pair "
          f"scored; {repeats} rounds, each timing every row once in turn)")
    print("(s/run: the fastest round; added_s: the median over rounds of (row − imd+fid+kid) in the same round, so a slow")
    print(" spell of the machine shifts both; cpu_s: CPU seconds of this process, all threads, fastest round)")
    print(f"{'metrics':<46} {'s/run':>7} {'added_s':>8} {'cpu_s':>7} {'added_cpu_s':>11}")
    rows = [("imd+fid+kid", base),
            ("imd+fid+kid+precision", {**base, "precision": {}}),
            ("imd+fid+kid+precision+recall+density+coverage", {**base, **{m: {} for m in PRDC}}),
            ("precision+recall+density+coverage alone", {m: {} for m in PRDC}),
            ("precision alone", {"precision": {}})]
    rounds = [{label: protocol_run(x, y, metrics, device, seed) for label, metrics in rows} for _ in range(repeats)]
    values = {label: min((r[label] for r in rounds), key=lambda tv: tv[0])[1] for label, _ in rows}
    for label, metrics in rows:
        t = min(r[label][0] for r in rounds)
        cpu = min(r[label][1]["cpu_s"] for r in rounds)
        added = added_cpu = ""
        if "imd" in metrics and label != "imd+fid+kid":
            added = f"{np.median([r[label][0] - r['imd+fid+kid'][0] for r in rounds]):8.2f}"
            added_cpu = f"{np.median([r[label][1]['cpu_s'] - r['imd+fid+kid'][1]['cpu_s'] for r in rounds]):11.2f}"
        print(f"{label:<46} {t:7.2f} {added:>8} {cpu:7.2f} {added_cpu:>11}")
    v_base = values["imd+fid+kid"]
    shared = values["imd+fid+kid+precision+recall+density+coverage"]
    same = all(shared[m] == v_base[m] for m in ("imd", "fid", "kid"))
    print(f"IMD, FID, KID with the four added equal to without them: {'yes' if same else 'NO'}; values: "
          + ", ".join(f"{m} {shared[m]:.6g}" for m in PRDC))

    # library calls side by side with the prdc package (one k for all four, as compute_prdc takes it)
    print(f"\nprecision/recall/density/coverage, library calls, {n} vs {n}, {d}-d (best of {repeats}):")
    print(f"{'call':<34} {'ganeval_s':>10} {'prdc_s':>10} {'ratio':>8}  values (precision, recall, density, coverage)")
    for label, ks in (("nearest_k=5", {m: 5 for m in PRDC}), ("papers' k (3, 3, 5, 5)", {"precision": 3, "recall": 3,
                                                                                       "density": 5, "coverage": 5})):
        t1, v1 = best_of(repeats, lambda: timed(lambda: prdc(x, y, k=ks, device=device)))
        t2, v2 = None, None
        if not skip_peers:
            from prdc import compute_prdc

            def peer() -> dict:
                with contextlib.redirect_stdout(io.StringIO()):  # compute_prdc prints the set sizes
                    out = {k: compute_prdc(x, y, k) for k in sorted(set(ks.values()))}
                return {m: float(out[ks[m]][m]) for m in PRDC}

            t2, v2 = timed(peer)  # once: tens of seconds
        ratio = f"{t2 / t1:8.1f}" if t2 else f"{'-':>8}"
        print(f"{label:<34} {t1:10.2f} {t2 if t2 is not None else float('nan'):10.2f} {ratio}  "
              f"{', '.join(f'{v1[m]:.6g}' for m in PRDC)}")
        if v2 is not None:
            diff = max(abs(v1[m] - v2[m]) for m in PRDC)
            print(f"{'':<34} prdc values: {', '.join(f'{v2[m]:.6g}' for m in PRDC)}; max |difference| {diff:.1e} "
                  f"({'equal' if diff == 0 else 'DIFFERENT'})")

    # the Inception Score on 1008-way logits
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, 1008)).astype(np.float32)
    logits[np.arange(n), rng.integers(0, 250, n)] += 8.0
    t_run, v_run = best_of(repeats, lambda: protocol_run(logits, logits[::-1].copy(), {"inception_score": {}}, device, seed))
    t_is, v_is = best_of(repeats, lambda: timed(lambda: inception_score(logits, 10, device=device)))
    print(f"\nInception Score, {n}×1008 logits, splits=10: per protocol run {t_run:.3f} s (value {v_run['inception_score']:.8g}); "
          f"library call {t_is:.3f} s (value {v_is[0]:.10g} ± {v_is[1]:.3g})")
    if not skip_peers:
        from torch_fidelity.metric_isc import KEY_METRIC_ISC_MEAN, KEY_METRIC_ISC_STD, isc_features_to_metric

        t_p, v_p = timed(lambda: isc_features_to_metric(torch.from_numpy(logits), splits=10, shuffle=False))
        rel = abs(v_is[0] - v_p[KEY_METRIC_ISC_MEAN]) / v_p[KEY_METRIC_ISC_MEAN]
        print(f"torch-fidelity isc_features_to_metric (shuffle=False): {t_p:.3f} s (value {v_p[KEY_METRIC_ISC_MEAN]:.10g} ± "
              f"{v_p[KEY_METRIC_ISC_STD]:.3g}); ratio {t_p / t_is:.1f}; relative difference of the means {rel:.1e}")


# ------------------------------------------------------------------------------------- reviewer metrics
REVIEWER = ("cmmd", "sfid", "fd_inf", "vendi", "authenticity", "mifid")


def reviewer_metrics(n: int, d: int, device: str, seed: int, repeats: int) -> None:
    """Each of CMMD, sFID, FD∞, Vendi, authenticity and MiFID added to IMD+FID+KID per protocol run (paired rounds)."""
    x = pool3_like(n, d, seed=seed, distribution_seed=0)
    y = 1.05 * pool3_like(n, d, seed=seed + 1, distribution_seed=0)
    base = {"imd": {}, "fid": {}, "kid": {"subsets": 100, "subset_size": min(1000, n)}}
    warm = (x[:300, :64].copy(), y[:300, :64].copy())
    protocol_run(*warm, {"imd": {}, "fid": {}, "kid": {"subsets": 10, "subset_size": 100},
                         **{m: {} for m in REVIEWER}}, device, seed)
    print(f"\nreviewer metrics: cost per protocol run ({n} vs {n}, {d}-d, device={device}; {repeats} rounds, each "
          "timing every row once in turn; added_s = median over rounds of (row − imd+fid+kid) in the same round)")
    print(f"{'metrics':<28} {'s/run':>7} {'added_s':>8} {'cpu_s':>7} {'added_cpu_s':>11}  value")
    rows = [("imd+fid+kid", base)] + [(f"imd+fid+kid+{m}", {**base, m: {}}) for m in REVIEWER]
    rounds = []
    for i in range(repeats):
        rounds.append({})
        for label, metrics in rows:
            rounds[-1][label] = protocol_run(x, y, metrics, device, seed)
            print(f"  round {i + 1}: {label:<28} {rounds[-1][label][0]:7.2f} s", flush=True)
    for label, _ in rows:
        t = min(r[label][0] for r in rounds)
        cpu = min(r[label][1]["cpu_s"] for r in rounds)
        added = added_cpu = value = ""
        if label != "imd+fid+kid":
            added = f"{np.median([r[label][0] - r['imd+fid+kid'][0] for r in rounds]):8.2f}"
            added_cpu = f"{np.median([r[label][1]['cpu_s'] - r['imd+fid+kid'][1]['cpu_s'] for r in rounds]):11.2f}"
            name = label.rsplit("+", 1)[1]
            value = f"{rounds[0][label][1][name]:.6g}"
        print(f"{label:<28} {t:7.2f} {added:>8} {cpu:7.2f} {added_cpu:>11}  {value}", flush=True)


# --------------------------------------------------------------------------------------- approx + memory
def approx_scaling(sizes: list[int], d: int, device: str, seed: int) -> None:
    """Time imd(..., knn='approx') for each N, after a tiny warm-up that pays numba's compilation."""
    from ganeval.metrics import imd

    small = np.random.default_rng(seed).standard_normal((300, 16)).astype(np.float32)
    t_compile, _ = timed(lambda: imd(small, small[::-1].copy(), seed=seed, knn="approx", device=device))
    print(f"\nimd(knn='approx'): numba compile + first call on 300x16 = {t_compile:.1f} s (once per process, excluded below)")
    print(f"{'N':>8} {'D':>6} {'imd_approx_s':>13} {'value':>12}")

    def one(n: int) -> tuple[float, float]:
        x, y = make_sets(n, d, seed)  # freed on return, before the next size is made
        return timed(lambda: imd(x, y, seed=seed, knn="approx", device=device))

    for n in sizes:
        t, v = one(n)
        print(f"{n:>8} {d:>6} {t:13.2f} {v:12.6g}", flush=True)


def peak_rss_mb() -> float:
    """This process's peak resident memory in MiB.

    VmHWM from /proc (Linux) where available: getrusage's ru_maxrss survives exec on Linux, so in a
    child started from a big parent it reports the parent's size; elsewhere resource.getrusage.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB -> MiB
    except OSError:
        pass
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale


def memory_child(n: int, d: int, knn: str, device: str, seed: int) -> None:
    """(Run in a subprocess) one IMD call at n×d; print peak RSS before and after it as JSON."""
    from ganeval.metrics import imd

    x, y = make_sets(n, d, seed)
    before = peak_rss_mb()
    t, v = timed(lambda: imd(x, y, seed=seed, knn=knn, device=device))
    after = peak_rss_mb()
    print(json.dumps({"n": n, "d": d, "knn": knn, "seconds": t, "value": v, "rss_mb_data": before, "rss_mb_peak": after}))


def memory_report(n: int, d: int, knn: str, device: str, seed: int) -> None:
    """Peak RSS of one IMD call at n×d, measured in a fresh subprocess."""
    cmd = [sys.executable, __file__, "--_memory-child", "--n", str(n), "--d", str(d), "--memory-knn", knn,
           "--device", device, "--seed", str(seed)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        print(f"\nmemory run failed (exit {res.returncode}):\n{res.stderr[-2000:]}")
        return
    r = json.loads(res.stdout.strip().splitlines()[-1])
    print(f"\nIMD only, {r['n']}x{r['d']} (two sets), knn={r['knn']}, in a subprocess: {r['seconds']:.1f} s, "
          f"peak RSS {r['rss_mb_peak']:.0f} MiB (of which {r['rss_mb_data']:.0f} MiB before the call: "
          f"interpreter, torch and the two float32 sets)")


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and print the side-by-side table, the approx-kNN scaling and the memory line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10000, help="samples per set")
    ap.add_argument("--d", type=int, default=2048, help="feature dimension")
    ap.add_argument("--device", default="cpu", help="device for ganeval (peers always run on CPU numpy)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--skip-ours", action="store_true")
    ap.add_argument("--approx-sizes", type=int, nargs="*", default=[10000, 50000],
                    help="N values for imd(knn='approx') timings (none: skip)")
    ap.add_argument("--memory", action="store_true", help="also report peak RSS of IMD at --memory-n x D")
    ap.add_argument("--memory-n", type=int, default=50000)
    ap.add_argument("--memory-knn", choices=["exact", "approx"], default="exact")
    ap.add_argument("--new-metrics", action="store_true",
                    help="also time precision/recall/density/coverage and IS per protocol run and against prdc/torch-fidelity")
    ap.add_argument("--only-new", action="store_true", help="--new-metrics alone (no IMD/FID/KID table, no approx)")
    ap.add_argument("--repeats", type=int, default=2, help="timed repeats of each new-metrics case (the best is shown)")
    ap.add_argument("--reviewer-metrics", action="store_true",
                    help="also time CMMD, sFID, FD∞, Vendi, authenticity and MiFID per protocol run")
    ap.add_argument("--only-reviewer", action="store_true", help="--reviewer-metrics alone")
    ap.add_argument("--_memory-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.n < 2 or args.d < 1:
        raise ValueError(f"--n must be >= 2 and --d >= 1, got n={args.n}, d={args.d}")
    if args._memory_child:
        memory_child(args.n, args.d, args.memory_knn, args.device, args.seed)
        return

    import torch

    if args.only_reviewer:
        print(f"bench_metrics --only-reviewer: torch threads={torch.get_num_threads()}, python {sys.version.split()[0]}")
        reviewer_metrics(args.n, args.d, args.device, args.seed, args.repeats)
        return
    if args.only_new:
        print(f"bench_metrics --only-new: torch threads={torch.get_num_threads()}, python {sys.version.split()[0]}")
        new_metrics(args.n, args.d, args.device, args.seed, args.repeats, args.skip_peers)
        if args.reviewer_metrics:
            reviewer_metrics(args.n, args.d, args.device, args.seed, args.repeats)
        return
    print(f"bench_metrics: N={args.n} vs {args.n}, D={args.d}, device={args.device}, seed={args.seed}, "
          f"torch threads={torch.get_num_threads()}, python {sys.version.split()[0]}")
    print("times: one call each, after a warm-up call on a tiny input (imports and first-call costs excluded)")
    x, y = make_sets(args.n, args.d, args.seed)
    warm = make_sets(min(300, args.n), min(64, args.d), args.seed + 7)  # tiny: first-call costs only
    mine: dict = {}
    theirs: dict = {}
    if not args.skip_ours:
        mine = run_all(ours(args.device, args.seed), x, y, warm)
    if not args.skip_peers:
        theirs = run_all(peers(args.seed), x, y, warm)
    if mine or theirs:
        print_table(mine, theirs)
    if not args.skip_ours and args.approx_sizes:
        approx_scaling(args.approx_sizes, args.d, args.device, args.seed)
    if args.new_metrics:
        new_metrics(args.n, args.d, args.device, args.seed, args.repeats, args.skip_peers)
    if args.reviewer_metrics:
        reviewer_metrics(args.n, args.d, args.device, args.seed, args.repeats)
    if args.memory and not args.skip_ours:
        memory_report(args.memory_n, args.d, args.memory_knn, args.device, args.seed)


if __name__ == "__main__":
    main()
