"""(issue #44) The paper's representation experiments: nn_internals, wordvec_dims, language_manifolds. Their rules on
synthetic numbers (each verdict reachable), the PIP loss against its definition, end-to-end runs at small sizes (a
planted language structure IMD must recover), and the bad inputs refused in one line before any work, leaving no
results folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from apphelp import run_inprocess
from ganeval.results.verdicts import CONTRADICTED, DEPENDS, HOLDS, NOT_TESTABLE, STAND_IN
from ganeval.studies import language_manifolds as lm
from ganeval.studies import nn_internals as nn
from ganeval.studies import wordvec_dims as wv

# ----------------------------------------------------------------------------------------------- wordvec_dims


def test_pip_loss_is_its_definition_and_ignores_rotation_and_scale() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((50, 4)), rng.standard_normal((50, 16))
    pa, pb = a @ a.T, b @ b.T
    want = np.sqrt(((pa / np.sqrt((pa ** 2).sum()) - pb / np.sqrt((pb ** 2).sum())) ** 2).sum())
    assert wv.pip_loss(a, b) == pytest.approx(want, rel=1e-12)
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    assert wv.pip_loss(a, 3.0 * a @ q) == pytest.approx(0.0, abs=1e-12)
    assert wv.pip_loss(a, b) > 0.1


def pair_rows(value: dict[str, object], runs: int, seed: int = 0) -> pd.DataFrame:
    """runs.csv rows over dims 4..64: metric -> f(gap in log2, run rng) per pair."""
    rng = np.random.default_rng(seed)
    dims = [4, 8, 16, 32, 64]
    out = []
    for r in range(runs):
        for i, a in enumerate(dims):
            for b in dims[i + 1:]:
                gap = np.log2(b) - np.log2(a)
                for m, f in value.items():
                    out.append({"run": r, "a": str(a), "b": str(b), "metric": m, "value": float(f(gap, rng))})
    return pd.DataFrame(out)


def test_wordvec_rules_reach_each_verdict() -> None:
    grows = lambda gap, rng: gap + rng.normal(0, 0.1)  # noqa: E731  distance grows with the gap
    flat = lambda gap, rng: 1.0 + rng.normal(0, 0.1)  # noqa: E731  no relation, PIP(4,16) ≈ PIP(4,8)
    claims = {c.name: c for c in wv.decide(pair_rows({"imd": grows, "pip": flat}, 12), 0.99)}
    assert claims["IMD: closer dimensions are closer (stand-in corpus)"].verdict == HOLDS
    assert claims["PIP: closer dimensions are closer (stand-in corpus)"].verdict == NOT_TESTABLE  # ρ ≈ 0
    assert claims["IMD: 4-vs-8 closer than 4-vs-16 (stand-in corpus)"].verdict == HOLDS  # IMD(4,16) − IMD(4,8) ≈ 1
    assert claims["PIP: 4-vs-8 not closer than 4-vs-16 (stand-in corpus)"].verdict == NOT_TESTABLE  # no difference
    c = {x.name: x for x in wv.decide(pair_rows({"imd": flat, "pip": grows}, 12), 0.99)}
    assert c["PIP: 4-vs-8 not closer than 4-vs-16 (stand-in corpus)"].verdict == CONTRADICTED  # PIP orders them
    assert c["IMD: 4-vs-8 closer than 4-vs-16 (stand-in corpus)"].verdict == NOT_TESTABLE
    assert c["IMD: 4-vs-8 closer than 4-vs-16 (stand-in corpus)"].detectable  # no difference: no power to say
    assert {x.verdict for x in c.values() if "English Wikipedia" in x.name} == {STAND_IN}  # the paper's own claims


def test_wordvec_without_gensim_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gensim", None)
    with pytest.raises(ValueError, match=r"pip install 'ganeval\[wordvec\]'"):
        wv.require_gensim()


@pytest.mark.slow
def test_wordvec_dims_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("gensim")
    out = tmp_path / "res"
    run_inprocess(["experiment=wordvec_dims", "runs=3", "sample_size=200", "dims=[4,8,16]", "epochs=3",
                   "train_seeds=[0,1]", "progress=false", f"results_dir={out}"])
    rows = pd.read_csv(out / "runs.csv", dtype={"a": str, "b": str})
    assert set(rows.metric) == {"imd", "pip"} and len(rows) == 2 * 3 * 3 * 2 and (rows.value > 0).all()
    assert sorted(set(rows.train_seed)) == [0, 1]  # every dimension trained from each seed
    record = json.loads((out / "summary.json").read_text())
    assert record["config"]["train_seeds"] == [0, 1] and (out / "wordvec_dims.png").stat().st_size > 5000
    claims = {c["name"]: c for c in record["claims"]}
    assert "over 2 training seeds" in claims["IMD: 4-vs-8 closer than 4-vs-16 (stand-in corpus)"]["rule"]
    assert len(claims) == 13  # 3 readings × 2 metrics, 5 on 4-vs-8 vs 4-vs-16, the paper's 2
    made = tmp_path / "again"
    made.mkdir()
    wv.regenerate(out, made)
    assert (made / "verdict.md").read_text() == (out / "verdict.md").read_text()


# ----------------------------------------------------------------------------------------------- nn_internals


def layer_rows(means: list[float], sd: float, networks: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"part": "layers", "network": n, "epoch": 5, "layer": ly, "reference": "fc", "metric": "imd",
             "value": m + rng.normal(0, sd)} for n in range(networks) for ly, m in zip(nn.LAYERS, means)]
    for n in range(networks):  # a training part whose IMD and error converge at the same epoch
        for e in range(11):
            level = max(0.0, 1 - e / 5)
            rows.append({"part": "training", "network": n, "epoch": e, "layer": "fc", "reference": "",
                         "metric": "val_error", "value": 0.05 + level})
            rows.append({"part": "training", "network": n, "epoch": e, "layer": "fc", "reference": "width 8",
                         "metric": "imd", "value": 1 + 10 * level + rng.normal(0, 0.01)})
    return pd.DataFrame(rows)


def test_nn_internals_rules_reach_each_verdict() -> None:
    by = lambda claims: {c.name.split(" (digits")[0]: c for c in claims}  # noqa: E731
    rise = by(nn.decide(layer_rows([10, 8, 12, 6, 4], 0.1, 10), 0.99))
    assert rise["layers do not separate monotonically"].verdict == HOLDS  # conv1 → conv2 rises
    assert rise["low variance across initialisations"].verdict == HOLDS  # sd 0.1 on means ≥ 4: CV < 0.1
    assert rise["IMD to the width 8 reference's last layer identifies the convergence point"].verdict == HOLDS
    assert rise["layers separate monotonically after the initial stage"].verdict == DEPENDS  # from conv2 on, not conv1
    mono = by(nn.decide(layer_rows([10, 8, 6, 4, 2], 0.2, 10), 0.99))
    assert mono["layers do not separate monotonically"].verdict == CONTRADICTED
    assert mono["layers separate monotonically after the initial stage"].verdict == HOLDS
    noisy = by(nn.decide(layer_rows([10, 8, 6, 4, 2], 5.0, 10), 0.99))
    assert noisy["low variance across initialisations"].verdict == CONTRADICTED
    assert noisy["layers do not separate monotonically"].verdict == NOT_TESTABLE
    assert noisy["layers do not separate monotonically"].detectable
    slq = by(nn.decide(layer_rows([10, 8, 6, 4, 2], 0.2, 10), 0.99, "slq"))  # probe noise not separated
    assert slq["low variance across initialisations"].verdict == NOT_TESTABLE
    assert {c.verdict for c in noisy.values() if "CIFAR" in c.name} == {STAND_IN}  # the paper's own claims


def test_settle_epoch() -> None:
    assert nn.settle_epoch(np.array([5.0, 3, 1, 1, 1, 1])) == 2  # a straight fall, then a plateau from epoch 2
    assert nn.settle_epoch(np.ones(4)) == 0  # flat: settled from the start
    assert nn.settle_epoch(np.array([5.0, 1, 1, 1, 1])) == 1  # one epoch's fall: settled at 1 (the latest equal fit)
    e = np.arange(21)
    assert nn.settle_epoch(3 + np.maximum(0, 7.3 - e)) == pytest.approx(7.3)  # a knee between epochs, exactly


def nn_args(out: Path) -> list[str]:
    return ["experiment=nn_internals", "networks=2", "epochs=2", "progress=false", f"results_dir={out}"]


def test_nn_internals_refuses_an_empty_layer_list(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="layers is empty"):
        run_inprocess([*nn_args(tmp_path / "res"), "layers=[]"])
    assert not (tmp_path / "res").exists()


def test_nn_internals_refuses_a_checkpoint_of_another_architecture(tmp_path: Path) -> None:
    import torch

    ckpt = tmp_path / "w4.pt"
    torch.save(nn.make_cnn(4).state_dict(), ckpt)  # a width-4 network given as the width-8 reference
    with pytest.raises(ValueError, match=r"is not a width-8 nn_internals CNN \(another architecture\)") as e:
        run_inprocess([*nn_args(tmp_path / "res"), f"references=[{{width: 8, checkpoint: {ckpt}}}]"])
    assert "\n" not in str(e.value) and not (tmp_path / "res").exists()
    assert nn.load_reference(4, str(ckpt)) is not None  # the right width loads


@pytest.mark.slow
def test_nn_internals_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "res"
    run_inprocess([*nn_args(out), "layers=[input,conv2]", "references=[{width: 4, checkpoint: null}]"])
    rows = pd.read_csv(out / "runs.csv", keep_default_na=False)
    assert set(rows[rows.part == "layers"].layer) == {"input", "conv2"}
    assert len(rows[(rows.part == "training") & (rows.metric == "imd")]) == 2 * 3  # 2 networks, epochs 0..2
    assert (out / "nn_internals.png").stat().st_size > 5000
    made = tmp_path / "again"
    made.mkdir()
    nn.regenerate(out, made)
    assert (made / "verdict.md").read_text() == (out / "verdict.md").read_text()


# ----------------------------------------------------------------------------------------- language_manifolds


def write_vec(path: Path, vectors: np.ndarray) -> Path:
    lines = [f"{len(vectors)} {vectors.shape[1]}"] + [f"w{i} " + " ".join(f"{v:.6f}" for v in row)
                                                      for i, row in enumerate(vectors)]
    path.write_text("\n".join(lines) + "\n")
    return path


def planted(tmp_path: Path, n: int = 300) -> tuple[dict[str, Path], dict[str, str]]:
    """Six languages in two families: a ring (1-d) and an isotropic 8-d Gaussian, each language under its own random
    rotation into its own dimension, so no coordinates are shared."""
    rng = np.random.default_rng(0)
    files, fams = {}, {}
    for i, (fam, d) in enumerate([("ring", 20), ("ring", 30), ("ring", 24), ("blob", 20), ("blob", 30), ("blob", 24)]):
        if fam == "ring":
            a = rng.uniform(0, 2 * np.pi, n)
            core = np.c_[np.cos(a), np.sin(a), np.zeros((n, 6))] + rng.normal(0, 0.01, (n, 8))
        else:
            core = rng.standard_normal((n, 8))
        q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        name = f"{fam}{i}"
        files[name] = write_vec(tmp_path / f"{name}.vec", np.c_[core, np.zeros((n, d - 8))] @ q)
        fams[name] = fam
    return files, fams


def lang_args(out: Path, files: dict[str, Path], fams: dict[str, str]) -> list[str]:
    langs = "{" + ", ".join(f"{k}: {v}" for k, v in files.items()) + "}"
    famd = "{" + ", ".join(f"{k}: {v}" for k, v in fams.items()) + "}"
    return ["experiment=language_manifolds", f"languages={langs}", f"families={famd}", "runs=2", "sample_size=200",
            "vocab=250", "kid_subset=100", "progress=false", f"results_dir={out}"]


@pytest.mark.slow
def test_language_manifolds_recovers_a_planted_structure(tmp_path: Path) -> None:
    files, fams = planted(tmp_path)
    out = tmp_path / "res"
    run_inprocess(lang_args(out, files, fams))
    claims = {c["name"]: c for c in json.loads((out / "summary.json").read_text())["claims"]}
    imd = claims["IMD recovers the language families"]
    assert imd["verdict"] == HOLDS and imd["evidence"] == "ARI = 1.000"
    rows = pd.read_csv(out / "runs.csv", dtype={"a": str, "b": str})
    assert set(rows.metric) == {"imd", "fid", "kid"}
    same = rows[rows.metric == "fid"]
    assert {(a, b) for a, b in zip(same.a, same.b)} == {("ring0", "blob3"), ("ring1", "blob4"), ("ring2", "blob5")}
    assert (out / "language_manifolds.png").stat().st_size > 5000
    mat = lm.clusters(np.array([[0, 1, 9, 9], [1, 0, 9, 9], [9, 9, 0, 1], [9, 9, 1, 0]], float), 2)
    assert mat[0] == mat[1] != mat[2] == mat[3]


def test_language_manifolds_refuses_a_file_with_fewer_words_than_vocab(tmp_path: Path) -> None:
    files, fams = planted(tmp_path, n=120)
    args = [a if not a.startswith("vocab=") else "vocab=250" for a in lang_args(tmp_path / "res", files, fams)]
    args = [a if not a.startswith("sample_size=") else "sample_size=100" for a in args]
    with pytest.raises(ValueError, match="fewer than vocab=250") as e:
        run_inprocess(args)
    assert "\n" not in str(e.value) and not (tmp_path / "res").exists()


def test_language_manifolds_offline_is_not_testable(tmp_path: Path) -> None:
    out = tmp_path / "res"
    run_inprocess(["experiment=language_manifolds", "progress=false", f"results_dir={out}"])
    claim = json.loads((out / "summary.json").read_text())["claims"][0]
    assert claim["verdict"] == NOT_TESTABLE and "16 Wikipedias" in claim["detectable"]
    assert not (out / "runs.csv").exists()


# ------------------------------------------------------------------------------------- c = 2 and scalability


def test_er_spectrum_and_linear_trace_against_closed_forms() -> None:
    from ganeval.metrics.imd import ER_EPSILON, normalize_trace
    from ganeval.studies import er_normalisation as er

    n = 12  # the complete graph: normalised Laplacian eigenvalues 0 and n/(n−1) (n − 1 times)
    lam = er.spectrum(np.ones((n, n)) - np.eye(n))
    np.testing.assert_allclose(lam, [0.0] + [n / (n - 1)] * (n - 1), atol=1e-12)
    t = np.asarray(er.T_GRID)
    ones = np.ones_like(t)  # normalize_trace divides by the c = 2 linear trace: the same numbers
    np.testing.assert_allclose(1 / normalize_trace(ones, "er", 500, 5, t), er.linear_trace(500, 5, t) + ER_EPSILON,
                               rtol=1e-12)
    a = er.er_graph(300, 5, np.random.default_rng(0))
    assert (a == a.T).all() and a.sum(1).min() >= 1 and 250 < len(a) <= 300  # the giant component, connected


def er_rows(c: float, graphs: int = 6, noise: float = 0.01) -> pd.DataFrame:
    """runs.csv rows whose edges sit at 1 ± c/√d̄ and whose trace is the c-linear trace, with a little noise."""
    from ganeval.studies import er_normalisation as er

    rng = np.random.default_rng(1)
    t = np.asarray(er.T_GRID)
    out = []
    for d in (5.0, 10.0):
        for g in range(graphs):
            tr = er.linear_trace(400, d, t, c) * (1 + rng.normal(0, noise, t.size))
            e = c / np.sqrt(d) * (1 + rng.normal(0, noise))
            out += [{"n": 400, "degree": d, "graph": g, "core": 400, "lambda2": 1 - e, "lambda_max": 1 + e, "t": tv,
                     "trace": v} for tv, v in zip(t, tr)]
    return pd.DataFrame(out)


def test_er_rules_reach_each_verdict() -> None:
    from ganeval.studies import er_normalisation as er

    tight, edge = er.decide(er_rows(2.0, noise=0.002), 0.99)[0]
    assert tight.verdict == HOLDS and edge.verdict == HOLDS and "best c 2" in tight.evidence
    tight, edge = er.decide(er_rows(1.5), 0.99)[0]  # the graphs' c is 1.5: c = 2 is far off on both counts
    assert tight.verdict == CONTRADICTED and edge.verdict == CONTRADICTED and "best c 1.5" in tight.evidence


def timing_rows(power: dict[str, float], repeats: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"metric": m, "n": n, "repeat": r, "seconds": 1e-6 * n ** p * np.exp(rng.normal(0, 0.02))}
                         for r in range(repeats) for n in (1000, 2000, 4000, 8000) for m, p in power.items()])


def test_scalability_rules_reach_each_verdict() -> None:
    from ganeval.studies import scalability as sc

    by = lambda claims: {c.name: c.verdict for c in claims}  # noqa: E731
    ok = by(sc.decide(timing_rows({"fid": 0.0, "imd_approx": 1.1, "kid_full": 2.0}), 0.99)[0])
    assert set(ok.values()) == {HOLDS}, ok
    bad = by(sc.decide(timing_rows({"fid": 1.0, "imd_approx": 2.0, "kid_full": 1.0}), 0.99)[0])
    assert set(bad.values()) == {CONTRADICTED}, bad  # KID linear, IMD quadratic, FID linear, IMD above KID
    slopes = sc.slopes(timing_rows({"kid_full": 2.0}))
    np.testing.assert_allclose(slopes.slope, 2.0, atol=0.05)
