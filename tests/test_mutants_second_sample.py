"""Tests aimed at the survivors of the second fresh sample (`scripts/mutate.py --seed 5602`), each checked by applying
its mutant: the bug it names makes it fail. Grouped by package; each docstring names the mutant's bug."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch

RNG = np.random.default_rng(5602)


# ----------------------------------------------------------------------------------------------------- studies

def test_a_negative_interval_holds_when_the_paper_says_negative() -> None:
    """Bug: `-1.0` → `-2.0` in `paper_table.decide`: an interval wholly below 0 never matches the paper's −1."""
    from ganeval.studies.paper_table import HOLDS, REVERSED, UNDECIDED, decide

    assert decide(-2.0, -1.0, -1.0) == HOLDS and decide(1.0, 2.0, -1.0) == REVERSED
    assert decide(-2.0, -1.0, 1.0) == REVERSED and decide(1.0, 2.0, 1.0) == HOLDS and decide(-1.0, 1.0, 1.0) == UNDECIDED


def test_the_smallest_detectable_cell_is_a_dash_where_none_was_measured() -> None:
    """Bug: `or` → `and` in `paper_table.table_markdown`: a pair that ran without a smallest detectable difference
    (a comparison without its `mde` column) prints `nan` instead of –."""
    from ganeval.results import compare_runs, summarize_runs
    from ganeval.studies import paper_table as pt

    noise = np.array([-0.02, 0.01, 0.0, 0.015, -0.005, 0.01, -0.01, 0.0])
    rows = pd.DataFrame([{"data": "mnist", "model": m, "metric": k, "run": r, "value": (10.0 if m == "wgan" else 5.0) + v}
                         for m in pt.PAPER_MODELS for k in pt.PAPER_METRICS for r, v in enumerate(noise)])
    summary, comparison = summarize_runs(rows, 0.99, 10000), compare_runs(rows, 0.99)
    diffs = pt.protocol_differences(10000, 8, 0.99, {"name": "pixels", "dims": 1024})
    md = pt.table_markdown(summary, comparison.drop(columns=[c for c in ("mde",) if c in comparison.columns]), "T",
                           diffs)
    mnist = [ln for ln in md.splitlines() if ln.startswith("| MNIST | ")]
    assert len(mnist) == 3 and all(ln.endswith("| holds | – |") for ln in mnist), mnist
    assert "nan" not in md


def test_the_er_trace_depends_when_one_window_share_disagrees() -> None:
    """Bug: `all` → `any` in `er_normalisation.decide`: a trace off only at t = 3.5 (inside the 1 % window, outside
    the 5 % and 10 % ones) reads tight, though one declared window share contradicts it."""
    from ganeval.results.verdicts import DEPENDS
    from ganeval.studies.er_normalisation import WEIGHT, decide, window
    from test_study_rules import er_trace_rows

    assert window(WEIGHT.low)[1] > 3.55 > window(WEIGHT.value)[1]
    c = decide(er_trace_rows(3.548, 0.5), 0.99)[0][0]
    assert c.verdict == DEPENDS and "contradicted" in c.evidence


def test_a_checkpoint_is_loaded_as_weights_not_run_as_code(tmp_path: Path) -> None:
    """Bug: `weights_only=True` → False in `nn_internals.load_reference`: a checkpoint's pickle runs its code."""
    from ganeval.studies.nn_internals import load_reference

    ran = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[Any, tuple[str]]:
            return (Path.touch, (ran,))  # type: ignore[return-value]

    torch.save({"x": Payload()}, tmp_path / "evil.pt")
    with pytest.raises(ValueError, match="is not a width-4 nn_internals CNN"):
        load_reference(4, str(tmp_path / "evil.pt"))
    assert not ran.exists()


def _layer_rows(per_layer: dict[str, np.ndarray]) -> pd.DataFrame:
    return pd.DataFrame([{"part": "layers", "network": n, "epoch": 20, "layer": ly, "reference": "fc", "metric": "imd",
                          "value": float(v)} for ly, vals in per_layer.items() for n, v in enumerate(vals)])


def test_the_decrease_rule_corrects_a_rise_for_its_steps_by_multiplying() -> None:
    """Bug: `* len(steps)` → `/ len(steps)` in `nn_internals.decrease_claim`: a rise at conv3→conv4 whose one-sided p
    (0.015) is over α = 0.01 alone contradicts the claim from conv1 on (0.015 / 3 ≤ 0.01); Bonferroni never does."""
    from scipy import stats

    from ganeval.results.verdicts import NOT_TESTABLE, one_sided_p
    from ganeval.studies.nn_internals import decrease_claim

    z = np.linspace(-1, 1, 10)
    z = (z - z.mean()) / z.std(ddof=1)
    rise = stats.t.ppf(1 - 0.015, 9) / math.sqrt(10)
    per = {"input": np.full(10, 40.0), "conv1": np.full(10, 30.0), "conv2": np.full(10, 20.0),
           "conv3": np.full(10, 10.0), "conv4": 10.0 + rise + z}
    assert one_sided_p(per["conv4"] - per["conv3"])[0] == pytest.approx(0.015)
    c = decrease_claim(_layer_rows(per), 0.99)
    assert c.verdict == NOT_TESTABLE and c.across == "not testable here for all of conv1–conv3"


def test_every_trace_of_the_nn_study_draws_its_own_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bugs in `nn_internals.measure`: `(n, 10000)` → `(n, 10001)`, a network's last layer and its first compared layer
    traced with the same probes (key (n, 10001)), so their IMD shares its probe noise; `seed + 1` → `seed + 2`, the
    networks trained from other seeds than the docstring's (and the committed reference's) seed + 1 on."""
    import ganeval.metrics
    from ganeval.studies import nn_internals as nn

    keys: list[tuple[int, ...]] = []
    seeds: list[int] = []
    monkeypatch.setattr(nn, "tracer", lambda *a: lambda x, key: keys.append(tuple(key)) or np.zeros(3))
    monkeypatch.setattr(nn, "split", lambda seed: (None, None, None, None))
    monkeypatch.setattr(nn, "train", lambda width, seed, *a: seeds.append(seed) or SimpleNamespace(eval=lambda: None))
    monkeypatch.setattr(nn, "representations", lambda net, xv: {ly: np.zeros((2, 2)) for ly in (*nn.LAYERS, nn.LAST)})
    monkeypatch.setattr(ganeval.metrics, "imd_from_traces", lambda a, b: 0.0)
    rows = nn.measure(["conv1", "conv2", "conv3"], networks=3, epochs=1, width=4, references=[{"width": 4}], seed=5,
                      imd_options={})
    assert len(rows) == 3 * 3 and len(keys) == 1 + 3 * 4
    assert len(set(keys)) == len(keys), sorted(keys)
    assert seeds == [10_005, 6, 7, 8]  # the reference from 10 000 + seed, the networks from seed + 1 on (docstring)


def test_imd_separating_the_wrong_way_contradicts_the_torus_claim() -> None:
    """Bug: `c["better"] == good` → `!=` in `torus._claims`: the bad GAN's IMD significantly lower, the intervals
    apart, reads as the paper's claim holding."""
    from ganeval.results.verdicts import CONTRADICTED, HOLDS
    from ganeval.studies.torus import PAPER, claims, verdict

    rows = [{"model": m, "metric": k, "mean": PAPER[k][other][0], "half_width": PAPER[k][other][1], "n_runs": 100,
             "n_seeds": 1, "sample_size": 1000, "confidence": 0.99, "ci_low": PAPER[k][other][0] - PAPER[k][other][1],
             "ci_high": PAPER[k][other][0] + PAPER[k][other][1]}
            for m, other in (("good", "bad"), ("bad", "good")) for k in ("fid", "kid", "imd")]  # swapped
    summary = pd.DataFrame(rows)

    def comparison(better: str) -> pd.DataFrame:
        sign = -1.0 if better == "good" else 1.0
        return pd.DataFrame([{"metric": k, "model_a": "good", "model_b": "bad", "better": better if k == "imd" else "",
                              "p_value": 1e-6 if k == "imd" else 0.5, "diff_mean": sign * 5.0, "ci_low": sign * 5.0 - 1,
                              "ci_high": sign * 5.0 + 1, "diff_std": 1.0, "n_runs": 100} for k in ("fid", "kid", "imd")])

    v = verdict(summary, comparison("bad"), "good", "bad")
    assert not v.set_index("metric").loc["imd", "intervals_overlap"]
    assert claims(summary, comparison("bad"), None, None, v, "good", "bad")[0].verdict == CONTRADICTED
    assert claims(summary, comparison("good"), None, None, v, "good", "bad")[0].verdict == HOLDS


def test_the_form_error_of_each_lanczos_step_is_its_own() -> None:
    """Bug: `forms_slq[m - 1]` → `forms_slq[m - 2]` in `slq_accuracy.measure`: the quadratic-form error at m steps
    read from the estimate of m − 1 steps (at m = 1, of the last)."""
    from ganeval.studies.slq_accuracy import Pool, measure

    rng = np.random.default_rng(7)
    m_steps, probes, t = 3, 40, np.array([0.1, 1.0, 10.0, 100.0])
    truth = np.array([50.0, 20.0, 5.0, 1.5])
    slq = truth * (1 + 0.1 * rng.standard_normal((m_steps, probes, len(t))))
    forms_exact = rng.uniform(1.0, 2.0, (probes, len(t)))
    forms = forms_exact * (1 + np.array([0.3, 0.1, 0.01])[:, None, None] * rng.uniform(0.5, 1.0, (m_steps, probes, 4)))
    pool = Pool(t=t, truth=truth, slq=slq, slq_plain=slq, exact=slq[-1], forms_slq=forms, forms_exact=forms_exact,
                l_slq=rng.uniform(0.5, 1.0, (m_steps, probes)), var_theory=np.full(4, 0.01),
                var_theory_plain=np.full(4, 0.09), alpha_theory=np.full(4, 0.5), n=50)
    cfg = SimpleNamespace(nv=10, m=2, t_errors=[1.0], nv_list=[10], min_batches=2, t_variance_min=0.5,
                          t_variance_max=20.0, bootstrap=100, delta=0.1)
    df = measure(pool, cfg, 0.95, seed=1)
    form = df[df.quantity == "form_rel_error"]
    assert len(form) > 0
    for r in form.itertuples():
        j = int(np.flatnonzero(t == r.t)[0])
        want = np.abs(forms[int(r.m) - 1][:, j] / forms_exact[:, j] - 1).mean()
        assert r.value == pytest.approx(want, rel=1e-12)


def test_the_studys_defaults_are_the_committed_references() -> None:
    """Bug: `n: int = 1000` → 1001 in `paper_checks.measure`: `measure()` from Python with its defaults no longer
    makes the committed reference (results/reference/paper_checks, whose summary.json records its settings)."""
    import inspect
    import json

    from ganeval.studies.paper_checks import measure

    ref = Path(__file__).parent.parent / "results" / "reference" / "paper_checks" / "summary.json"
    config = json.loads(ref.read_text())["config"]
    params = inspect.signature(measure).parameters
    shared = [k for k in config if k in params]
    assert set(shared) == {"runs", "n", "sizes", "batches", "probes", "seed"}
    for k in shared:
        want = params[k].default
        assert (tuple(config[k]) if isinstance(want, tuple) else config[k]) == want, k


def test_a_lanczos_p_value_reads_the_first_three_numbers_of_a_variance_text() -> None:
    """Bug: `nums[:3]` → `nums[:4]` in `slq_claims._approx_p`: a variance claim's text of value, interval and its t
    cannot be read (four numbers into three names)."""
    from scipy.stats import norm

    from ganeval.studies.slq_claims import REDUCED, _approx_p

    z = float(norm.ppf(0.995))
    got = _approx_p("0.2 [0.1, 0.3] at t = 0.5", True, "variance_reduced_everywhere", 0.99)
    assert got == pytest.approx(float(norm.sf((REDUCED - 0.2) / (0.1 / z))), rel=1e-12)
    got = _approx_p("at t = 2: 0.004 [0.003, 0.005]", False, "few_steps_suffice", 0.99)  # the last three numbers
    assert got == pytest.approx(float(norm.sf((0.004 - 1e-3) / (0.001 / z))), rel=1e-12)


# --------------------------------------------------------------------------------------------------------- app

def test_undo_keeps_a_folder_where_a_file_named_like_hydras_was_written(tmp_path: Path) -> None:
    """Bug: `rel == HYDRA_DIR and name in HYDRA_FILES` → `or` in `run_files._tree`: a config.yaml the run wrote
    outside .hydra/ goes unseen, so `undo` puts the folder back though something else wrote into it."""
    import logging

    from apphelp import app_config
    from ganeval.app import run_files

    for where in ("config.yaml", "job/overrides.yaml"):
        res = tmp_path / where.replace("/", "_") / "res"
        try:
            run_files.forget()
            run_files.begin(res, app_config([f"results_dir={res}"]))
            logging.getLogger("ganeval").warning("this command's line")
            (res / where).parent.mkdir(parents=True, exist_ok=True)
            (res / where).write_text("a file of this run, not Hydra's\n")
            assert not run_files.undo()
        finally:
            run_files.forget()
        assert (res / where).exists() and (res / ".hydra" / "config.yaml").exists()


# --------------------------------------------------------------------------------------------------------- gan

def test_the_loss_curves_average_trails_each_point_over_its_window() -> None:
    """Bug: `w - 1` → `w + 1` in `gan.plots._smooth`: the smoothed curve two points longer than its x axis, each
    value the average of a window that starts two points early."""
    from ganeval.gan.plots import _smooth

    y = RNG.standard_normal(2000)
    w = len(y) // 400
    got = _smooth(y)
    padded = np.concatenate([np.full(w - 1, y[0]), y])
    want = np.array([padded[i:i + w].mean() for i in range(len(y))])
    assert got.shape == y.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(_smooth(y[:500]), y[:500])  # under 800 points: as they are


def test_a_batch_of_one_generates_the_same_samples() -> None:
    """Bug: `batch_size < 1` → `< 2` in `gan.sampling.generate`: a batch size of 1 refused."""
    from ganeval.gan.sampling import generate

    net = torch.nn.Linear(3, 2)
    z = torch.randn(5, 3, generator=torch.Generator().manual_seed(0))
    one = generate(net, z, output_range=None, batch_size=1)
    np.testing.assert_array_equal(one, generate(net, z, output_range=None, batch_size=5))
    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        generate(net, z, output_range=None, batch_size=0)


# ----------------------------------------------------------------------------------------------------- metrics

def test_imds_probes_are_gaussian_by_default() -> None:
    """Bug: `rademacher: bool = False` → True in `imd.probe_traces`: the default probes ±1, not the paper's
    Gaussian vectors (its estimator as specified)."""
    from ganeval.metrics.imd import probe_traces
    from ganeval.metrics.knn import exact_knn

    nbrs = exact_knn(torch.as_tensor(RNG.standard_normal((60, 3)), dtype=torch.float32), 5)
    t = np.array([0.1, 1.0, 10.0])
    default = probe_traces(nbrs, t, m=5, nv=8, seed=3)
    np.testing.assert_array_equal(default, probe_traces(nbrs, t, m=5, nv=8, seed=3, rademacher=False))
    assert not np.array_equal(default, probe_traces(nbrs, t, m=5, nv=8, seed=3, rademacher=True))


def test_the_exact_neighbours_of_every_other_point() -> None:
    """Bug: `k - 1` → `k + 1` in `knn_approx.brute_force_knn`: k = N − 1 (every other point) fails, and the k kept
    come from a partition at the wrong place."""
    from ganeval.metrics.knn_approx import brute_force_knn

    x = RNG.standard_normal((40, 3))
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    for k in (1, 5, 39):
        np.testing.assert_array_equal(brute_force_knn(x, k), np.argsort(d, axis=1, kind="stable")[:, :k])


def test_a_row_is_decided_only_when_its_kth_distance_and_its_error_stay_inside_the_coarse_search(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `kth + tol` → `kth - tol` in `knn_precision.undecided_share`: a row whose float32 k-th distance, plus its
    rounding error, may reach past the reduced-precision search's horizon counted as decided."""
    from ganeval.metrics import knn_precision as kp

    x = torch.cat([torch.zeros(4, 2), torch.full((40, 2), 10.0) + torch.arange(40.0)[:, None] * 1e-3])
    x[1:4, 0] = torch.tensor([1.0, 1.0, 1.0])  # three points at distance² 1 from point 0, the rest ~200 away
    real = kp.distance_error
    assert kp.undecided_share(x, 3, "bfloat16", rows=1) == 0.0  # point 0 alone: its 3 neighbours are certain

    def error(x: torch.Tensor, sq: torch.Tensor, precision: str) -> torch.Tensor:  # wide bounds, the float32 one under
        n = x.shape[0]                                                  # half the gap past the 3rd neighbour
        return torch.full((n,), 150.0 if precision == "bfloat16" else 90.0, dtype=torch.float64)

    monkeypatch.setattr(kp, "distance_error", error)
    monkeypatch.setattr(kp, "centring_error", lambda sq_c: torch.zeros_like(sq_c, dtype=torch.float64))
    assert kp.undecided_share(x, 3, "bfloat16", rows=1) == 1.0  # 1 + 90 reaches past ~200 − 150
    monkeypatch.setattr(kp, "distance_error", real)


def test_a_sample_size_at_one_run_is_refused_against_moments_too(tmp_path: Path) -> None:
    """Bug: `request.runs == 1` → `== 2` in `scoring.score_moments`: against a moments-only REAL, `sample_size` with
    one run (which scores the full sets) is ignored instead of refused."""
    import ganeval

    x = RNG.standard_normal((40, 6))
    np.savez(tmp_path / "stats.npz", mu=x.mean(0), sigma=np.cov(x, rowvar=False))
    np.save(tmp_path / "fake.npy", RNG.standard_normal((30, 6)).astype(np.float32))
    with pytest.raises(ValueError, match=r"sample_size applies to the subsample protocol \(runs > 1\)"):
        ganeval.score(tmp_path / "stats.npz", tmp_path / "fake.npy", runs=1, sample_size=10, progress=False)
    with pytest.raises(ValueError, match=r"runs=3 draws subsamples"):
        ganeval.score(tmp_path / "stats.npz", tmp_path / "fake.npy", runs=3, progress=False)


def test_images_resized_to_one_pixel_are_scored(tmp_path: Path) -> None:
    """Bug: `request.size < 1` → `< 2` in `scoring.score`: `size=1` (the least a size can be) refused."""
    import ganeval
    from test_sources import make_images

    real, fake = make_images(tmp_path / "real", 12, (4, 4, 3), seed=0), make_images(tmp_path / "fake", 12, (4, 4, 3),
                                                                                   seed=1)
    result = ganeval.score(real, fake, features="pixels", size=1, metrics="fid", progress=False, plots=False)
    assert result is not None and result.to_dict()["size"] == 1 and result.to_dict()["dims"] == {"real": 3, "fake": 3}
    with pytest.raises(ValueError, match="size must be at least 1, got 0"):
        ganeval.score(real, fake, features="pixels", size=0, metrics="fid", progress=False, plots=False)


# -------------------------------------------------------------------------------------------------------- data

@pytest.mark.parametrize("stats", [{"mu": [0.0, 1.0]}, [[0.0, 1.0]]])
def test_an_edm2_entry_without_sigma_is_refused_in_one_line(tmp_path: Path, stats: Any) -> None:
    """Bug: `or` → `and` in `references._from_pickle`: an EDM2 entry that is a dict without sigma passes the check
    and fails later with a bare KeyError."""
    import pickle

    from ganeval.data.references import ReferenceError, read_reference

    (tmp_path / "ref.pkl").write_bytes(pickle.dumps({"fid": stats}))
    with pytest.raises(ReferenceError, match=r"ref\.pkl: fid must be a dict holding mu and sigma"):
        read_reference(tmp_path / "ref.pkl")


# ----------------------------------------------------------------------------------------------------- results

def test_one_run_with_an_interval_over_seeds_is_not_one_value_per_cell() -> None:
    """Bug: `and` → `or` in `tables.no_interval`: one run per cell read as "no interval" even where the cells hold
    intervals (over training seeds), and many runs without one read alike."""
    from ganeval.results.tables import no_interval

    assert no_interval(pd.DataFrame({"n_runs": [1, 1], "half_width": [np.nan, np.nan]}))
    assert not no_interval(pd.DataFrame({"n_runs": [1, 1], "half_width": [0.3, 0.2]}))
    assert not no_interval(pd.DataFrame({"n_runs": [5, 5], "half_width": [np.nan, np.nan]}))


def test_collated_reruns_name_their_job_first() -> None:
    """Bug: `s.insert(0, "job", …)` → `insert(1, …)` in `collate.collate`: jobs kept apart by name (reruns with the
    same overrides) get their `job` column second, not first."""
    import dataclasses
    import tempfile

    from ganeval.results import RunRecord
    from ganeval.results.collate import collate

    reference = Path(__file__).resolve().parent.parent / "results" / "reference" / "quickstart"
    base = RunRecord.read(reference / "summary.json")
    one_seed = pd.read_csv(reference / "summary_seeds.csv")
    one_seed = one_seed[one_seed.train_seed == 0].drop(columns="train_seed")
    with tempfile.TemporaryDirectory() as tmp:
        for job in ("a", "b"):
            (Path(tmp) / job).mkdir()
            one_seed.to_csv(Path(tmp) / job / "summary.csv", index=False)
            dataclasses.replace(base).write(Path(tmp) / job / "summary.json")
        merged = collate(tmp)
    assert list(merged.columns[:3]) == ["job", *one_seed.columns[:2]]
    assert sorted(merged.job.unique()) == ["a", "b"]


# ---------------------------------------------------------------------------------------------------- features

@pytest.mark.parametrize("arch", ["vits14", "vitl14"])
def test_dinov2s_normalisation_is_timms(arch: str) -> None:
    """Bug: `MEAN = (0.485, …)` → `(0.97, …)` in `features.dinov2`: the network's input normalised by other constants
    than timm's own configuration of the model (ImageNet's mean and std)."""
    timm = pytest.importorskip("timm")
    from ganeval.features import dinov2

    cfg = timm.models.get_pretrained_cfg(dinov2.ARCHS[arch])
    x = torch.arange(256, dtype=torch.uint8).repeat(3, 1).reshape(1, 3, 16, 16)
    mean, std = torch.tensor(cfg.mean, dtype=torch.float64), torch.tensor(cfg.std, dtype=torch.float64)
    want = (x.double() / 255 - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)
    torch.testing.assert_close(dinov2.normalise(x).double(), want, rtol=0, atol=1e-6)


@pytest.mark.parametrize("first", [b"\x00bad", b"a\tb", b"\xc3"])
def test_a_bad_first_entry_is_refused_without_blaming_a_row_before_it(tmp_path: Path, first: bytes) -> None:
    """Bug: `read == 0 or …` → `and` in `wordvectors._fault_message`: the first entry's own fault blamed on "a row
    before it" that does not exist."""
    from ganeval.data.wordvectors import WordVectorsError, read_word_vectors

    v = np.ones((2, 3), dtype="<f4")
    (tmp_path / "w.bin").write_bytes(b"2 3\n" + first + b" " + v[0].tobytes() + b"\nb " + v[1].tobytes() + b"\n")
    with pytest.raises(WordVectorsError, match=r"w\.bin: line 2: the word .*(holds whitespace or NUL|is not UTF-8)$"):
        read_word_vectors(tmp_path / "w.bin")


def test_training_data_go_to_the_device_only_under_a_quarter_of_its_free_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `< free // 4` → `<=` in `train_data.prepare_data`: data of exactly a quarter of the free memory put on the
    device (the docstring's rule: under a quarter, else pinned host memory)."""
    from ganeval.gan import train_data

    x = RNG.standard_normal((64, 2)).astype(np.float32)
    nbytes = x.nbytes
    went: list[str] = []
    monkeypatch.setattr(torch.Tensor, "to", lambda self, *a, **k: went.append("device") or self)
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self, *a, **k: went.append("pinned") or self)
    gen = SimpleNamespace(output_range=None, output_shape=(2,))
    for free in (4 * nbytes, 4 * nbytes + 4):
        monkeypatch.setattr(torch.cuda, "mem_get_info", lambda dev, free=free: (free, 10 * free))
        np.testing.assert_array_equal(train_data.prepare_data(x, gen, torch.device("cuda")).numpy(), x)  # type: ignore[arg-type]
    assert went == ["pinned", "device"]


def test_the_stored_verdict_keeps_numbers_and_stores_nan_as_null() -> None:
    """Bug: `isinstance(v, float) and v != v` → `or` in what became `gan_table.verdict_records`: every number of
    summary.json's verdict stored as null, not only NaN."""
    from ganeval.studies.gan_table import verdict_records

    frame = pd.DataFrame({"data": ["mnist", "cifar10"], "diff_mean": [1.5, np.nan], "n_pairs": [8, 8]})
    assert verdict_records(frame) == [{"data": "mnist", "diff_mean": 1.5, "n_pairs": 8},
                                      {"data": "cifar10", "diff_mean": None, "n_pairs": 8}]


def test_the_variance_rule_warns_of_wide_intervals_only_when_it_cannot_decide() -> None:
    """Bug: `similar or not more_var.empty` → `and` in `stability_report.approx_claims`: a similar variance (every
    upper bound under ×1.5) told that its intervals are too wide to tell an added variance from none."""
    from ganeval.studies import stability
    from test_stability import _approx_rows

    for runs, noise, holds, warned in ((40, 0.05, True, False), (4, 0.5, None, True)):
        rows = _approx_rows(0.0, 1.0, runs, noise=noise)
        s, c = stability.summarize(rows, 0.99), stability.compare(rows, 0.99)
        claim = {v["claim"]: v for v in stability.verdict(s, c, None, {100: 0.9, 400: 0.8})}["approx/no_added_variance"]
        assert claim["holds"] is holds
        assert ("could not be told from none" in claim["detail"]) is warned


def test_slq_accuracys_variance_window_may_start_below_one() -> None:
    """Bug: `0 < t_variance_min` → `1 <` in `slq_accuracy.check_config`: a variance window from t = 0.5 refused."""
    from ganeval.studies.slq_accuracy import check_config

    cfg = SimpleNamespace(m=10, nv=10, max_steps=20, probes=100, min_batches=2, t_errors=[1.0], t_variance_min=0.5,
                          t_variance_max=20.0, delta=0.1)
    check_config(cfg, 500)
    for bad in (0.0, 20.0):
        with pytest.raises(ValueError, match="need 0 < t_variance_min < t_variance_max"):
            check_config(SimpleNamespace(**{**vars(cfg), "t_variance_min": bad}), 500)


def test_the_smallest_detectable_effect_of_two_pairs_is_the_noncentral_ts() -> None:
    """Bugs: `n < 2` → `n < 3` in `power.paired_t_mde_effect` (two pairs get no effect size) and `or` → `and` in
    `power.paired_t_mde` (an infinite spread gives an infinite effect, not NaN)."""
    from scipy import stats

    from ganeval.results.power import paired_t_mde, paired_t_mde_effect

    for n in (2, 3, 10):
        e = paired_t_mde_effect(n, 0.01)
        crit = stats.t.ppf(1 - 0.005, n - 1)
        nc = e * math.sqrt(n)
        power = stats.nct.sf(crit, n - 1, nc) + stats.nct.sf(crit, n - 1, -nc)  # P(T > c) + P(T < −c)
        assert power == pytest.approx(0.8, abs=1e-9)
        assert paired_t_mde(2.0, n, 0.99) == pytest.approx(2.0 * e, rel=1e-12)
    assert math.isnan(paired_t_mde_effect(1, 0.01)) and math.isnan(paired_t_mde(1.0, 1, 0.99))
    assert math.isnan(paired_t_mde(math.inf, 10, 0.99)) and math.isnan(paired_t_mde(math.nan, 10, 0.99))


def test_an_er_graph_has_the_mean_degree_asked_for() -> None:
    """Bug: `degree / (n - 1)` → `degree * (n - 1)` in `er_normalisation.er_graph`: every pair an edge (the complete
    graph), not G(n, d/(n − 1)) of mean degree d."""
    from ganeval.studies.er_normalisation import er_graph

    for degree in (3.0, 10.0):
        a = er_graph(2000, degree, np.random.default_rng(1))
        assert np.array_equal(a, a.T) and not a.diagonal().any() and len(a) > 0.9 * 2000
        assert abs(a.sum(1).mean() - degree) < 0.1 * degree  # the giant component's mean degree: d + O(1/n)·d


def test_pool3_like_features_may_have_one_dimension() -> None:
    """Bug: `d < 1` → `d < 2` in `synthetic.pool3_like`: one-dimensional features refused."""
    from ganeval.metrics.synthetic import pool3_like

    x = pool3_like(50, 1, seed=3)
    assert x.shape == (50, 1) and x.dtype == np.float32 and (x >= 0).all() and (x > 0).any()
    with pytest.raises(ValueError):
        pool3_like(50, 0)


@pytest.mark.parametrize("side, low, high, want", [
    ("within", -2.0, -1.0, "not testable here"), ("within", -2.0, -1.000001, "contradicted"),
    ("within", 1.0, 2.0, "not testable here"), ("within", 1.000001, 2.0, "contradicted"),
    ("within", -0.999999, 0.999999, "holds"), ("within", -1.0, 0.5, "not testable here"),
    ("below", 0.0, 1.0, "not testable here"), ("above", 1.0, 2.0, "not testable here")])
def test_an_interval_ending_at_the_threshold_is_never_decided(side: str, low: float, high: float, want: str) -> None:
    """Bug: `high < -tau` → `<=` in `thresholds.interval_label`: an interval ending exactly at −τ (sharing a point
    with the band ±τ) read as wholly beyond it, contradicted."""
    from ganeval.results.thresholds import interval_label

    assert interval_label(low, high, 1.0, side) == want


def test_fd_infinitys_smallest_fraction_lies_in_zero_to_one() -> None:
    """Bug: `0 < v <= 1` → `<= 2` in `fd_inf`'s options: a smallest size above the subsample itself (1.5 of it)
    accepted."""
    import importlib

    from ganeval.metrics.registry import Metrics

    module = importlib.import_module("ganeval.metrics.fd_inf")  # the package's `fd_inf` is the function
    assert module.DEFAULTS["min_fraction"] == 0.1  # Chong & Forsyth's 5000 of 50000
    Metrics({"fd_inf": {"min_fraction": 1.0}})
    for bad in (0.0, 1.5, 2.0):
        with pytest.raises(ValueError, match=r"min_fraction.*a number in \(0, 1\]"):
            Metrics({"fd_inf": {"min_fraction": bad}})


@pytest.mark.parametrize("name", ["inception", "dinov2", "clip"])
def test_an_extractor_made_with_its_defaults_downloads_missing_weights(name: str, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Bugs: `download: bool = True` → False in `InceptionExtractor.__init__` and `ClipExtractor.__init__`: made with
    its defaults, the extractor refuses missing weights without trying the download `score` and the docs promise."""
    from ganeval.features import inception, pretrained
    from ganeval.features import get_extractor

    tried: list[str] = []

    def offline(*a: Any, **k: Any) -> Path:
        tried.append(name)
        raise OSError("offline (this test)")

    for env in ("GANEVAL_INCEPTION_WEIGHTS", "GANEVAL_DINOV2_WEIGHTS", "GANEVAL_CLIP_WEIGHTS"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setattr(inception, "hub_weights_path", lambda: tmp_path / "absent.pth")
    monkeypatch.setattr(inception, "_download", offline)
    monkeypatch.setattr(pretrained, "hub_cached", lambda repo, files: None)
    monkeypatch.setattr(pretrained, "hub_download", offline)
    if name != "inception":
        pytest.importorskip({"dinov2": "timm", "clip": "open_clip"}[name])
    ex = get_extractor(name)
    with pytest.raises(pretrained.WeightsNotFoundError, match=r"download failed \(OSError: offline \(this test\)\)"):
        ex.weights_path() if name == "inception" else ex.resolve()
    assert tried == [name]


def test_a_rise_whose_p_value_is_the_level_is_significant(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `max(up) <= alpha` → `<` in `wordvec_dims.monotone_claim`: steps whose one-sided p equals α (the test's
    own convention: significant at p ≤ α, as every other rule reads it) not counted as rising."""
    from ganeval.results.verdicts import HOLDS, NOT_TESTABLE
    from ganeval.studies import wordvec_dims
    from test_study_rules import matrix_rows

    dims = ["4", "8", "16"]
    gap = {(a, b): float(abs(np.log2(b) - np.log2(a))) for i, a in enumerate([4, 8, 16]) for b in [4, 8, 16][i + 1:]}
    for p, want in ((1 - 0.99, HOLDS), (np.nextafter(1 - 0.99, 1.0), NOT_TESTABLE)):
        monkeypatch.setattr(wordvec_dims, "one_sided_p", lambda x, p=p: (p, 1.0))
        assert wordvec_dims.monotone_claim(matrix_rows(gap), "imd", dims, 0.99).verdict == want


def test_a_tie_between_strips_keeps_the_lower_real_row() -> None:
    """Bug: `l2 < low` → `<=` in `memorization.authenticity_value`: a generated row equally near two real rows of two
    strips judged against the later row's ball, not the lower row's (the docstring's tie rule)."""
    from ganeval.metrics.memorization import RealBalls, authenticity_value

    x = torch.tensor([[0.0, 0.0], [4.0, 0.0]])
    real = RealBalls(x, (x * x).sum(1), torch.tensor([[1], [0]]), torch.tensor([1.0, 9.0]))  # row 1's ball is wide
    fake = torch.tensor([[2.0, 0.0]])  # d² = 4 to both rows: outside row 0's ball (1), inside row 1's (9)
    parts = [(torch.tensor([4.0]), torch.tensor([0])), (torch.tensor([4.0]), torch.tensor([1]))]
    assert authenticity_value(real, fake, parts) == 1.0  # the strips come in row order: the lower row is the first's


def test_an_input_nodes_role_is_read_from_its_target_wherever_it_sits() -> None:
    """Bug: `spec.get("_target_") or ""` → `and` in `validate.role`: the target never read, so a generator or an
    extractor given under another key is described as data."""
    from ganeval.app.validate import role

    assert role("real", {"_target_": "ganeval.gan.SampleGenerator", "path": "x.npz"}) == "given generator"
    assert role("real", {"_target_": "ganeval.features.inception.InceptionExtractor"}) == "extractor"
    assert role("real", {"_target_": "ganeval.data.Digits"}) == "data" and role("real", {}) == "data"
    assert role("features", {}) == "extractor" and role("generator", {}) == "given generator"


def test_a_resumed_run_draws_numpys_numbers_where_it_stopped() -> None:
    """Bug: `np_state[2]` → `np_state[3]` in `checkpoint.capture_rng`: numpy's position in its key stored as the
    has-gauss flag, so a resumed run draws other numbers than the run that was not interrupted."""
    from ganeval.gan.checkpoint import capture_rng, restore_rng

    noise = torch.Generator().manual_seed(1)
    np.random.seed(3)
    np.random.random(7)  # a position inside the key
    state = capture_rng(noise)
    want = (np.random.random(5), np.random.standard_normal(3), torch.randn(2, generator=noise))
    np.random.seed(99)
    restore_rng(state, noise)
    got = (np.random.random(5), np.random.standard_normal(3), torch.randn(2, generator=noise))
    for a, b in zip(got, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_the_default_workers_are_this_processs_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `os.sched_getaffinity(0)` → `(1)` in `score_request.default_workers`: the cores of process 1 (init, or a
    container's first process), not of this one."""
    import os

    from ganeval.app.score_request import default_workers

    affinity = {0: {0, 1, 2}, os.getpid(): {0, 1, 2}}
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: affinity.get(pid, set(range(64))), raising=False)
    assert default_workers(None) == 3 and default_workers(5) == 5
    affinity[0] = affinity[os.getpid()] = {4}
    assert default_workers(None) == 0


def test_stored_gray_images_without_a_channel_axis_are_samples(tmp_path: Path) -> None:
    """Bug: `arr.ndim < 3` → `< 4` in `SampleGenerator.validate`: stored N×H×W gray images (the layout its own message
    names) refused; N×D integers and an empty array still are."""
    from ganeval.gan import SampleGenerator

    gray = RNG.integers(0, 256, (6, 8, 8), dtype=np.uint8)
    np.save(tmp_path / "gray.npy", gray)
    g = SampleGenerator(tmp_path / "gray.npy")
    g.validate()
    assert g.sample(6, seed=0).shape[0] == 6
    for name, arr in (("flat.npy", gray.reshape(6, 64)), ("empty.npy", np.zeros((0, 8, 8), np.uint8))):
        np.save(tmp_path / name, arr)
        with pytest.raises(ValueError, match="expected float points N×D or images N×H×W"):
            SampleGenerator(tmp_path / name).validate()


def test_clips_workers_stop_at_uint8_and_the_device_normalises_as_open_clip(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `table(split[1], split[2])` → `table(split[2], split[2])` in `ganeval.features.clip`'s
    `ClipExtractor.device_stage`: off the CPU (the table's lookup, run here on the CPU) the std taken as the mean.
    Checked on open_clip's own eval transform, without building the network (the slow tests build it)."""
    open_clip = pytest.importorskip("open_clip")
    from ganeval.features import normtable
    from ganeval.features.clip import ClipExtractor, to_pil
    from ganeval.features.pretrained import PretrainedExtractor

    ex = ClipExtractor(arch="ViT-B-32")
    ex._preprocess = open_clip.image_transform(224, is_train=False, mean=open_clip.OPENAI_DATASET_MEAN,
                                               std=open_clip.OPENAI_DATASET_STD)
    monkeypatch.setattr(PretrainedExtractor, "device_stage", lambda self, x: x)  # the network's input itself
    images = torch.from_numpy(RNG.integers(0, 256, (3, 3, 40, 30), dtype=np.uint8))
    host = ex.host_stage(images)
    assert host.dtype == torch.uint8 and tuple(host.shape) == (3, 3, 224, 224)
    want = torch.stack([ex._preprocess(im) for im in to_pil(images)])
    torch.testing.assert_close(ex.device_stage(host), want, rtol=0, atol=1e-6)  # the CPU's path
    assert ex._table is not None
    torch.testing.assert_close(normtable.lookup(host, ex._table), want, rtol=0, atol=1e-6)  # a device's path


def test_the_digits_critic_is_three_strided_convolutions_with_leaky_relu_02() -> None:
    """Bug: `nn.LeakyReLU(0.2)` → `0.4` in `DigitsDiscriminator.__init__`: another network under the same name, so
    checkpoints trained before load into it without complaint (their weights have the same shapes). The critic is
    DCGAN's and WGAN-GP's: strided 4×4 convolutions, each followed by LeakyReLU with slope 0.2, then one linear."""
    from ganeval.gan.architectures import DigitsDiscriminator

    net = DigitsDiscriminator(dim=8, channels=1)
    layers = list(net.main)
    assert [type(m).__name__ for m in layers] == ["Conv2d", "LeakyReLU"] * 3
    assert [m.negative_slope for m in layers[1::2]] == [0.2, 0.2, 0.2]
    assert [(m.kernel_size, m.stride, m.padding) for m in layers[::2]] == [((4, 4), (2, 2), (1, 1))] * 3
    assert net(torch.zeros(2, 1, 32, 32)).shape == (2,)
