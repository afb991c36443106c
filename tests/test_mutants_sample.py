"""(issue #56) The survivors of the fresh mutation sample (`scripts/mutate.py --count 160 --seed 5601`) and of
`--changed f2a4c72`, each killed here by a test aimed at what the mutant changes (docs/development.md lists them with
their names); the equivalent ones are listed there with why."""

from __future__ import annotations

import math
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

RNG = np.random.default_rng(56)


def test_the_memory_check_at_one_run_sizes_the_largest_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `max` → `min` over the sets' lengths at runs = 1: the full sets' memory judged by the smallest set."""
    import ganeval
    import ganeval.app.score_request as score_request

    seen: list[tuple[int, int]] = []

    def check_memory(metrics, rows, width, *args):  # type: ignore[no-untyped-def]
        seen.append((rows, width))

    monkeypatch.setattr(score_request, "check_memory", check_memory)
    real, fake = RNG.standard_normal((300, 6)), RNG.standard_normal((120, 6))
    ganeval.score(real, fake, metrics="fid", progress=False)
    assert seen == [(300, 6)]
    ganeval.score(fake, real, metrics="fid", progress=False)
    assert seen[-1] == (300, 6)


def test_a_results_folder_gets_its_figures_by_default(tmp_path: Path) -> None:
    """Bug: `plots=True` → False in `score`'s signature: no figure unless asked for."""
    import ganeval.app.scoring as ganeval  # ganeval.score

    real, fake = RNG.standard_normal((200, 4)), RNG.standard_normal((200, 4)) + 0.3
    ganeval.score(real, fake, metrics="fid", runs=3, sample_size=100, out=tmp_path / "res", progress=False)
    assert sorted(p.name for p in (tmp_path / "res").glob("*.png")), "no figure written by default"
    ganeval.score(real, fake, metrics="fid", runs=3, sample_size=100, out=tmp_path / "none", progress=False,
                  plots=False)
    assert not list((tmp_path / "none").glob("*.png"))


def test_the_scan_stage_is_the_time_it_took() -> None:
    """Bug: `perf_counter() - t0` → `+ t0`: the scan's seconds reported as twice the clock's reading."""
    import time

    import ganeval.app.scoring as ganeval  # ganeval.score

    real, fake = RNG.standard_normal((100, 4)), RNG.standard_normal((100, 4))
    t0 = time.perf_counter()
    r = ganeval.score(real, fake, metrics="fid", progress=False)
    wall = time.perf_counter() - t0
    assert r is not None and r.stages
    assert all(0 <= s <= wall for s in r.stages.values()), r.stages


def test_config_arguments_are_checked_after_interpolation(tmp_path: Path) -> None:
    """Bug: `resolve=True` → False where a target's arguments are checked: `${…}` left unresolved, so an
    interpolation to a wrong type passes the check (and one to a right type is judged as a string)."""
    from omegaconf import OmegaConf

    from ganeval.app.validate import check_nodes

    good = OmegaConf.create({"n_rows": 300, "data": {"_target_": "ganeval.data.swiss_roll", "n": "${n_rows}"}})
    assert check_nodes(good, ("data",)) == ["data arguments"]
    bad = OmegaConf.create({"n_rows": "many", "data": {"_target_": "ganeval.data.swiss_roll", "n": "${n_rows}"}})
    with pytest.raises(ValueError, match="many"):
        check_nodes(bad, ("data",))


def test_a_circle_is_a_sphere_in_two_dimensions() -> None:
    """Bug: `dim < 2` → `dim <= 2`: the 1-sphere (a circle in R²) refused."""
    from ganeval.data.manifolds import sphere

    x = sphere(500, dim=2, seed=0, radius=2.0)
    assert x.shape == (500, 2) and np.allclose(np.linalg.norm(x, axis=1), 2.0, atol=1e-5)
    with pytest.raises(ValueError, match="dim must be an int >= 2"):
        sphere(10, dim=1)


def test_a_stored_zip_member_is_read_by_offset(tmp_path: Path) -> None:
    """Bugs: the local header's signature compared over 5 bytes (`local[:4]` → `[:5]`) or its length read as 31:
    every stored member falls back to zipfile's CRC-checked read (`checked` True) instead of its bytes by offset."""
    from ganeval.data.sources.containers import ZipContainer

    payload = {"a.png": bytes(range(256)) * 3, "b/c.png": b"\x89PNG" + bytes(40)}
    path = tmp_path / "s.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        for name, data in payload.items():
            z.writestr(name, data)
    c = ZipContainer(path)
    for name, data in payload.items():
        assert c.raw(name) == (data, False)


def test_the_collate_step_transforms_a_batch_and_passes_an_error_on() -> None:
    """Bug: `err is not None` → `err is None`: batches left untransformed, and the transform called on an error."""
    from ganeval.data.sources.images import Finish

    batch = torch.arange(6, dtype=torch.uint8).reshape(1, 1, 2, 3)
    finish = Finish(lambda b: b.float() / 2)
    out, err = finish((batch, None))
    assert err is None and out is not None and torch.equal(out, batch.float() / 2)
    assert finish((None, "cannot decode x.png")) == (None, "cannot decode x.png")
    assert Finish()((batch, None))[0] is batch


def _png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    iend = b"IEND"
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
            + struct.pack(">I", 0) + iend + struct.pack(">I", zlib.crc32(iend)))


def test_a_header_declaring_too_many_pixels_is_refused(tmp_path: Path) -> None:
    """Bug: `w * h` → `w / h` in the decompression-bomb check: a 20 000 × 20 000 header passes the scan."""
    from ganeval.data.sources.images import MAX_PIXELS, ImageSource

    assert 20_000 * 20_000 > MAX_PIXELS
    (tmp_path / "bomb.png").write_bytes(_png_header(20_000, 20_000))
    with pytest.raises(ValueError, match="20000×20000 pixels: refusing a possible decompression bomb"):
        ImageSource(tmp_path)


def test_a_relative_interval_starting_at_the_axis_end_is_not_wholly_outside() -> None:
    """Bug: `a > hi` → `a >= hi`: an interval whose low end is the axis' upper end (2.5) read as wholly outside it
    (contradicted) where it touches it (not testable)."""
    from ganeval.studies.stability_report import AXIS, _diverge_claims

    lo, hi = AXIS

    def summary(low: float) -> pd.DataFrame:
        return pd.DataFrame({"metric": "fid", "knn": "", "pair": "different", "n": [500, 1000],
                             "relative_mean": [low + 0.2, 1.0], "relative_ci_low": [low, 0.9],
                             "relative_ci_high": [low + 0.4, 1.1]})

    [touching] = _diverge_claims(summary(hi), 1000)
    assert touching["holds"] is None and touching["straddles"] == [500]
    [beyond] = _diverge_claims(summary(hi + 1e-9), 1000)
    assert beyond["holds"] is False
    [within] = _diverge_claims(summary(hi - 0.4), 1000)
    assert within["holds"] is True and lo < hi


def test_an_effect_size_interval_of_a_non_finite_spread_is_nan() -> None:
    """Bug: `isfinite(mean) and isfinite(std)` → `or`: an interval computed from a NaN or infinite spread."""
    from ganeval.results.power import effect_size_interval

    for mean, std in ((1.0, math.nan), (1.0, math.inf), (math.nan, 1.0), (math.inf, 1.0)):
        lo, hi = effect_size_interval(mean, std, 10, 0.99)
        assert math.isnan(lo) and math.isnan(hi), (mean, std, lo, hi)
    lo, hi = effect_size_interval(1.0, 2.0, 10, 0.99)
    assert lo < 0.5 < hi


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_zero_dimensional_tensor_is_uploaded_as_itself() -> None:
    """Bug: `reshape(1)` → `reshape(2)` for a 0-d tensor on the staged GPU path (a CPU never takes it)."""
    from ganeval.common import upload

    got = upload(torch.tensor(3.5), "cuda")
    assert got.device.type == "cuda" and got.shape == () and float(got) == 3.5


def test_a_zero_row_stays_zero_when_rows_are_normalised() -> None:
    """Bug: `norm > 0` → `norm >= 0` in CMMD's row normalisation: a zero row divided by its zero norm (NaN)."""
    from ganeval.metrics.cmmd import prepared_rows

    x = torch.tensor([[3.0, 4.0], [0.0, 0.0]], dtype=torch.float64)
    rows, sq = prepared_rows(x, True)
    assert torch.equal(rows, torch.tensor([[0.6, 0.8], [0.0, 0.0]], dtype=torch.float64))
    assert torch.allclose(sq, torch.tensor([1.0, 0.0], dtype=torch.float64))


def test_a_stored_samples_shape_is_read_without_loading_them(tmp_path: Path) -> None:
    """Bug: `source == 'wordvectors'` → `!=` in `SampleGenerator.sample_shape`: a .npy read whole (not its header
    and first row, mapped) and word vectors read as an array file."""
    from ganeval.gan.stored_samples import SampleGenerator

    np.save(tmp_path / "x.npy", RNG.standard_normal((50, 7)).astype(np.float32))
    g = SampleGenerator(tmp_path / "x.npy")
    assert g.sample_shape() == (7,) and g._data is None  # mapped, not loaded
    (tmp_path / "w.vec").write_text("3 4\n" + "".join(f"w{i} {i} 1 2 3\n" for i in range(3)))
    v = SampleGenerator(tmp_path / "w.vec", vocab=2)
    assert v.sample_shape() == (4,) and len(v) == 2


def test_heat_traces_table_shows_the_configured_temperatures(tmp_path: Path) -> None:
    """Bug: `cfg.get('table_t') or [defaults]` → `and`: a configured table_t replaced by the defaults."""
    import json
    import shutil

    from ganeval.studies.heat_traces import regenerate

    ref = Path(__file__).resolve().parents[1] / "results" / "reference" / "heat_traces"
    src = tmp_path / "src"
    shutil.copytree(ref, src)
    record = json.loads((src / "summary.json").read_text())
    record["config"]["table_t"] = [2, 20]
    (src / "summary.json").write_text(json.dumps(record))
    regenerate(src, tmp_path / "out")
    head = next(ln for ln in (tmp_path / "out" / "table.md").read_text().splitlines() if ln.startswith("| data |"))
    ts = [float(c.split("= ")[1]) for c in head.strip("|").split("|")[1:]]
    assert len(ts) == 2 and ts[0] == pytest.approx(2, rel=0.05) and ts[1] == pytest.approx(20, rel=0.05), head


def test_the_gradient_penalty_is_on_the_gradients_euclidean_norm() -> None:
    """Bug: `norm(2, dim=1)` → `norm(3, …)` in WGAN-GP's penalty. A linear critic D(x) = w·x has gradient w at every
    point, so the penalty is (‖w‖₂ − 1)² exactly, whatever the interpolates."""
    from torch import nn

    from ganeval.gan.config import GanConfig
    from ganeval.gan.steps import critic_step

    class Gen(nn.Module):
        latent_shape = (3,)

        def forward(self, z: torch.Tensor) -> torch.Tensor:
            return z * 2.0

    critic = nn.Linear(3, 1, bias=False)
    w = torch.tensor([[1.0, 2.0, 2.0]])  # ‖w‖₂ = 3, ‖w‖₃ = 17^(1/3)
    with torch.no_grad():
        critic.weight.copy_(w)
    cfg = GanConfig(name="wgan_gp", gp_weight=10.0, clip=None)
    opt = torch.optim.SGD(critic.parameters(), lr=0.0)
    out = critic_step(Gen(), critic, opt, cfg, torch.randn(16, 3), torch.Generator().manual_seed(0))
    assert float(out[2]) == pytest.approx((3.0 - 1.0) ** 2, rel=1e-6)


def test_float_images_become_the_same_pil_images_as_their_uint8() -> None:
    """Bug: `batch.dtype != torch.uint8` → `==` in `to_pil`: float images in [0, 1] handed to PIL unconverted."""
    from ganeval.features.resize import to_pil

    u8 = torch.from_numpy(RNG.integers(0, 256, (2, 3, 5, 4), dtype=np.uint8))
    want = [np.asarray(im) for im in to_pil(u8)]
    got = [np.asarray(im) for im in to_pil(u8.float() / 255)]
    assert all(np.array_equal(a, b) for a, b in zip(want, got, strict=True))
    assert want[0].shape == (5, 4, 3) and np.array_equal(want[0], u8[0].permute(1, 2, 0).numpy())


def test_a_large_binary_file_is_read_across_its_chunks(tmp_path: Path) -> None:
    """Bug: `len(buf) - pos` → `+` in the binary reader: a chunk that ends inside a word (more to come) taken for a
    word without a space, so a file over the 1 MiB chunk is refused. 3 MB of 40-letter words: every chunk boundary
    falls in some entry, most of each entry being its word."""
    from ganeval.data.wordvectors import read_word_vectors

    n, d = 60_000, 2
    vectors = RNG.standard_normal((n, d)).astype(np.float32)
    words = [f"{i:08d}" + "w" * 32 for i in range(n)]
    path = tmp_path / "big.bin"
    with path.open("wb") as f:
        f.write(f"{n} {d}\n".encode())
        for w, v in zip(words, vectors, strict=True):
            f.write(w.encode() + b" " + v.tobytes() + b"\n")
    assert path.stat().st_size > 2 * (1 << 20)
    got = read_word_vectors(path)
    assert got.words == words and np.array_equal(got.vectors, vectors)


def test_a_member_over_256_mib_is_refused_as_a_bomb() -> None:
    """Bug: `256 << 20` → `256 << 21`: members up to 512 MiB (decompressed) let through. A tar member has no
    compressed size of its own (`packed` None), so only this limit stands."""
    from ganeval.data.sources.containers import MAX_MEMBER_BYTES, _check_member

    assert MAX_MEMBER_BYTES == 256 * 2**20
    assert _check_member(Path("a.tar"), "x.png", 256 * 2**20, None) is True
    with pytest.raises(ValueError, match="declares 268435457 bytes decompressed: refusing a possible archive bomb"):
        _check_member(Path("a.tar"), "x.png", 256 * 2**20 + 1, None)


def test_scale_is_checked_from_one_row_and_an_empty_set_passes() -> None:
    """Bug: `len(arr) == 0` → `== 1` in `check_scale`: a single row beyond float32 let through."""
    from ganeval.metrics.validation import check_scale

    with pytest.raises(ValueError, match="beyond float32's range"):
        check_scale("one.npy", np.full((1, 4), 1e39))
    check_scale("empty.npy", np.zeros((0, 4)))


def test_the_interval_narrows_from_the_smallest_n_to_the_largest() -> None:
    """Bug: the largest n's half-width read at position 1 (`iloc[-1]` → `iloc[1]`): with three sizes whose middle one
    is the widest, "narrows from the smallest n to the largest" judged on the middle one."""
    from ganeval.studies.stability_grid import PAIRS
    from ganeval.studies.stability_report import _interval_claims

    summary = pd.DataFrame([{"metric": "fid", "knn": "", "pair": p, "n": n, "half_width": hw}
                            for p in PAIRS for n, hw in ((500, 1.0), (1000, 1.5), (2000, 0.5))])
    claims = _interval_claims(summary, 500, 2000)
    assert len(claims) == len(PAIRS) and all(c["holds"] is True for c in claims)
    assert "1 at n=500 → 0.5 at n=2000 (×0.50)" in claims[0]["detail"]
    wider = summary.assign(half_width=summary.half_width.where(summary.n != 2000, 1.2))
    assert all(c["holds"] is False for c in _interval_claims(wider, 500, 2000))


def test_an_image_grid_without_a_row_count_is_square() -> None:
    """Bug: `nrow or ceil(√n)` → `and`: no row count given (the default) gives no grid at all."""
    from ganeval.gan.plots import image_grid

    images = np.stack([np.full((3, 4, 6), i * 40, dtype=np.uint8) for i in range(5)])
    grid = image_grid(images, pad=1)
    assert grid.shape == (2 * (4 + 1) + 1, 3 * (6 + 1) + 1, 3)  # ⌈√5⌉ = 3 per row, 2 rows
    assert (grid[1:5, 1:7] == 0).all() and (grid[6:10, 8:14] == 160).all()  # image 0 at (0, 0), image 4 at (1, 1)


def test_the_spatial_cut_keeps_seven_channels_in_height_width_channel_order() -> None:
    """Bug: `reshape(x.shape[0], -1)` → `x.shape[1]`: the rows of a batch not its images (sFID's spatial features)."""
    from ganeval.features.inception import SPATIAL_CHANNELS, SpatialCut

    x = torch.randn(3, 768, 17, 17, generator=torch.Generator().manual_seed(0))
    got = SpatialCut()(x)
    assert got.shape == (3, 17 * 17 * SPATIAL_CHANNELS)
    assert torch.equal(got[1].reshape(17, 17, SPATIAL_CHANNELS), x[1, :SPATIAL_CHANNELS].permute(1, 2, 0))


def test_auto_precision_keeps_small_sets_in_float32_by_their_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `x.shape[0] < AUTO_MIN_ROWS` → `x.shape[1]`: a set judged small by its width, not its rows. A device
    whose reduced products pay (faked here, as on a GPU with TF32) keeps float32 for few rows, however wide."""
    import ganeval.metrics.knn_precision as kp

    monkeypatch.setattr(kp, "measure_precision", lambda device: "bfloat16")
    monkeypatch.setattr(kp, "undecided_share", lambda x, k, precision: 0.0)
    monkeypatch.setitem(kp._ratios, "cpu", 0.1)
    assert kp.auto_precision(torch.zeros(100, kp.AUTO_MIN_ROWS), 5) == "float32"  # few rows, wide
    assert kp.auto_precision(torch.zeros(kp.AUTO_MIN_ROWS, 2), 5) == "bfloat16"  # many rows, narrow


def test_the_nv_panel_draws_each_line_from_its_own_rows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Bug: `df.figure == "nv"` → `!=` in `slq_accuracy.plot`: the error-against-nv panel drawn from the m panel's
    rows (its curves, its dashed exact theory or its dotted bound)."""
    import ganeval.results.plots as plots
    from ganeval.studies.slq_accuracy import plot

    rows = []
    for t in (1.0, 10.0):
        for m in (5, 10):  # the m panel's rows carry nv = 100 too, with other values
            rows.append({"figure": "m", "quantity": "rms_error", "t": t, "m": m, "nv": 100, "value": 0.5 / m,
                         "ci_low": 0.4 / m, "ci_high": 0.6 / m, "reference": 1.0 / m})
            rows.append({"figure": "m", "quantity": "lanczos_bias", "t": t, "m": m, "nv": 100, "value": 1e-3,
                         "ci_low": 0.0, "ci_high": 2e-3, "reference": None})
            rows.append({"figure": "m", "quantity": "rms_error_theory", "t": t, "m": m, "nv": 100, "value": 7.0,
                         "ci_low": None, "ci_high": None, "reference": None})
        for nv in (10, 100):
            rows.append({"figure": "nv", "quantity": "rms_error", "t": t, "m": 10, "nv": nv, "value": t / nv,
                         "ci_low": 0.9 * t / nv, "ci_high": 1.1 * t / nv, "reference": 3.0 / nv})
            rows.append({"figure": "nv", "quantity": "rms_error_theory", "t": t, "m": 10, "nv": nv,
                         "value": 2 * t / nv, "ci_low": None, "ci_high": None, "reference": None})
        for name in ("std_plain", "std_cv"):
            rows.append({"figure": "variance", "quantity": name, "t": t, "m": 10, "nv": 100, "value": 0.1,
                         "ci_low": None, "ci_high": None, "reference": 0.1})
    drawn = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: drawn.append(fig))
    plot(pd.DataFrame(rows), tmp_path / "f.png", "title")
    lines = drawn[0].axes[1].get_lines()
    got = [(ln.get_linestyle(), list(ln.get_xdata()), [round(float(v), 9) for v in ln.get_ydata()]) for ln in lines]
    assert got == [("-", [10, 100], [0.1, 0.01]), ("--", [10, 100], [0.2, 0.02]),
                   ("-", [10, 100], [1.0, 0.1]), ("--", [10, 100], [2.0, 0.2]),
                   (":", [10, 100], [0.3, 0.03])]


def test_ranks_of_two_feature_widths_are_refused_before_the_gather(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `len(seen) > 1` → `> 2` in `Protocol._sync_dist`: two ranks of widths 6 and 7 gathered into one pool.
    The gather of the widths is faked (the slow gloo test in test_torchmetrics_ddp.py runs the real one)."""
    pytest.importorskip("torchmetrics")
    from ganeval.torchmetrics import Protocol

    def fake_world(other: int) -> None:
        def all_gather(out, mine, group=None):  # type: ignore[no-untyped-def]
            out[0].copy_(mine)
            out[1].fill_(other)

        monkeypatch.setattr(torch.distributed, "get_world_size", lambda group=None: 2)
        monkeypatch.setattr(torch.distributed, "all_gather", all_gather)

    def gathered(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise LookupError("reached the gather of the pools")

    metric = Protocol(["fid"], features="identity")
    metric.update(torch.randn(8, 6), real=True)
    metric.update(torch.randn(8, 6), real=False)
    fake_world(7)
    with pytest.raises(ValueError, match="^the ranks give 6 and 7 features per sample"):
        metric._sync_dist(gathered)
    fake_world(6)
    with pytest.raises(LookupError):
        metric._sync_dist(gathered)


def test_a_private_use_character_in_a_note_shows_as_itself() -> None:
    """The report's inline markup holds escaped characters in Unicode's Private Use Area while it reads the markup;
    a note's own private-use characters there (any offset the code might choose) must come out as themselves."""
    from ganeval.results.report_tables import _inline

    every_block = "".join(chr(o + 33) for o in range(0xE000, 0xF800, 0x80))  # the BMP's whole private use area
    for own in ("\ue021", "\ue07e", "".join(chr(c) for c in range(0xE000, 0xE100)), every_block):  # a block's `!`, `~`
        assert _inline(own + r" \*a\* **b**") == own + " *a* <strong>b</strong>"


def test_slq_traces_of_the_nn_study_are_each_their_own_draw() -> None:
    """Bug: `rng is not None` → `is` in `nn_internals.tracer`: every SLQ trace drawn with seed 0, not its own key's
    `default_rng([seed, *key])`."""
    from ganeval.metrics import heat_trace
    from ganeval.studies.nn_internals import tracer

    x = RNG.standard_normal((120, 5)).astype(np.float32)
    opts = {"k": 5, "m": 10, "nv": 20}
    trace = tracer(opts, "slq", 3)
    want = heat_trace(x, seed=np.random.default_rng([3, 1, 2]), method="slq", **opts)
    np.testing.assert_array_equal(trace(x, (1, 2)), want)
    assert not np.array_equal(trace(x, (1, 2)), trace(x, (2, 1)))
    np.testing.assert_array_equal(tracer(opts, "exact", 3)(x, (1, 2)), heat_trace(x, method="exact", **opts))


def test_a_curve_flat_from_epoch_one_settles_at_one_at_any_scale() -> None:
    """Bug: `(yc ** 2).sum()` → `(yc ** 3).sum()` in the tie tolerance of `settle_epoch`: knees that fit equally well
    (every κ ≤ 1 fits a curve flat from epoch 1 exactly) told apart by rounding, for a rising curve of large values."""
    from ganeval.studies.nn_internals import settle_epoch

    for scale in (1.0, 1e3, 1e5):
        assert settle_epoch(scale * np.array([0.0, 10, 10, 10, 10, 10])) == 1.0
        assert settle_epoch(scale * np.array([10.0, 0, 0, 0, 0, 0])) == 1.0


def test_the_planted_languages_are_three_families_of_three(tmp_path: Path) -> None:
    """Bug: `("roll", 3)` → 4 in `language_manifolds.PLANTED`: the demonstration docs/paper.md describes (nine
    languages in three families) is not the one built."""
    from ganeval.data.wordvectors import read_word_vectors
    from ganeval.studies.language_manifolds import planted_families

    files, families = planted_families(tmp_path, n=40, dim=12, seed=1)
    assert sorted(families.items()) == sorted((f"{f}_{c}", f) for f in ("ring", "blob", "roll") for c in "abc")
    for name, path in files.items():
        assert read_word_vectors(path).vectors.shape == (40, 12), name


def test_connectivity_counts_every_set_at_every_size_digits_up_to_its_rows() -> None:
    """Bug: `name.startswith("digits") and n > 1797` → `or` in `paper_checks.measure_connected`: the digits left out
    at every size, and every set left out above 1 797 rows."""
    from ganeval.studies.paper_checks import measure_connected

    got = {(r["name"], r["n"]) for r in measure_connected([60, 1800], seed=0)}
    names = {s for s, _ in got}
    assert len(names) == 4 and any(s.startswith("digits") for s in names)
    assert got == {(s, n) for s in names for n in (60, 1800) if not (s.startswith("digits") and n > 1797)}


def test_the_knn_table_gives_the_highest_load_seen_at_each_size() -> None:
    """Bug: `max` → `min` over the parts' load averages in `stability_report.timing_table` (`load_1min_max`)."""
    from types import SimpleNamespace

    from ganeval.studies.stability_report import timing_table

    parts = [SimpleNamespace(n=100, name="exact"), SimpleNamespace(n=100, name="approx"),
             SimpleNamespace(n=200, name="exact")]
    timings = {"n100-exact": {"seconds_per_run": 1.5, "load_1min": 2.0},
               "n100-approx": {"seconds_per_run": 0.5, "load_1min": 5.0}}
    got = timing_table([100, 200], parts, timings, {100: 0.99})  # type: ignore[arg-type]
    assert got["load_1min_max"].iloc[0] == 5.0 and math.isnan(got["load_1min_max"].iloc[1])
    assert got["seconds_per_run_approx"].iloc[0] == 0.5 and got["approx_recall"].iloc[0] == 0.99


def test_the_control_variates_std_rows_are_the_probes_sample_stds() -> None:
    """Bug: `ddof=1` → 2 in `slq_accuracy.measure`: the std with and without the control variate (and their ratio)
    not the sample standard deviation over the probes, n − 1 in the denominator."""
    from types import SimpleNamespace

    from ganeval.studies.slq_accuracy import Pool, measure

    rng = np.random.default_rng(5)
    m_steps, probes, t = 3, 40, np.array([0.1, 1.0, 10.0, 100.0])
    truth = np.array([50.0, 20.0, 5.0, 1.5])
    slq = truth * (1 + 0.1 * rng.standard_normal((m_steps, probes, len(t))))
    plain = truth * (1 + 0.3 * rng.standard_normal((m_steps, probes, len(t))))
    pool = Pool(t=t, truth=truth, slq=slq, slq_plain=plain, exact=slq[-1], forms_slq=slq / 50, forms_exact=slq[-1] / 50,
                l_slq=rng.uniform(0.5, 1.0, (m_steps, probes)), var_theory=np.full(4, 0.01),
                var_theory_plain=np.full(4, 0.09), alpha_theory=np.full(4, 0.5), n=50)
    cfg = SimpleNamespace(nv=10, m=2, t_errors=[1.0], nv_list=[5, 10], min_batches=2, t_variance_min=0.5,
                          t_variance_max=20.0, bootstrap=100, delta=0.1)
    df = measure(pool, cfg, 0.95, seed=1)
    var = df[df.figure == "variance"].set_index(["quantity", "t"])["value"]
    for j in (1, 2):  # t = 1 and 10: the variance rows' temperatures
        x, y = slq[1][:, j], plain[1][:, j]
        np.testing.assert_allclose(var[("std_cv", t[j])], x.std(ddof=1) / np.sqrt(10) / truth[j], rtol=1e-12)
        np.testing.assert_allclose(var[("std_plain", t[j])], y.std(ddof=1) / np.sqrt(10) / truth[j], rtol=1e-12)
        np.testing.assert_allclose(var[("std_ratio", t[j])], x.std(ddof=1) / y.std(ddof=1), rtol=1e-12)


def test_only_old_scratch_folders_whose_owner_is_gone_are_removed(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `old and lock free` → `old or lock free` in `loop._remove_stale_scratch`: a running run's scratch folder
    (its owner lock held) removed once it is a minute old, or a new one removed before its owner locks it."""
    import os
    import tempfile
    import time

    from ganeval.protocol import loop, store

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # gettempdir(): this test's folder, never the real one

    def scratch(name: str, age: float) -> int:
        (tmp_path / (loop.SCRATCH_PREFIX + name)).mkdir()
        owner = tmp_path / (loop.SCRATCH_PREFIX + name) / loop.OWNER_FILE
        owner.write_text("")
        os.utime(owner, (time.time() - age, time.time() - age))
        return os.open(owner, os.O_RDWR)

    held = scratch("running", 10 * loop.STALE_AFTER_S)
    assert store.try_lock(held)  # its owner (this open file) still runs
    for fd in (scratch("killed", 10 * loop.STALE_AFTER_S), scratch("starting", 0.0)):
        os.close(fd)
    try:
        loop._remove_stale_scratch()
    finally:
        os.close(held)
    assert sorted(p.name for p in tmp_path.iterdir()) == [loop.SCRATCH_PREFIX + "running",
                                                           loop.SCRATCH_PREFIX + "starting"]


def test_vendis_memory_is_the_bytes_of_its_d_by_d_float64_matrix() -> None:
    """Bug: `8.0 * d * d` → `16.0 * d * d` in Vendi's declared memory: the memory check refuses (or admits) by the
    wrong size. Its label names the matrix; the number must be that matrix's bytes."""
    from ganeval.metrics.vendi import METRIC

    for n, d in ((100, 7), (5000, 64)):
        need, label = METRIC.memory(n, d, {})
        assert need == np.zeros((d, d), dtype=np.float64).nbytes and f"{d}×{d} float64" in label


@pytest.mark.parametrize("width", [3, 4])
def test_torus_takes_points_in_3d_and_refuses_others(width: int, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `real.shape[1] != 3` → `!= 4` in `torus.run`: the torus's own 3-d points refused (or 4-d ones taken).
    The data are stood in for and the run is stopped right after the check (training would take minutes)."""
    from apphelp import run_inprocess

    from ganeval.app import generators, pipeline

    def past_the_check(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise LookupError("past the data check")

    monkeypatch.setattr(pipeline, "load_data", lambda plan, cfg, name: np.zeros((300, width)))
    monkeypatch.setattr(generators, "plan_generator", past_the_check)
    over = ["experiment=torus", "runs=2", "sample_size=100", "n_generated=200", "data.n=300", "progress=false",
            "metrics.kid.subset_size=50",
            f"results_dir={tmp_path / 'res'}", f"cache_dir={tmp_path / 'cache'}", f"models_dir={tmp_path / 'models'}"]
    with pytest.raises(LookupError if width == 3 else ValueError,
                       match="past the data check" if width == 3 else r"^torus needs N×3 points as data, got shape "
                                                                      r"\(300, 4\)$"):
        run_inprocess(over)


def test_an_er_graph_of_degree_n_minus_1_is_complete() -> None:
    """Bug: `degree / (n − 1)` → `degree / (n + 1)` in `er_normalisation.er_graph`: G(n, p) with p = degree/(n − 1)
    has mean degree `degree`; at degree = n − 1, p = 1 and the graph is complete."""
    from ganeval.studies.er_normalisation import er_graph

    for n in (3, 5, 12):
        a = er_graph(n, float(n - 1), np.random.default_rng(n))
        np.testing.assert_array_equal(a, 1.0 - np.eye(n))


def test_the_probe_bootstrap_draws_every_probe() -> None:
    """Bug: `rng.integers(0, P)` → `rng.integers(1, P)` in `slq_accuracy.bootstrap`: the first probe never drawn.
    With that probe an outlier, the resamples holding it (63 % of them) set the ratio's upper quantile."""
    from ganeval.studies.slq_accuracy import bootstrap

    y, x = np.random.default_rng(4).uniform(1.0, 2.0, (2, 10, 2))  # 10 probes × 2 temperatures
    x[0] = 50.0
    got = bootstrap(x, y, np.array([1.0, 2.0]), 100, 400, 0.9, seed=3)
    assert (got["ratio_high"] > 10).all()


def test_trainings_default_batch_is_the_documented_one() -> None:
    """Bug: `batch_size: int = 64` → 65 in `gan.training.train`: a `train` spec without a batch size trains otherwise
    than docs/data.md says."""
    import inspect
    import re

    from ganeval.gan.training import train

    text = (Path(__file__).resolve().parents[1] / "docs" / "data.md").read_text()
    documented = re.search(r"batch_size \(default (\d+)\)", text)
    assert documented and inspect.signature(train).parameters["batch_size"].default == int(documented.group(1))


def test_the_approximate_graphs_recall_is_read_on_run_0s_subsample(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: `run_generator(seed, 0)` → `(seed, 1)` in `stability_grid.approx_recall`: the recall read on run 1's rows,
    not the subsample of run 0 its docstring and knn.csv name. (pynndescent is stood in for: it compiles for 40 s.)"""
    import ganeval.metrics.knn_approx as knn_approx
    from ganeval.protocol import Settings
    from ganeval.protocol.draws import draw_rows, run_generator
    from ganeval.studies.stability_grid import approx_recall

    seen = []

    def approx_knn(x, k, params=None):  # type: ignore[no-untyped-def]
        seen.append(np.array(x))
        return knn_approx.brute_force_knn(x, k)

    monkeypatch.setattr(knn_approx, "approx_knn", approx_knn)
    a = RNG.standard_normal((400, 5)).astype(np.float32)
    settings = Settings(runs=3, sample_size=100, metrics={"imd": {"k": 5}}, seed=11, progress=False)
    assert approx_recall(a, settings, 100) == 1.0
    np.testing.assert_array_equal(seen[0], a[draw_rows(400, 100, run_generator(11, 0))])


def test_er_runs_hold_each_graphs_own_spectrum_ends_and_trace() -> None:
    """Bug: `lam[-1]` → `lam[1]` in `er_normalisation.measure`: λ_max stored as λ₂. Each row against the graph's
    spectrum computed directly (the same draw)."""
    from ganeval.studies.er_normalisation import T_GRID, er_graph, measure, spectrum

    rows = measure(sizes=(40,), degrees=(6.0,), graphs=2, seed=3)
    for g, r in rows.groupby("graph"):
        lam = spectrum(er_graph(40, 6.0, np.random.default_rng([3, 40, 6, int(g)])))
        assert (r.lambda2 == lam[1]).all() and (r.lambda_max == lam[-1]).all() and (r.core == len(lam)).all()
        np.testing.assert_allclose(r.trace, np.exp(-np.outer(T_GRID, lam)).sum(1), rtol=1e-12)
        assert list(r.t) == list(map(float, T_GRID))


def test_the_blur_verdict_states_imds_noise_floor_at_the_papers_image_size() -> None:
    """Bug: `if scale or robust` → `and` in `blur_verdict._conclusion`: at 32×32 (no image-size note) the sentence on
    IMD's noise floor is dropped."""
    from test_blur_sweep import reversed_order

    from ganeval.studies import blur_sweep as bs

    summary, passes = reversed_order(imd_unblurred=1.0)
    for hw, note in (((32, 32), False), ((8, 8), True)):
        text = bs.verdict_text(summary, passes, "a", "b", "ref", hw)
        assert "IMD's unblurred value (σ = 0) is already 20%" in text and ("as wide against the image" in text) == note


def test_paired_differences_call_the_lower_value_better_by_default() -> None:
    """Bug: `lower_is_better: bool = True` → False in `summary.paired_differences`: a distance's larger value named
    better when the caller relies on the default."""
    from ganeval.results.summary import paired_differences

    frame = pd.DataFrame({"metric": "fid", "model": ["a"] * 5 + ["b"] * 5, "run": list(range(5)) * 2,
                          "value": [1.0, 1.1, 0.9, 1.0, 1.05] + [2.0, 2.2, 1.9, 2.1, 2.0]})
    got = paired_differences(frame, ["metric"], "model", "run", "value", 0.95)
    assert list(got.better) == ["a"]


def test_a_bfloat16_product_comes_back_in_float32() -> None:
    """Bug: `precision == "tf32"` → `!=` in `knn_precision.reduced_product`: a bfloat16 product returned in bfloat16
    (the certificate's distances then lose their float32 scale), a tf32 one without its flag."""
    from ganeval.metrics.knn_precision import reduced_product

    a, b = torch.randn(6, 8).bfloat16(), torch.randn(5, 8).bfloat16()
    got = reduced_product(a, b, "bfloat16")
    assert got.dtype == torch.float32 and torch.equal(got, (a @ b.T).float())


def test_a_binary_word_of_4096_bytes_is_read_and_one_of_4097_refused(tmp_path: Path) -> None:
    """Bug: `_MAX_WORD_BYTES = 4096` → 4097 in `data.wordvectors`: the longest word a binary file may hold (longer is
    a corrupt file) moved by one byte."""
    from test_wordvectors import _binary

    from ganeval.data.wordvectors import WordVectorsError, read_word_vectors

    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    for size, ok in ((4096, True), (4097, False)):
        path = tmp_path / f"w{size}.bin"
        path.write_bytes(_binary(["a" * size, "b"], v, newline=True))
        if ok:
            got = read_word_vectors(path)
            assert got.words == ["a" * size, "b"] and np.array_equal(got.vectors, v)
        else:
            with pytest.raises(WordVectorsError, match="no space within 4096 bytes"):
                read_word_vectors(path)


def test_a_paired_comparison_of_two_pairs_has_its_t_test() -> None:
    """Bug: `n >= 2` → `n >= 3` in `intervals.paired_comparison`: two pairs (the fewest a paired t takes) get no
    p-value."""
    from scipy import stats

    from ganeval.results.intervals import paired_comparison

    a, b = np.array([1.0, 2.5]), np.array([0.2, 1.0])
    got = paired_comparison(a, b, 0.95)
    assert got["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)
