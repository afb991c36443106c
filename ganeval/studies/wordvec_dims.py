"""The paper's "Optimizing Dimensionality of Word Embeddings": word2vec embeddings of dimensions 4..512 (powers of 2)
trained on one corpus, IMD between every pair of dimensions beside the normalised PIP loss (Yin & Shen's pairwise
inner product loss of the same words, each PIP matrix scaled to unit Frobenius norm: the paper's "covariance error").

Offline the corpus is gensim's own test corpus `lee_background.cor` (300 Australian news articles, 58k tokens; the
paper: English Wikipedia): English prose trained with the same tool, so the embeddings differ from the paper's in
scale only. Run r scores the same `sample_size` words (one draw per run, aligned: PIP needs the same rows) of every
embedding. Needs gensim (`pip install ganeval[wordvec]`). `regenerate` remakes summary.csv, summary.json and
verdict.md from runs.csv.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ganeval.studies.manifold_pairs import shown_command
from ganeval.studies.stored import write_claims_record

INPUTS: tuple[str, ...] = ()  # no data node: the corpus is gensim's
OUTPUTS = ("runs.csv", "summary.csv", "summary.json", "verdict.md", "wordvec_dims.png", "report.html")
CORPUS = "lee_background.cor"
MODERATE = 0.5  # practical threshold: Spearman ρ(|log2 da − log2 db|, distance) beyond this is "closer is lower"
SAME = 0.10  # practical threshold: PIP(4,16) within ±10 % of PIP(4,8) does "not" separate them
EXTRA = "wordvec"


def require_gensim() -> Any:
    """gensim, or the one-line error naming the extra that installs it."""
    try:
        import gensim
    except ImportError:
        raise ValueError(f"experiment=wordvec_dims trains word2vec with gensim, which is not installed: "
                         f"pip install 'ganeval[{EXTRA}]'") from None
    return gensim


def check(dims: Sequence[int], corpus: str) -> list[int]:
    """The dimensions (≥ 2 distinct positive whole numbers, 4 and 8 and 16 among them for the paper's 4-vs-8 claim
    when present) and the corpus file, checked before any training."""
    ds = [int(d) for d in dims]
    if len(set(ds)) < 2 or any(d < 1 for d in ds) or len(set(ds)) != len(ds):
        raise ValueError(f"dims must be at least two distinct positive dimensions, got {list(dims)}")
    if not Path(corpus).is_file():
        raise ValueError(f"corpus {corpus} does not exist or is not a file")
    return ds


def corpus_path(name: str | None) -> str:
    """The corpus file: `name` as given, or gensim's test corpus `lee_background.cor` when None."""
    if name:
        return str(name)
    gensim = require_gensim()
    return str(Path(gensim.__file__).parent / "test" / "test_data" / CORPUS)


def train(corpus: str, dims: Sequence[int], seed: int, epochs: int, min_count: int) -> tuple[list[str], dict[str, np.ndarray]]:
    """(the shared vocabulary in frequency order, {"d": its vectors}) of one word2vec (CBOW, window 5) per dimension,
    one worker so that the seed fixes it."""
    require_gensim()
    from gensim.models import Word2Vec
    from gensim.utils import simple_preprocess

    with open(corpus, encoding="utf-8") as f:
        sentences = [simple_preprocess(line) for line in f]
    out, words = {}, None
    for d in dims:
        m = Word2Vec(sentences, vector_size=int(d), min_count=min_count, epochs=epochs, workers=1, seed=seed)
        if words is None:
            words = list(m.wv.index_to_key)
        out[str(d)] = np.stack([m.wv[w] for w in words]).astype(np.float32)
    assert words is not None
    return words, out


def pip_loss(a: np.ndarray, b: np.ndarray, rng: np.random.Generator | None = None) -> float:
    """Normalised PIP loss ‖P_a/‖P_a‖ − P_b/‖P_b‖‖_F of the same rows, P = E Eᵀ (rows aligned, dimensions free)."""
    pa, pb = (np.asarray(e, np.float64) @ np.asarray(e, np.float64).T for e in (a, b))
    return float(np.linalg.norm(pa / np.linalg.norm(pa) - pb / np.linalg.norm(pb)))


pip_loss.any_dims = True  # type: ignore[attr-defined]


def measure(sets: Mapping[str, np.ndarray], runs: int, sample_size: int, seed: int,
            imd_options: Mapping[str, Any]) -> pd.DataFrame:
    """runs.csv: per run and pair of dimensions, IMD and the normalised PIP loss on the same words."""
    from ganeval.studies.manifold_pairs import pairwise_rows

    return pairwise_rows(sets, runs, sample_size, seed, imd_options, {"pip": pip_loss}, aligned=True)


def _pair(rows: pd.DataFrame, metric: str, a: int, b: int) -> np.ndarray:
    g = rows[(rows.metric == metric) & (((rows.a == str(a)) & (rows.b == str(b))) | ((rows.a == str(b)) & (rows.b == str(a))))]
    return g.sort_values("run")["value"].to_numpy(float)


def closer_claim(rows: pd.DataFrame, metric: str, confidence: float) -> Any:
    """"Closer dimensionalities have lower distance scores": Spearman ρ per run between |log2 da − log2 db| and the
    metric over every pair, its Student-t interval over runs against MODERATE."""
    from scipy.stats import spearmanr

    from ganeval.results import t_interval
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, Claim, vs_paper

    g = rows[rows.metric == metric]
    rho = []
    for _, r in g.groupby("run"):
        gap = np.abs(np.log2(r.a.astype(float)) - np.log2(r.b.astype(float)))
        rho.append(float(spearmanr(gap, r.value).statistic))
    iv = t_interval(rho, confidence)
    v = HOLDS if iv["ci_low"] > MODERATE else CONTRADICTED if iv["ci_high"] < MODERATE else NOT_TESTABLE
    return Claim(
        f"{metric.upper()}: closer dimensions are closer (stand-in corpus)",
        "Closer dimensionalities have lower distance scores for both metrics", v,
        f"Spearman ρ between |log2 da − log2 db| and {metric.upper()} over the {g.groupby(['a', 'b']).ngroups} pairs "
        f"of dimensions, per run; its Student-t interval over {len(rho)} runs against {MODERATE:g}",
        f"ρ above {MODERATE:g} (a moderate monotone relation)",
        vs_paper(v),
        f"ρ = {iv['mean']:.3f} [{iv['ci_low']:.3f}, {iv['ci_high']:.3f}]",
        detectable="" if v != NOT_TESTABLE else f"an interval half-width below {abs(iv['mean'] - MODERATE):.2g} "
        f"(measured {iv['half_width']:.2g})")


def separation_claims(rows: pd.DataFrame, confidence: float) -> list[Any]:
    """"4 and 8 are clearly closer than 4 and 16 in IMD, which is not true for PIP": per run the difference
    metric(4,16) − metric(4,8); IMD by a paired t-test (holds: significantly positive), PIP by its relative
    difference against ±SAME (holds: within it, i.e. PIP does not separate; contradicted: beyond +SAME)."""
    from scipy import stats

    from ganeval.results import t_interval
    from ganeval.results.power import paired_t_mde
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, Claim, vs_paper

    d_imd = _pair(rows, "imd", 4, 16) - _pair(rows, "imd", 4, 8)
    iv = t_interval(d_imd, confidence)
    p = float(stats.ttest_1samp(d_imd, 0.0, alternative="greater").pvalue) if np.std(d_imd) > 0 else \
        (0.0 if d_imd.mean() > 0 else 1.0)
    v = HOLDS if iv["ci_low"] > 0 else CONTRADICTED if iv["ci_high"] < 0 else NOT_TESTABLE
    mde = paired_t_mde(float(np.std(d_imd, ddof=1)), len(d_imd), confidence)
    imd_claim = Claim(
        "IMD: 4-vs-8 closer than 4-vs-16 (stand-in corpus)",
        "word vectors of size 4 and 8 are clearly closer to each other than embeddings of size 4 and 16 in terms of "
        "IMD", v, f"paired one-sided t-test over {len(d_imd)} runs of IMD(4,16) − IMD(4,8)", "any positive difference",
        vs_paper(v),
        f"IMD(4,16) − IMD(4,8) = {iv['mean']:.4g} [{iv['ci_low']:.4g}, {iv['ci_high']:.4g}]; IMD(4,8) = "
        f"{_pair(rows, 'imd', 4, 8).mean():.4g}", p_value=p, detectable=f"a difference of {mde:.3g}")
    base = _pair(rows, "pip", 4, 8)
    rel = (_pair(rows, "pip", 4, 16) - base) / base
    ir = t_interval(rel, confidence)
    v = HOLDS if -SAME < ir["ci_low"] and ir["ci_high"] < SAME else CONTRADICTED if ir["ci_low"] > SAME else NOT_TESTABLE
    pip_claim = Claim(
        "PIP: 4-vs-8 not clearly closer than 4-vs-16 (stand-in corpus)",
        "[4 and 8 closer than 4 and 16] is not true for PIP", v,
        f"relative difference (PIP(4,16) − PIP(4,8)) / PIP(4,8) per run; its Student-t interval over {len(rel)} runs "
        f"against ±{SAME:g}", f"within ±{100 * SAME:g} % (PIP does not separate them)",
        vs_paper(v),
        f"{100 * ir['mean']:+.2f} % [{100 * ir['ci_low']:+.2f}, {100 * ir['ci_high']:+.2f}] %; PIP(4,8) = "
        f"{base.mean():.4g}",
        detectable="" if v != NOT_TESTABLE else f"an interval half-width below "
        f"{100 * max(SAME - abs(ir['mean']), 0):.2g} % (measured {100 * ir['half_width']:.2g} %)")
    return [imd_claim, pip_claim]


def decide(rows: pd.DataFrame, confidence: float) -> list[Any]:
    """Every claim of the section, the tests among them Holm-corrected together."""
    from ganeval.results.verdicts import holm

    claims = [closer_claim(rows, "imd", confidence), closer_claim(rows, "pip", confidence)]
    have = set(rows.a) | set(rows.b)
    if {"4", "8", "16"} <= have:
        claims += separation_claims(rows, confidence)
    return holm(claims, confidence)


def summary_frame(rows: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """summary.csv: per pair and metric, the mean and Student-t interval over runs."""
    from ganeval.results import t_interval

    out = [{"a": a, "b": b, "metric": m, **t_interval(g["value"].to_numpy(), confidence)}
           for (a, b, m), g in rows.groupby(["a", "b", "metric"], sort=False)]
    return pd.DataFrame(out)


def verdict_text(claims: list[Any], summary: pd.DataFrame, config: Mapping[str, Any], confidence: float) -> str:
    """verdict.md: the claims' sentences, the protocol, the claims table and the two matrices (means)."""
    from ganeval.results.verdict import claim_sentences, percent, verdict_markdown
    from ganeval.results.verdicts import claims_table

    dims = [str(d) for d in config["dims"]]
    lines = []
    for m in dict.fromkeys(summary.metric):
        g = summary[summary.metric == m].set_index(["a", "b"])["mean"]
        lines += ["", f"{m.upper()} (mean over runs):", "", "| | " + " | ".join(dims) + " |", "|---" * (len(dims) + 1) + "|"]
        for a in dims:
            cells = ["0" if a == b else f"{g.get((a, b), g.get((b, a), float('nan'))):.4g}" for b in dims]
            lines.append(f"| **{a}** | " + " | ".join(cells) + " |")
    body = [f"Protocol: word2vec (gensim, CBOW, window 5, min_count {config['min_count']}, {config['epochs']} epochs, "
            f"seed {config['seed']}, one worker) of dimensions {', '.join(dims)} trained on `{config['corpus_name']}` "
            f"({config['vocabulary']} words kept) — a stand-in for the paper's English Wikipedia: English prose, the "
            "same tool, 10⁴ times fewer tokens. Each of "
            f"{config['runs']} runs scores the same {config['sample_size']} words (drawn per run) of every embedding: "
            f"IMD (k = {config['imd']['k']}, m = {config['imd']['m']}, nv = {config['imd']['nv']}) from each "
            "embedding's heat trace, and the normalised PIP loss ‖P_a/‖P_a‖ − P_b/‖P_b‖‖_F, P = EEᵀ. The intervals "
            f"({percent(confidence)}) are over word subsamples of one trained embedding per dimension: the variation "
            "over training seeds is not in them.", "", claims_table(claims, confidence).rstrip("\n"), *lines]
    return verdict_markdown(claim_sentences(claims, confidence, rule=True),
                            "Dimensionality of word embeddings: verdict", "\n".join(body))


def write(out: str | Path, rows: pd.DataFrame, config: Mapping[str, Any]) -> list[Any]:
    """The derived files of stored runs: summary.csv, summary.json (config and claims), verdict.md; the claims."""
    from ganeval.common import atomic_write_text
    from ganeval.results import write_csv

    out, conf = Path(out), float(config["confidence"])
    claims = decide(rows, conf)
    summary = summary_frame(rows, conf)
    write_csv(summary, out / "summary.csv")
    write_claims_record(out, config, claims)
    atomic_write_text(out / "verdict.md", verdict_text(claims, summary, config, conf))
    return claims


def plot(rows: pd.DataFrame, dims: Sequence[int], path: str | Path) -> Path:
    """The paper's figure: IMD and PIP heatmaps over the pairs of dimensions."""
    from ganeval.studies.manifold_pairs import matrices, plot_heatmaps

    names = [str(d) for d in dims]
    return plot_heatmaps(matrices(rows, names), names, path, "Word2vec embeddings of different dimension")


def run(plan: Any) -> pd.DataFrame:
    """Train the embeddings, score every pair of dimensions over runs, write runs.csv, the derived files and the
    figure."""
    from ganeval.results import write_csv

    cfg, s = plan.params, plan.settings
    require_gensim()
    corpus = corpus_path(cfg.get("corpus"))
    dims = check(list(cfg.dims), corpus)
    if "imd" not in s.metrics:
        raise ValueError("wordvec_dims needs metrics.imd (its k, m, nv options)")
    imd_options = dict(s.metrics["imd"])
    with plan.stage("train"):
        words, sets = train(corpus, dims, s.seed, int(cfg.epochs), int(cfg.min_count))
    if len(words) < s.sample_size:
        raise ValueError(f"the corpus keeps {len(words)} words, fewer than sample_size={s.sample_size}")
    with plan.stage("runs"):
        rows = measure(sets, s.runs, s.sample_size, s.seed, imd_options)
    write_csv(rows, plan.results_dir / "runs.csv")
    config = {"dims": dims, "corpus_name": Path(corpus).name, "vocabulary": len(words), "epochs": int(cfg.epochs),
              "min_count": int(cfg.min_count), "runs": s.runs, "sample_size": s.sample_size, "seed": s.seed,
              "confidence": s.confidence, "imd": {k: imd_options[k] for k in ("k", "m", "nv", "normalization")},
              "command": shown_command(plan)}
    write(plan.results_dir, rows, config)
    if plan.options.plots:
        plot(rows, dims, plan.results_dir / "wordvec_dims.png")
    return rows


def regenerate(src: Any, out: Any) -> None:
    """Make the stored result's derived files again from its runs.csv and the config in its summary.json."""
    config = json.loads((Path(src) / "summary.json").read_text())["config"]
    write(out, pd.read_csv(Path(src) / "runs.csv", dtype={"a": str, "b": str}), config)
