"""experiment=paper_table: the paper's Table 1 typed right, the comparison beside ours (overlap per cell, ordering
verdicts from the interval of the paired difference), the real-format dataset readers, and the experiment end to
end on real-format files made offline with a random-weight Inception loaded through the real loading path."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ganeval.results.verdicts import holm_adjust
import pytest

from apphelp import run_inprocess
from ganeval import data
from ganeval.studies import paper_table as pt
from ganeval.studies.paper_numbers import PAPER_DATASETS, PAPER_METRICS, PAPER_MODELS, PAPER_TABLE, paper_better
from ganeval.results import compare_runs, summarize_runs
from realformat import write_celeba, write_cifar10, write_mnist

ROOT = Path(__file__).resolve().parents[1]
EXCERPT = Path(__file__).parent / "data" / "paper_tab_gans.tex"
FULL_PAPER = ROOT.parent / "shared" / "paper" / "imd-paper.tex"  # the project's copy, where this checkout has it
EXCERPT_LINES = (743, 791)


# --------------------------------------------------------------------------- the paper's numbers
def parse_tab_gans(tex: str) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(dataset, model, metric) -> (mean, half-width) of every cell of the tabular labelled tab:gans."""
    body = tex[tex.index(r"\label{tab:gans}"):]
    body = body[: body.index(r"\end{tabularx}")]
    heads = re.findall(r"\\multicolumn\{2\}\{c\}\{\\textbf\{([^}]*)\}\}", body)
    names = {v: k for k, v in PAPER_DATASETS.items()}
    columns = [(names[h], m) for h in heads for m in PAPER_MODELS]
    rows = {"imd": r"\mbox{\thiswork}", "kid": r"\mbox{KID $\times 10^3$}", "fid": r"\mbox{FID}"}
    out = {}
    for metric, start in rows.items():
        row = body[body.index(start):]
        row = row[: row.index(r"\\")]
        cells = re.findall(r"\\mathbf\{\s*([0-9.]+)\}\s*\\pm\s*([0-9.]+)", row)
        assert len(cells) == len(columns) == 8, (metric, cells)
        for (d, m), (mean, half) in zip(columns, cells):
            out[(d, m, metric)] = (float(mean), float(half))
    return out


def test_paper_numbers_are_the_tex_table() -> None:
    parsed = parse_tab_gans(EXCERPT.read_text())
    assert set(parsed) == set(PAPER_TABLE) and len(parsed) == 24
    for key, (mean, half) in parsed.items():
        assert (PAPER_TABLE[key].mean, PAPER_TABLE[key].half_width) == (mean, half), key


def test_the_excerpt_is_the_papers_text_and_the_table_is_table_1() -> None:
    if not FULL_PAPER.is_file():
        pytest.skip(f"the full paper is not at {FULL_PAPER}")
    paper = FULL_PAPER.read_text()
    lines = paper.splitlines(keepends=True)
    excerpt = [ln for ln in EXCERPT.read_text().splitlines(keepends=True) if not ln.startswith("% ")]
    assert excerpt == lines[EXCERPT_LINES[0] - 1 : EXCERPT_LINES[1]]
    assert parse_tab_gans(paper) == parse_tab_gans(EXCERPT.read_text())
    # LaTeX numbers tables by their order: tab:gans is in the first (and only) table environment -> Table 1
    before = paper[: paper.index(r"\label{tab:gans}")]
    assert len(re.findall(r"\\begin\{table\*?\}", before)) == 1
    assert not re.search(r"\\begin\{table", paper[len(before):])
    assert "Table 2" not in (ROOT / "ganeval" / "configs" / "experiment" / "paper_table.yaml").read_text()


def test_the_paper_ranks_wgan_gp_better_everywhere() -> None:
    assert {paper_better(d, m) for d in PAPER_DATASETS for m in PAPER_METRICS} == {"wgan_gp"}


# --------------------------------------------------------------------------- comparison and verdicts
def _rows(values: dict[tuple[str, str, str], np.ndarray]) -> pd.DataFrame:
    """Long-form per-run rows from (data, model, metric) -> one value per run."""
    return pd.DataFrame([{"data": d, "model": m, "metric": k, "run": r, "value": float(v)}
                         for (d, m, k), vals in values.items() for r, v in enumerate(vals)])


def _frames(values: dict[tuple[str, str, str], np.ndarray]) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = _rows(values)
    return summarize_runs(rows, 0.99, 10000), compare_runs(rows, 0.99)


NOISE = np.array([-0.02, 0.01, 0.0, 0.015, -0.005, 0.01, -0.01, 0.0])


def test_cells_compare_in_the_papers_units() -> None:
    # our KID in raw units (0.04726) is the paper's 47.26 (×10³): the cells must overlap; FID 40 must not
    summary, _ = _frames({("mnist", "wgan", "kid"): 0.04726 + NOISE * 1e-4, ("mnist", "wgan", "fid"): 40 + NOISE})
    c = pt.cells(summary).set_index(["data", "model", "metric"])
    assert c.loc[("mnist", "wgan", "kid"), "overlap"] == "yes"
    assert c.loc[("mnist", "wgan", "kid"), "ours_mean"] == pytest.approx(47.26, abs=0.01)
    assert c.loc[("mnist", "wgan", "fid"), "overlap"] == "no"
    assert c.loc[("cifar10", "wgan_gp", "imd"), "overlap"] == pt.NOT_RUN
    assert c.loc[("mnist", "wgan", "imd"), "overlap"] == pt.NOT_RUN  # a metric we did not score on a dataset run
    assert len(c) == 8 * 3


def test_orderings_follow_the_interval_of_the_paired_difference() -> None:
    base = {"imd": 20.0, "kid": 0.05, "fid": 30.0}
    step = {"imd": 1.0, "kid": 0.001, "fid": 1.0}
    values = {}
    for metric in PAPER_METRICS:
        s = step[metric]
        values[("mnist", "wgan", metric)] = base[metric] + 5 * s + NOISE * s  # WGAN worse: holds
        values[("mnist", "wgan_gp", metric)] = base[metric] + NOISE[::-1] * s
        values[("cifar10", "wgan_gp", metric)] = base[metric] + 5 * s + NOISE * s  # WGAN-GP worse: reversed
        values[("cifar10", "wgan", metric)] = base[metric] + NOISE[::-1] * s
    summary, comparison = _frames(values)
    # cifar10's rows list wgan_gp first, so its comparison is wgan_gp − wgan: the sign must be turned
    assert set(comparison[comparison.data == "cifar10"].a) == {"wgan_gp"}
    o = pt.orderings(comparison, ["mnist", "cifar10"]).set_index(["data", "metric"])
    assert set(o.loc["mnist"].verdict) == {pt.HOLDS} and set(o.loc["cifar10"].verdict) == {pt.REVERSED}
    assert set(o.loc["celeba"].verdict) == set(o.loc["fashion_mnist"].verdict) == {pt.NOT_RUN}
    assert o.loc[("mnist", "kid"), "diff_mean"] == pytest.approx(5.0)  # 0.005 raw = 5 in KID×10³
    assert o.loc[("cifar10", "fid"), "diff_mean"] == pytest.approx(-5.0) and o.loc[("cifar10", "fid"), "ci_high"] < 0
    assert o.loc[("mnist", "imd"), "paper_diff"] == pytest.approx(57.74 - 10.77)
    # the same difference with noise that spans 0: undecided
    wide = {k: (v if k[1] == "wgan_gp" else v[::-1] + np.array([30, -30, 25, -25, 20, -20, 10, -10]) * step[k[2]])
            for k, v in values.items() if k[0] == "mnist"}
    o2 = pt.orderings(_frames(wide)[1], ["mnist"]).set_index(["data", "metric"])
    assert set(o2.loc["mnist"].verdict) == {pt.UNDECIDED}
    assert pt.decide(0.1, 0.2, 1.0) == pt.HOLDS and pt.decide(-0.2, -0.1, 1.0) == pt.REVERSED
    assert pt.decide(-0.1, 0.2, 1.0) == pt.UNDECIDED and pt.decide(np.nan, np.nan, 1.0) == pt.UNDECIDED


def test_orderings_pair_by_training_seed_with_several_seeds() -> None:
    from ganeval.results import summarize_levels

    rows = _rows({("celeba", m, "fid"): 10.0 + NOISE for m in PAPER_MODELS})
    rows = pd.concat([rows.assign(train_seed=i, value=rows.value + i * 3 + (rows.model == "wgan") * (1 + 0.1 * i))
                      for i in range(3)], ignore_index=True)
    levels = summarize_levels(rows, 0.99, 10000)
    o = pt.orderings(levels.comparison, ["celeba"]).set_index(["data", "metric"]).loc[("celeba", "fid")]
    assert (o.paired_by, o.n_pairs, o.verdict) == ("training seed", 3, pt.HOLDS)
    assert o.diff_mean == pytest.approx(1.1)  # the mean over seeds of the per-seed differences 1.0, 1.1, 1.2


def _shown(mean: float, half_width: float) -> str:
    """mean ± half-width as the tables print them: the half-width to two significant digits, the mean alike."""
    k = max(0, 1 - int(np.floor(np.log10(half_width))))
    return f"{mean:.{k}f} ± {half_width:.{k}f}"


def test_verdict_table_and_tex_say_it_per_line() -> None:
    values = {(d, m, k): (10.0 if m == "wgan" else 5.0) + NOISE for d in ("mnist",) for m in PAPER_MODELS
              for k in PAPER_METRICS}
    summary, comparison = _frames(values)
    diffs = pt.protocol_differences(10000, 8, 0.99, {"name": "pixels", "dims": 1024})
    text = pt.verdict_markdown(summary, comparison, diffs, note="demo only")
    lines = [ln for ln in text.splitlines() if ln.startswith("- ") and ", " in ln.split(":")[0]]
    assert len(lines) == 12 and sum(ln.endswith(": not run") for ln in lines) == 9
    assert all(": holds (WGAN − WGAN-GP = 5" in ln for ln in lines if ln.startswith("- MNIST,"))
    assert "**demo only**" in text and "IMD, KID and FID agree" in text
    assert "Overall: the paper's ordering (WGAN-GP better) holds on every dataset and metric run (3 of 3" in text
    assert "Not run (claim untested there): FashionMNIST, CIFAR10, CelebA." in text
    assert "features pixels 1024-d" in text and "runs 8 (paper 100)" in text
    md = pt.table_markdown(summary, comparison, "T", diffs)
    imd = summary[(summary.data == "mnist") & (summary.metric == "imd")].set_index("model")
    a, b = (_shown(imd.loc[m, "mean"], imd.loc[m, "half_width"]) for m in ("wgan", "wgan_gp"))
    assert f"| IMD | ours | {a} | **{b}** | not run |" in md  # rounded to the interval's digits; bold: best
    assert "| | paper | 57.74 ± 0.47 | 10.77 ± 0.42 | 118.14 ± 0.52 |" in md
    assert "| | overlap | no | no | not run |" in md
    assert "| MNIST | KID×10³ | 41.73 | 5000.00 [" in md and "| run (n = 8) | holds |" in md
    tex = pt.table_latex(summary, comparison, "T", diffs)
    assert r"\multicolumn{2}{c}{\textbf{MNIST}}" in tex and r"$57.74 \pm 0.47$" in tex and r"$\mathbf{" + b.split(" ± ")[0] + "}" in tex
    for row in (ln for ln in tex.splitlines() if ln.endswith(r"\\") and " & ours & " in ln):
        assert row.count("&") == 1 + 8  # metric, kind, eight columns
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") == 2


def test_overall_statements() -> None:
    o = pt.orderings(None, [])
    assert pt.overall(o).startswith("Overall: no dataset of the paper's table was run")
    o.loc[0:2, "verdict"] = [pt.HOLDS, pt.REVERSED, pt.UNDECIDED]
    assert "does not hold" in pt.overall(o)
    assert "1 of 3 dataset × metric pairs hold, 1 contradicted, 1 not testable here" in pt.overall(o)
    o.loc[1, "verdict"] = pt.HOLDS
    assert "is not confirmed" in pt.overall(o)
    # (issue #26: only FID is open, so only the agreement is not testable; IMD and KID are decided)
    assert pt.agreement(o) == ["- MNIST: IMD, KID and FID agreement not testable here (FID not testable "
                               "here): IMD holds, KID×10³ holds, FID not testable here"]


def test_stand_in_names_what_is_not_the_papers() -> None:
    """(issue #36) A claim about the paper's features, weights or files is not tested by a run on others."""
    paper = {"name": "inception", "dims": 2048, "resize": 299, "weights": pt.PUBLISHED_WEIGHTS + "0" * 56}
    assert pt.stand_in(paper, {"datasets": {"mnist": {"data": {"download": False}}}}) == ""
    assert "not the published FID weights" in pt.stand_in({**paper, "weights": "de820c9e"})
    assert pt.stand_in({"name": "pixels"}) == "pixels features, not Inception pool3"
    assert pt.stand_in(paper, {"datasets": {"cifar10": {"data": {"checksums": False}}}}) == (
        "CIFAR10 files not the published ones (checksums=false)")
    comparison = pd.DataFrame([{"data": "mnist", "metric": m, "a": "wgan", "b": "wgan_gp", "diff_mean": 5.0,
                                "ci_low": 4.0, "ci_high": 6.0, "n_runs": 10, "p_value": 1e-6, "mde": 1.0,
                                "confidence": 0.99} for m in ("imd", "kid", "fid")])
    assert set(pt.orderings(comparison, ["mnist"]).query("data == 'mnist'").verdict) == {pt.HOLDS}
    o = pt.orderings(comparison, ["mnist"], stand_in="pixels features, not Inception pool3")
    assert set(o.query("data == 'mnist'").verdict) == {pt.STAND_IN} and set(o.query("data != 'mnist'").verdict) == {
        pt.NOT_RUN}
    assert pt.claim_result(o, "99 %", "pixels features, not Inception pool3").startswith(
        "The paper's claim (WGAN-GP better than WGAN on IMD, KID and FID for every dataset): not tested: stand-in data "
        "(pixels features, not Inception pool3;")
    assert pt.overall(o).startswith("Overall: not tested: stand-in data")


def test_protocol_differences_name_each_one() -> None:
    paper = {"name": "inception", "dims": 2048, "resize": 299, "weights": "6726825d", "autocast": None}
    assert pt.protocol_differences(10000, 100, 0.99, paper) == []
    diffs = pt.protocol_differences(500, 3, 0.95, {**paper, "weights": "de820c9e"}, train_epochs=1)
    assert [d.split(" ")[0] for d in diffs] == ["sample_size", "runs", "confidence", "Inception", "train_epochs=1"]


# --------------------------------------------------------------------------- real-format readers
def test_mnist_and_fashion_mnist_idx_files_read_back(tmp_path: Path) -> None:
    m = write_mnist(tmp_path, 12, 5)
    f = write_mnist(tmp_path, 7, 3, fashion=True, seed=1)
    assert (tmp_path / "MNIST" / "raw" / "t10k-labels-idx1-ubyte").read_bytes()[:8] == bytes([0, 0, 8, 1, 0, 0, 0, 5])
    x = data.mnist(tmp_path, download=False)
    assert x.shape == (12, 1, 28, 28) and x.dtype == np.uint8 and np.array_equal(x[:, 0], m["train_images"])
    assert np.array_equal(data.mnist(tmp_path, train=False, download=False)[:, 0], m["test_images"])
    assert np.array_equal(data.fashion_mnist(tmp_path, download=False)[:, 0], f["train_images"])
    assert m["train_images"].std() > 20  # real pictures, not a constant
    (tmp_path / "MNIST" / "raw" / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(data.DatasetNotFoundError, match="MNIST not found under .*raw.*t10k-labels-idx1-ubyte"):
        data.mnist(tmp_path, download=False)


def test_cifar10_pickles_read_back_only_without_checksums(tmp_path: Path) -> None:
    images = write_cifar10(tmp_path, 3, 4)
    with pytest.raises(data.DatasetNotFoundError, match="fail torchvision's MD5 checksums.*checksums=false"):
        data.cifar10(tmp_path, download=False)  # the default still checks: these are not the published files
    x = data.cifar10(tmp_path, download=False, checksums=False)
    assert x.shape == (15, 3, 32, 32) and np.array_equal(x.transpose(0, 2, 3, 1), images)
    assert data.cifar10(tmp_path, train=False, download=False, checksums=False).shape == (4, 3, 32, 32)
    with pytest.raises(ValueError, match="download=false"):
        data.cifar10(tmp_path, download=True, checksums=False)
    (tmp_path / "cifar-10-batches-py" / "data_batch_3").unlink()
    with pytest.raises(data.DatasetNotFoundError, match="CIFAR10 not found under"):
        data.cifar10(tmp_path, download=False, checksums=False)


def test_celeba_folder_and_text_files_read_back(tmp_path: Path) -> None:
    from PIL import Image

    images = write_celeba(tmp_path, [0, 0, 1, 0, 2, 0, 2])  # torchvision cannot read a split of one image
    with pytest.raises(data.DatasetNotFoundError, match="fail torchvision's MD5 checksums"):
        data.celeba(tmp_path, download=False)
    x = data.celeba(tmp_path, download=False, checksums=False, num_workers=1)
    assert x.shape == (4, 3, 64, 64)
    # the train split is images 0, 1, 3, 5, centre-cropped 108 and resized to 64 (JPEG error only)
    expect = [np.asarray(Image.fromarray(images[i]).crop((35, 55, 143, 163)).resize((64, 64), Image.BILINEAR))
              for i in (0, 1, 3, 5)]
    err = np.abs(x.transpose(0, 2, 3, 1).astype(float) - np.stack(expect)).mean(axis=(1, 2, 3))
    assert (err < 4).all(), err
    assert data.celeba(tmp_path, split="test", download=False, checksums=False, num_workers=1).shape[0] == 2
    assert data.celeba(tmp_path, split="all", download=False, checksums=False, num_workers=1, limit=5).shape[0] == 5


# --------------------------------------------------------------------------- end to end
def _tiny_training(dataset: str) -> list[str]:
    out = []
    for g in PAPER_MODELS:
        p = f"datasets.{dataset}.generators.{g}.train"
        out += [f"+{p}.arch_kwargs.latent_dim=8", f"+{p}.arch_kwargs.dim=4", f"{p}.batch_size=8"]
    return out


E2E = ["experiment=paper_table", "include=[mnist,cifar10]", "runs=3", "sample_size=8", "n_generated=8",
       "train_epochs=1", "metrics.imd.k=3", "metrics.imd.nv=10", "metrics.imd.m=6", "metrics.kid.subsets=4",
       "metrics.kid.subset_size=4", "features.download=false", "batch_size=32", "progress=false",
       "datasets.mnist.data.download=false", "datasets.cifar10.data.download=false",
       "datasets.cifar10.data.checksums=false", "note='synthetic real-format files, random-weight Inception'",
       *_tiny_training("mnist"), *_tiny_training("cifar10")]


@pytest.mark.slow
def test_paper_table_end_to_end_on_real_format_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.features.inception import save_random_weights

    root = tmp_path / "data"
    write_mnist(root, 10, 2)
    write_cifar10(root, 2, 2)  # 10 training images: 52 images through Inception in all
    monkeypatch.setenv("GANEVAL_DATA", str(root))
    monkeypatch.setenv("GANEVAL_INCEPTION_WEIGHTS", str(save_random_weights(tmp_path / "w.pth", seed=0)))
    res = tmp_path / "res"
    s = run_inprocess([*E2E, f"results_dir={res}", f"cache_dir={tmp_path / 'cache'}", f"models_dir={tmp_path / 'm'}"])
    assert set(zip(s.data, s.model)) == {(d, g) for d in ("mnist", "cifar10") for g in PAPER_MODELS}
    assert (s.n_runs == 3).all() and (s.sample_size == 8).all()
    runs = pd.read_csv(res / "runs.csv")
    assert runs.run.nunique() == 3 and len(runs) == 3 * 2 * 2 * 3  # runs × datasets × models × metrics
    rec = json.loads((res / "summary.json").read_text())
    assert rec["extractor"]["name"] == "inception" and rec["extractor"]["dims"] == 2048
    assert len(rec["verdict"]) == 12
    # the tables: the paper's columns and numbers beside ours, our cells equal to the summary's
    md = (res / "table.md").read_text()
    assert "| metric | | MNIST / WGAN | MNIST / WGAN-GP | FashionMNIST / WGAN |" in md
    assert "| | paper | 57.74 ± 0.47 | 10.77 ± 0.42 |" in md and "**synthetic real-format files" in md
    row = s[(s.data == "mnist") & (s.model == "wgan") & (s.metric == "fid")].iloc[0]
    assert f"| FID | ours | {_shown(row['mean'], row['half_width'])}" in md.replace("**", "")
    assert r"\multicolumn{2}{c}{\textbf{CelebA}}" in (res / "table.tex").read_text()
    # verdict.md: one line per paper dataset × metric; run ones decided from comparison.csv's intervals
    verdict = (res / "verdict.md").read_text()
    lines = [ln for ln in verdict.splitlines() if re.match(r"- [A-Za-z0-9]+, (IMD|KID×10³|FID): ", ln)]
    assert len(lines) == 12 and sum(ln.endswith("not run") for ln in lines) == 6
    assert "sample_size 8 (paper 10000" in verdict and "not the published FID weights" in verdict
    cmp_ = pd.read_csv(res / "comparison.csv")
    v = pd.read_csv(res / "verdict.csv").set_index(["data", "metric"])
    holm = dict(zip(zip(cmp_.data, cmp_.metric), holm_adjust(cmp_.p_value.to_numpy())))  # all pairs run together
    decided = pt.orderings(cmp_, ["cifar10", "mnist"]).set_index(["data", "metric"])
    for c in cmp_.itertuples():
        sign = 1.0 if c.a == "wgan" else -1.0
        lo, hi = sorted((sign * c.ci_low, sign * c.ci_high))
        expect = pt.HOLDS if lo > 0 else pt.REVERSED if hi < 0 else pt.UNDECIDED
        expect = expect if holm[(c.data, c.metric)] <= 0.01 else pt.UNDECIDED
        assert decided.loc[(c.data, c.metric), "verdict"] == expect  # the rule, were the data and weights the paper's
        assert v.loc[(c.data, c.metric), "verdict"] == pt.STAND_IN  # a random-weight Inception tests nothing
        assert any(ln.startswith(f"- {PAPER_DATASETS[c.data]}, ") and f": {pt.STAND_IN} (" in ln for ln in lines)
    assert "Overall: not tested: stand-in data" in verdict and "contradicted" not in verdict.split("---")[0]
    assert (res / "summary.png").stat().st_size > 1000
