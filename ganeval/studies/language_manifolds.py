"""The paper's "Comparing Unaligned Language Manifolds": pairwise IMD between languages' word vectors given as files
(fastText/word2vec `.vec`/`.bin`, read by `ganeval.data.wordvectors`), FID and KID where the dimensions agree (the
appendix's figure), the heatmaps and an average-linkage clustering of the languages by IMD.

The claim ("IMD detects similar languages ... FID and KID are not able to") needs the paper's 16 Wikipedia
word2vec models and a ground truth of language families; with no vector files its verdict is "not testable here"
naming them. With files and `families` (language -> family) the rule is: the clustering by IMD cut into as many
clusters as there are families recovers them (adjusted Rand index above `RECOVERED`, across its declared range), and
so for FID and KID. `demonstration` (a sentence saying what the files are) marks a run on made-up files, such as
`planted_families` writes: its claims are labelled a demonstration and the paper's claim reads *not tested: stand-in
data* (`scripts/language_manifolds_demo.py` makes the committed reference so).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ganeval.results.thresholds import OURS, Threshold
from ganeval.studies.manifold_pairs import shown_command
from ganeval.studies.stored import write_claims_record

INPUTS: tuple[str, ...] = ()  # the vector files are named by `languages`, read here
OUTPUTS = ("runs.csv", "summary.csv", "summary.json", "verdict.md", "language_manifolds.png", "report.html")
RECOVERED = Threshold("adjusted Rand index above", 0.8, 0.6, 0.95,
                      f"{OURS}: the paper's \"detects similar languages\" gives no size; an ARI of 0.6–0.95 is where a "
                      "clustering \"recovers\" the families is arguable (1: exactly, 0: chance)")
PLANTED = (("ring", 3), ("blob", 3), ("roll", 3))  # the demonstration's families and languages per family
MISSING = ("word2vec vectors of the paper's 16 Wikipedias (pl, ru, el, hu, tr, ar, he, en, simple, sv, de, es, nl, pt, "
           "vi, war) as files: languages={NAME: FILE.vec, ...} with families={NAME: FAMILY, ...}")


def check(languages: Mapping[str, str], families: Mapping[str, str], vocab: int, sample_size: int) -> None:
    """Names, files and sizes before any reading: every language a file, every family a known language, vocab ≥
    sample_size."""
    for name, path in languages.items():
        if not Path(str(path)).is_file():
            raise ValueError(f"languages.{name}: {path} does not exist or is not a file")
    extra = sorted(set(families) - set(languages))
    if extra:
        raise ValueError(f"families names languages not given in languages: {extra}")
    if int(vocab) < int(sample_size):
        raise ValueError(f"vocab={vocab} is fewer than sample_size={sample_size} words: raise vocab or lower sample_size")


def load(languages: Mapping[str, str], vocab: int) -> dict[str, np.ndarray]:
    """Each language's `vocab` most frequent vectors; a file with fewer words is refused (by the reader) in one line."""
    from ganeval.data.wordvectors import read_word_vectors

    return {str(n): read_word_vectors(str(p), vocab=int(vocab)).vectors for n, p in languages.items()}


def _fid(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> float:
    from ganeval.metrics import fid

    return float(fid(a, b))


def _kid(subset_size: int) -> Any:
    def kid_mean(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> float:
        from ganeval.metrics import kid

        return float(kid(a, b, subset_size=min(subset_size, len(a), len(b)), seed=rng)[0])

    return kid_mean


def measure(sets: Mapping[str, np.ndarray], runs: int, sample_size: int, seed: int, imd_options: Mapping[str, Any],
            kid_subset: int = 1000) -> pd.DataFrame:
    """runs.csv: per run and pair of languages, IMD, and FID and KID where the two dimensions agree."""
    from ganeval.studies.manifold_pairs import pairwise_rows

    return pairwise_rows(sets, runs, sample_size, seed, imd_options, {"fid": _fid, "kid": _kid(kid_subset)})


def clusters(mat: np.ndarray, n: int) -> np.ndarray:
    """Average-linkage clustering of a distance matrix, cut into `n` clusters: a label per row."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    d = np.nan_to_num(np.maximum(mat, mat.T), nan=np.nanmax(mat) if np.isfinite(mat).any() else 1.0)
    np.fill_diagonal(d, 0.0)
    return fcluster(linkage(squareform(d, checks=False), method="average"), n, criterion="maxclust")


def recovered_label(ari: float, want: bool, tau: float) -> str:
    """holds when the clustering recovers the families (ARI above τ) as the paper says it should (`want`: IMD does,
    FID and KID do not), else contradicted."""
    from ganeval.results.verdicts import CONTRADICTED, HOLDS

    return HOLDS if (ari > tau) == want else CONTRADICTED


def decide(rows: pd.DataFrame | None, names: list[str], families: Mapping[str, str], confidence: float,
           demonstration: str = "") -> list[Any]:
    """Per metric: does its clustering recover the families (adjusted Rand index above `RECOVERED`, across its declared
    range)? No files: not testable here, naming what is missing. A `demonstration` run's claims say so, and the paper's
    claim reads *not tested: stand-in data*."""
    from sklearn.metrics import adjusted_rand_score

    from ganeval.results.thresholds import across
    from ganeval.results.verdicts import NO_COMPARISON, NOT_TESTABLE, STAND_IN, Claim, vs_paper
    from ganeval.studies.manifold_pairs import matrices

    statement = ("IMD detects similar languages (Slavic, Semitic, Romanic, etc.) despite the lack of ground truth "
                 "vocabulary alignment; FID and KID are not able to")
    if rows is None or not len(rows) or not families:
        return [Claim("IMD recovers language families", statement, NOT_TESTABLE,
                      "average-linkage clustering of the mean IMD matrix vs the given families (adjusted Rand index)",
                      RECOVERED.text(), NO_COMPARISON, "no word-vector files here",
                      detectable=f"nothing: missing {MISSING}")]
    mats = matrices(rows, names)
    truth = [families.get(n, n) for n in names]
    k = len(set(truth))
    suffix = " (demonstration: planted families)" if demonstration else ""
    claims = []
    for m, mat in mats.items():
        if np.isnan(mat).any():
            continue
        ari = float(adjusted_rand_score(truth, clusters(mat, k)))
        want = m == "imd"  # the paper: IMD recovers them, FID and KID do not
        res = across(partial(recovered_label, ari, want), RECOVERED)
        v = res.verdict
        claims.append(Claim(
            f"{m.upper()} {'recovers' if want else 'does not recover'} the language families{suffix}",
            statement, v, f"average-linkage clustering of the mean {m.upper()} matrix over {rows.run.nunique()} runs, "
            f"cut into {k} clusters, against the given families: adjusted Rand index "
            f"{'above' if want else 'at or below'} the threshold", RECOVERED.text(), vs_paper(v), f"ARI = {ari:.3f}",
            across=res.text()))
    if demonstration:
        claims.append(Claim("IMD recovers the 16 Wikipedias' language families; FID and KID do not", statement,
                            STAND_IN, "none: the paper's word vectors are not run", "the paper's setting (word2vec of "
                            "16 Wikipedias)", NO_COMPARISON, f"{demonstration}: " + "; ".join(
                                f"{c.name.split(' (demonstration')[0]}: {c.label()}" for c in claims)))
    return claims


def write_vec(path: Path, name: str, vectors: np.ndarray) -> Path:
    """A word2vec text file of `vectors`, the words named name0, name1, … (the header: rows and dimension)."""
    from ganeval.common import atomic_write_text

    lines = [f"{len(vectors)} {vectors.shape[1]}"] + [f"{name}{i} " + " ".join(f"{v:.6f}" for v in row)
                                                      for i, row in enumerate(vectors)]
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def planted_families(folder: str | Path, n: int = 1200, dim: int = 50, seed: int = 0) -> tuple[dict[str, Path],
                                                                                              dict[str, str]]:
    """Word-vector files (`.vec`) of made-up languages in three planted families (`PLANTED`): a noisy ring, an 8-d
    Gaussian blob and a swiss roll, each language its own draw under its own random rotation into `dim` dimensions
    and its own scale, so no two share coordinates and FID and KID see rotated covariances. Returns ({language:
    file}, {language: family})."""
    rng = np.random.default_rng(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files, fams = {}, {}
    for fam, count in PLANTED:
        for i in range(count):
            if fam == "ring":
                a = rng.uniform(0, 2 * np.pi, n)
                core = np.c_[np.cos(a), np.sin(a), rng.normal(0, 0.05, (n, 6))]
            elif fam == "blob":
                core = rng.standard_normal((n, 8)) / np.sqrt(8)
            else:
                u = rng.uniform(1.5 * np.pi, 4.5 * np.pi, n)
                core = np.c_[u * np.cos(u) / 10, rng.uniform(0, 2, n), u * np.sin(u) / 10, rng.normal(0, 0.05, (n, 5))]
            q, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
            vec = (np.c_[core, np.zeros((n, dim - core.shape[1]))] @ q) * rng.uniform(0.5, 2.0)
            name = f"{fam}_{'abc'[i]}"
            files[name] = write_vec(folder / f"{name}.vec", name, vec)
            fams[name] = fam
    return files, fams


def write(out: str | Path, rows: pd.DataFrame | None, config: Mapping[str, Any]) -> list[Any]:
    """summary.csv (per pair and metric, where there are runs), summary.json (config and claims), verdict.md."""
    from ganeval.common import atomic_write_text
    from ganeval.results import write_csv
    from ganeval.results.verdict import claim_sentences, percent, verdict_markdown
    from ganeval.results.verdicts import claims_table
    from ganeval.studies.wordvec_dims import summary_frame

    out, conf = Path(out), float(config["confidence"])
    names = list(config["languages"])
    claims = decide(rows, names, config.get("families") or {}, conf, str(config.get("demonstration") or ""))
    body = [f"Protocol: {len(names)} languages ({', '.join(names) or 'none given'}), the {config['vocab']} most "
            f"frequent words of each file, {config['runs']} runs of {config['sample_size']} words per language; IMD "
            f"(k = {config['imd']['k']}, m = {config['imd']['m']}, nv = {config['imd']['nv']}"
            + (f", control variate {config['imd']['variance_reduction']}" if "variance_reduction" in config["imd"] else "")
            + ") for every pair, FID and "
            f"KID where the dimensions agree; {percent(conf)} intervals in summary.csv."
            + (f" **A demonstration, not the paper's data**: {config['demonstration']}." if config.get("demonstration")
               else ""), ""]
    if rows is not None and len(rows):
        summary = summary_frame(rows, conf)
        write_csv(summary, out / "summary.csv")
        from ganeval.studies.manifold_pairs import matrices

        k = len(set((config.get("families") or {}).get(n, n) for n in names))
        for m, mat in matrices(rows, names).items():
            if not np.isnan(mat).any():
                body.append(f"{m.upper()} clusters ({k}): " + ", ".join(
                    f"{n} {c}" for n, c in zip(names, clusters(mat, k))))
        body.append("")
    else:
        body += [f"Missing here: {MISSING}.", ""]
    body.append(claims_table(claims, conf).rstrip("\n"))
    write_claims_record(out, config, claims)
    atomic_write_text(out / "verdict.md", verdict_markdown(claim_sentences(claims, conf, rule=True),
                                                           "Unaligned language manifolds: verdict", "\n".join(body)))
    return claims


def mapping(value: Any) -> dict[Any, Any]:
    """A config node given as a mapping (languages, families); anything else refused in one line."""
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping name -> value, got {value!r}")
    return value


def run(plan: Any) -> pd.DataFrame:
    """Check the files, read them, score every pair of languages over runs, write runs.csv, the derived files, the
    heatmaps; with no files, the verdict naming what is missing."""
    from omegaconf import OmegaConf

    from ganeval.results import write_csv

    cfg, s = plan.params, plan.settings
    given = {key: mapping(OmegaConf.to_container(cfg[key]) if cfg.get(key) else {}) for key in ("languages", "families")}
    languages = {str(k): str(v) for k, v in given["languages"].items()}
    families = {str(k): str(v) for k, v in given["families"].items()}
    check(languages, families, int(cfg.vocab), s.sample_size)
    if len(languages) == 1:
        raise ValueError("languages names one file: pairwise distances need at least two")
    if "imd" not in s.metrics:
        raise ValueError("language_manifolds needs metrics.imd (its k, m, nv options)")
    imd_options = dict(s.metrics["imd"])
    with plan.stage("read vectors"):
        sets = load(languages, int(cfg.vocab))
    rows = None
    if sets:
        with plan.stage("runs"):
            rows = measure(sets, s.runs, s.sample_size, s.seed, imd_options, int(cfg.kid_subset))
        write_csv(rows, plan.results_dir / "runs.csv")
    config = {"languages": {n: Path(p).name for n, p in languages.items()}, "families": families,
              "vocab": int(cfg.vocab), "runs": s.runs, "sample_size": s.sample_size, "seed": s.seed,
              "confidence": s.confidence, "kid_subset": int(cfg.kid_subset),
              "imd": {k: imd_options[k] for k in ("k", "m", "nv", "normalization", "variance_reduction")}, "command": shown_command(plan)}
    if cfg.get("demonstration"):
        config["demonstration"] = str(cfg.demonstration)
    write(plan.results_dir, rows, config)
    if rows is not None and plan.options.plots:
        from ganeval.studies.manifold_pairs import matrices, plot_heatmaps

        names = list(languages)
        plot_heatmaps(matrices(rows, names), names, plan.results_dir / "language_manifolds.png",
                      "Pairwise distances between languages" + (" (a demonstration on planted families)"
                                                                 if cfg.get("demonstration") else ""))
    return rows if rows is not None else pd.DataFrame()


def regenerate(src: Any, out: Any) -> None:
    """Make the stored result's derived files again from its runs.csv (if any) and the config in its summary.json."""
    config = json.loads((Path(src) / "summary.json").read_text())["config"]
    runs = Path(src) / "runs.csv"
    write(out, pd.read_csv(runs, dtype={"a": str, "b": str}) if runs.exists() else None, config)
