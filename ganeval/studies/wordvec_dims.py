"""The paper's "Optimizing Dimensionality of Word Embeddings": word2vec embeddings of dimensions 4..512 (powers of 2)
trained on one corpus, IMD between every pair of dimensions beside the normalised PIP loss (Yin & Shen's pairwise
inner product loss of the same words, each PIP matrix scaled to unit Frobenius norm: the paper's "covariance error").

Offline the corpus is gensim's own test corpus `lee_background.cor` (300 Australian news articles, 58k tokens; the
paper: English Wikipedia): English prose trained with the same tool, so the embeddings differ from the paper's in
scale only. Every dimension is trained from each of `train_seeds` (word2vec's own seed): a claim is decided across
those seeds (its statistic's mean over runs per seed, a Student-t interval over seeds), and its label per seed shows
whether it survives a retrain. Run r scores the same `sample_size` words (one draw per run, aligned: PIP needs the
same rows) of every embedding. Needs gensim (`pip install ganeval[wordvec]`). `regenerate` remakes summary.csv,
summary.json and verdict.md from runs.csv.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ganeval.results.power import one_sided_mde
from ganeval.results.thresholds import OURS, Threshold
from ganeval.results.verdicts import one_sided_p, sign_label
from ganeval.studies.manifold_pairs import shown_command
from ganeval.studies.stored import write_claims_record

INPUTS: tuple[str, ...] = ()  # no data node: the corpus is gensim's
OUTPUTS = ("runs.csv", "summary.csv", "summary.json", "verdict.md", "wordvec_dims.png", "report.html")
CORPUS = "lee_background.cor"
EXTRA = "wordvec"
SEED = "train_seed"  # runs.csv's column naming the embeddings' training seed
STRONG = Threshold("Spearman ρ above", 0.5, 0.3, 0.7,
                   f"{OURS}: the paper's \"Closer dimensionalities have lower distance scores\" gives no strength; its "
                   "literal reading is ρ > 0 (tested separately), 0.3–0.7 the weak-to-strong monotone relations a reader "
                   "might mean", digits=3)
CLEARLY = Threshold("relative separation (M(4,16) − M(4,8)) / M(4,8) above", 0.1, 0.05, 0.25,
                    f"{OURS}: the paper's \"clearly closer ... which is not true for PIP\" gives no size; a separation "
                    "of 5–25 % of the distance is where \"clearly\" is arguable", unit=" %", scale=100.0)


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


def _pair(rows: pd.DataFrame, metric: str, a: int, b: int) -> pd.Series:
    """The metric of the pair (a, b) per (training seed, run), in that order."""
    g = rows[(rows.metric == metric) & (((rows.a == str(a)) & (rows.b == str(b))) | ((rows.a == str(b)) & (rows.b == str(a))))]
    return g.set_index([SEED, "run"])["value"].sort_index()


def with_seed(rows: pd.DataFrame) -> pd.DataFrame:
    """runs.csv's rows with a training-seed column (a run made before seeds were recorded: seed 0 throughout)."""
    return rows if SEED in rows.columns else rows.assign(**{SEED: 0})


def units(values: pd.Series) -> tuple[np.ndarray, str]:
    """The values a claim is decided on: per training seed the mean over its runs (with several seeds: a retrain is
    the unit), else the runs themselves; and the unit's name."""
    seeds = values.index.get_level_values(SEED)
    if len(set(seeds)) > 1:
        return values.groupby(level=SEED).mean().to_numpy(float), "training seeds"
    return values.to_numpy(float), "runs"


def rho_per_run(rows: pd.DataFrame, metric: str) -> pd.Series:
    """Spearman ρ between |log2 da − log2 db| and the metric over every pair of dimensions, per (seed, run)."""
    from scipy.stats import spearmanr

    out = {}
    for key, r in rows[rows.metric == metric].groupby([SEED, "run"]):
        gap = np.abs(np.log2(r.a.astype(float)) - np.log2(r.b.astype(float)))
        out[key] = float(spearmanr(gap, r.value).statistic)
    return pd.Series(out).rename_axis([SEED, "run"]).sort_index()


def per_seed(values: pd.Series, label: Any) -> str:
    """The label `label(values of one seed's runs)` gives at each training seed: "holds at 5 of 5 seeds" or the
    labels by seed; '' with one seed."""
    seeds = sorted(set(values.index.get_level_values(SEED)))
    if len(seeds) < 2:
        return ""
    got = [label(values.xs(s, level=SEED).to_numpy(float)) for s in seeds]
    if len(set(got)) == 1:
        return f"per training seed (intervals over its runs): {got[0]} at {len(seeds)} of {len(seeds)} seeds"
    return "per training seed (intervals over its runs): " + ", ".join(f"seed {s} {g}" for s, g in zip(seeds, got))


def plain(v: float) -> str:
    """A statistic as shown: three significant digits, a true minus sign."""
    return f"{v:.3g}".replace("-", "−")


def percent_of(v: float) -> str:
    """A relative difference as shown: '+1.5 %'."""
    return f"{100 * v:+.1f} %".replace("-", "−")


def sign_claim(name: str, statement: str, values: pd.Series, what: str, threshold: str, confidence: float,
               holm_level: float, shown: Callable[[float], str] = plain, flip: bool = False) -> Any:
    """A claim that a statistic lies above 0 (with `flip`: that it does not, the paper's "not true for PIP"):
    one-sided t across units, p into Holm; the smallest detectable effect at the family's Holm level."""
    from ganeval.results import t_interval
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, Claim, vs_paper

    x, unit = units(values)
    v, p = sign_label(x, confidence)
    if flip and v in (HOLDS, CONTRADICTED):
        v = CONTRADICTED if v == HOLDS else HOLDS
    iv = t_interval(x, confidence)
    seeds = per_seed(values, lambda y: (lambda lab: lab if not flip or lab not in (HOLDS, CONTRADICTED) else
                                        CONTRADICTED if lab == HOLDS else HOLDS)(sign_label(y, confidence)[0]))
    return Claim(name, statement, v, f"{what}; one-sided t over {len(x)} {unit} "
                 + ("(contradicted when it lies above 0, holds when below)" if flip else "that it lies above 0"),
                 threshold, vs_paper(v),
                 "; ".join(filter(None, [f"{shown(iv['mean'])} [{shown(iv['ci_low'])}, {shown(iv['ci_high'])}] over "
                                         f"{unit}", seeds])), p_value=p,
                 detectable=f"{one_sided_mde(float(np.std(x, ddof=1)), len(x), 1 - holm_level):.3g} (one-sided)")


def across_claim(name: str, statement: str, values: pd.Series, what: str, threshold: Threshold, side: str,
                 confidence: float, shown: Callable[[float], str] = plain) -> Any:
    """A claim that a statistic lies above (or below) a practical threshold: its Student-t interval across units
    against each threshold of the declared range (`ganeval.results.thresholds.across`)."""
    from ganeval.results import t_interval
    from ganeval.results.thresholds import across, interval_label
    from ganeval.results.verdicts import NOT_TESTABLE, Claim, vs_paper

    x, unit = units(values)
    iv = t_interval(x, confidence)
    res = across(lambda tau: interval_label(iv["ci_low"], iv["ci_high"], tau, side), threshold)
    v = res.verdict
    seeds = per_seed(values, lambda y: interval_label(*(lambda j: (j["ci_low"], j["ci_high"]))(t_interval(y, confidence)),
                                                      threshold.value, side))
    return Claim(name, statement, v, f"{what}; its Student-t interval over {len(x)} {unit} {side} the threshold",
                 threshold.text(), vs_paper(v),
                 "; ".join(filter(None, [f"{shown(iv['mean'])} [{shown(iv['ci_low'])}, {shown(iv['ci_high'])}] over "
                                         f"{unit}", seeds and seeds + f" (at {threshold.show(threshold.value)})"])),
                 across=res.text(),
                 detectable="" if v != NOT_TESTABLE else f"an interval clear of the threshold (half-width "
                 f"{iv['half_width']:.2g})")


def row_steps(dims: Sequence[str]) -> list[tuple[str, str, str]]:
    """Every step outward in a row of the matrix: (row a, the nearer b, the next one further out on the same side)."""
    out = []
    for i, a in enumerate(dims):
        out += [(a, dims[j], dims[j - 1]) for j in range(i - 1, 0, -1)]
        out += [(a, dims[j], dims[j + 1]) for j in range(i + 1, len(dims) - 1)]
    return out


def monotone_claim(rows: pd.DataFrame, metric: str, dims: Sequence[str], confidence: float) -> Any:
    """The strongest reading of "closer dimensionalities have lower distance scores": in every row of the matrix the
    distance grows at each step away from the diagonal, metric(a, further) − metric(a, nearer) > 0. Holds when every
    step's one-sided t finds a rise (intersection–union: the largest p); contradicted when some step falls (its
    one-sided p, Bonferroni over the steps)."""
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, Claim, vs_paper

    steps = row_steps(dims)
    ps, unit = [], "runs"
    for a, near, far in steps:
        x, unit = units(_pair(rows, metric, int(a), int(far)) - _pair(rows, metric, int(a), int(near)))
        ps.append(one_sided_p(x))
    alpha = 1 - confidence
    up = [p for p, _ in ps]
    down = [min(1.0, q * len(steps)) for _, q in ps]
    v = HOLDS if max(up) <= alpha else CONTRADICTED if min(down) <= alpha else NOT_TESTABLE
    wrong = [f"row {a}: {far} nearer than {near}" for (a, near, far), q in zip(steps, down) if q <= alpha]
    return Claim(f"{metric.upper()}: every row grows away from the diagonal (stand-in corpus)",
                 "Closer dimensionalities have lower distance scores for both metrics", v,
                 f"each of the {len(steps)} steps outward in a row of the matrix, metric(a, further) − metric(a, "
                 f"nearer), over {unit}: holds when every step's one-sided t finds a rise (the largest p), "
                 "contradicted when some step falls (Bonferroni over the steps)",
                 "every step rises (the strongest reading)", vs_paper(v),
                 f"{sum(p <= alpha for p in up)} of {len(steps)} steps rise significantly, {len(wrong)} fall"
                 + (f" ({'; '.join(wrong[:4])}{' …' if len(wrong) > 4 else ''})" if wrong else ""),
                 detectable="" if v != NOT_TESTABLE else "each step clear of 0 (some straddle it)")


def relative(rows: pd.DataFrame, metric: str) -> pd.Series:
    """(M(4,16) − M(4,8)) / M(4,8) per (seed, run)."""
    base = _pair(rows, metric, 4, 8)
    return (_pair(rows, metric, 4, 16) - base) / base


def decide(rows: pd.DataFrame, confidence: float) -> list[Any]:
    """Every claim of the section on the stand-in corpus (the tests among them Holm-corrected together, each smallest
    detectable effect at the family's Holm level), then the paper's claims, each *not tested: stand-in data*."""
    from ganeval.results.verdicts import holm_family

    rows = with_seed(rows)
    dims = sorted(set(rows.a) | set(rows.b), key=int)
    have = {"4", "8", "16"} <= set(dims)

    def build(level: float) -> list[Any]:
        out = []
        for m in ("imd", "pip"):
            rho = rho_per_run(rows, m)
            out.append(sign_claim(f"{m.upper()}: closer dimensions are closer (stand-in corpus)",
                                  "Closer dimensionalities have lower distance scores for both metrics", rho,
                                  f"Spearman ρ between |log2 da − log2 db| and {m.upper()} over the pairs of dimensions, "
                                  "per run", "ρ > 0 (the paper's words give no strength)", confidence, level))
            out.append(across_claim(f"{m.upper()}: closer dimensions are closer, strongly (stand-in corpus)",
                                    "Closer dimensionalities have lower distance scores for both metrics", rho,
                                    f"Spearman ρ between |log2 da − log2 db| and {m.upper()}, per run", STRONG,
                                    "above", confidence))
            out.append(monotone_claim(rows, m, dims, confidence))
        if have:
            out.append(sign_claim("IMD: 4-vs-8 closer than 4-vs-16 (stand-in corpus)",
                                  "word vectors of size 4 and 8 are clearly closer to each other than embeddings of "
                                  "size 4 and 16 in terms of IMD", _pair(rows, "imd", 4, 16) - _pair(rows, "imd", 4, 8),
                                  "IMD(4,16) − IMD(4,8) per run", "any positive difference", confidence, level))
            out.append(sign_claim("PIP: 4-vs-8 not closer than 4-vs-16 (stand-in corpus)",
                                  "[4 and 8 closer than 4 and 16] is not true for PIP",
                                  _pair(rows, "pip", 4, 16) - _pair(rows, "pip", 4, 8),
                                  "PIP(4,16) − PIP(4,8) per run", "any difference (the paper: none in PIP's order)",
                                  confidence, level, flip=True))
            out.append(sign_claim("IMD separates 4-vs-8 from 4-vs-16 more than PIP (stand-in corpus)",
                                  "IMD better highlights gradual change of the size of word vectors", relative(rows, "imd")
                                  - relative(rows, "pip"), "relative separation (M(4,16) − M(4,8)) / M(4,8) of IMD "
                                  "minus PIP's, per run", "any positive difference", confidence, level,
                                  shown=percent_of))
            for m in ("imd", "pip"):
                out.append(across_claim(f"{m.upper()}: 4-vs-8 clearly closer than 4-vs-16 (stand-in corpus)",
                                        "word vectors of size 4 and 8 are clearly closer to each other than embeddings "
                                        "of size 4 and 16 in terms of IMD, which is not true for PIP",
                                        relative(rows, m), f"{m.upper()}'s relative separation per run", CLEARLY,
                                        "above", confidence, shown=percent_of))
        return out

    claims = holm_family(build, confidence)
    return claims + paper_claims(claims)


PAPER_CLAIMS = (  # (the stand-in claims' names start with, the paper's claim)
    (("IMD: closer", "PIP: closer", "IMD: every", "PIP: every"),
     "closer dimensionalities have lower IMD and PIP (English Wikipedia)"),
    (("IMD: 4-vs-8", "PIP: 4-vs-8", "IMD separates"),
     "IMD: 4-vs-8 clearly closer than 4-vs-16, not true for PIP (English Wikipedia)"))


def paper_claims(claims: Sequence[Any]) -> list[Any]:
    """The paper's claims, one per statement: *not tested: stand-in data* (gensim's Lee corpus, not English
    Wikipedia), with the stand-in's labels as their numbers."""
    from ganeval.results.verdicts import NO_COMPARISON, STAND_IN, Claim

    out = []
    for prefixes, name in PAPER_CLAIMS:
        mine = [c for c in claims if c.name.startswith(prefixes)]
        if mine:
            out.append(Claim(name, mine[0].statement, STAND_IN, "none: the paper's corpus is not run",
                             "the paper's setting (word2vec on English Wikipedia)", NO_COMPARISON,
                             "on the Lee corpus stand-in: " + "; ".join(f"{c.name.split(' (stand-in')[0]}: {c.label()}"
                                                                         for c in mine)))
    return out


def summary_frame(rows: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """summary.csv: per pair and metric, the mean and Student-t interval over training seeds (of the per-seed means
    over runs) when there are several, else over runs."""
    from ganeval.results import t_interval

    rows = with_seed(rows)
    out = [{"a": a, "b": b, "metric": m, **t_interval(units(g.set_index([SEED, "run"])["value"])[0], confidence)}
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
        lines += ["", f"{m.upper()} (mean over training seeds and runs):", "", "| | " + " | ".join(dims) + " |", "|---" * (len(dims) + 1) + "|"]
        for a in dims:
            cells = ["0" if a == b else f"{g.get((a, b), g.get((b, a), float('nan'))):.4g}" for b in dims]
            lines.append(f"| **{a}** | " + " | ".join(cells) + " |")
    seeds = [int(x) for x in config.get("train_seeds", [config["seed"]])]
    over = (f"over the {len(seeds)} training seeds (each seed's mean over its runs): they cover retraining the "
            "embeddings and the word subsamples together; each claim's label per seed (intervals over that seed's runs) "
            "says whether it survives a retrain" if len(seeds) > 1 else "over word subsamples of one trained embedding "
                                                                         "per dimension: the variation over training "
                                                                         "seeds is not in them")
    body = [f"Protocol: word2vec (gensim, CBOW, window 5, min_count {config['min_count']}, {config['epochs']} epochs, "
            f"training seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}, one worker) of dimensions "
            f"{', '.join(dims)} trained on `{config['corpus_name']}` "
            f"({config['vocabulary']} words kept) — a stand-in for the paper's English Wikipedia: English prose, the "
            "same tool, 10⁴ times fewer tokens. Each of "
            f"{config['runs']} runs scores the same {config['sample_size']} words (drawn per run with seed "
            f"{config['seed']}, the same words for every training seed) of every embedding: "
            f"IMD (k = {config['imd']['k']}, m = {config['imd']['m']}, nv = {config['imd']['nv']}"
            + (f", control variate {config['imd']['variance_reduction']}" if "variance_reduction" in config["imd"] else "")
            + ") from each "
            "embedding's heat trace, and the normalised PIP loss ‖P_a/‖P_a‖ − P_b/‖P_b‖‖_F, P = EEᵀ. The intervals "
            f"({percent(confidence)}) are {over}. The claims are decided on the stand-in corpus; the paper's own "
            "claims read *not tested: stand-in data*.", "", claims_table(claims, confidence).rstrip("\n"), *lines]
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
    seeds = [int(x) for x in plan.train_seeds or (s.seed,)]  # checked by the app: distinct, non-negative
    parts = []
    for t in seeds:
        with plan.stage(f"train (seed {t})"):
            words, sets = train(corpus, dims, t, int(cfg.epochs), int(cfg.min_count))
        if len(words) < s.sample_size:
            raise ValueError(f"the corpus keeps {len(words)} words, fewer than sample_size={s.sample_size}")
        with plan.stage(f"runs (seed {t})"):
            parts.append(measure(sets, s.runs, s.sample_size, s.seed, imd_options).assign(**{SEED: t}))
    rows = pd.concat(parts, ignore_index=True)
    write_csv(rows, plan.results_dir / "runs.csv")
    config = {"dims": dims, "corpus_name": Path(corpus).name, "vocabulary": len(words), "epochs": int(cfg.epochs),
              "min_count": int(cfg.min_count), "runs": s.runs, "sample_size": s.sample_size, "seed": s.seed,
              "train_seeds": seeds,
              "confidence": s.confidence, "imd": {k: imd_options[k] for k in ("k", "m", "nv", "normalization", "variance_reduction")},
              "command": shown_command(plan)}
    write(plan.results_dir, rows, config)
    if plan.options.plots:
        plot(rows, dims, plan.results_dir / "wordvec_dims.png")
    return rows


def regenerate(src: Any, out: Any) -> None:
    """Make the stored result's derived files again from its runs.csv and the config in its summary.json."""
    config = json.loads((Path(src) / "summary.json").read_text())["config"]
    write(out, pd.read_csv(Path(src) / "runs.csv", dtype={"a": str, "b": str}), config)
