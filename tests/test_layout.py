"""A layout option where image arrays can be read two ways (issue #22): callable generator outputs (`layout=`) and
`ganeval-score` arrays (`--layout`); under auto, a shape fitting both N×C×H×W and N×H×W×C is refused naming it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from ganeval.data.images import apply_layout

AMB = np.random.default_rng(0).integers(0, 256, size=(40, 3, 8, 3), dtype=np.uint8)  # N×3×8×3: both layouts fit


def test_apply_layout_rules() -> None:
    with pytest.raises(ValueError, match=r"^x holds images of shape \(40, 3, 8, 3\), which fits both.*say which with HOW"):
        apply_layout(AMB, "auto", "x", "HOW")
    assert apply_layout(AMB, "nchw", "x", "HOW") is AMB
    assert np.array_equal(apply_layout(AMB, "NHWC", "x", "HOW"), AMB.transpose(0, 3, 1, 2))
    clear = AMB[:, :, :, :2]  # W = 2: only N×C×H×W fits, auto reads it as before
    assert apply_layout(clear, None, "x", "HOW") is clear
    with pytest.raises(ValueError, match="layout must be one of auto, nchw, nhwc"):
        apply_layout(AMB, "hwc", "x", "HOW")
    with pytest.raises(ValueError, match=r"layout=nhwc given but x of shape \(40, 3, 3, 8\) has 8 on its channel axis"):
        apply_layout(np.zeros((40, 3, 3, 8)), "nhwc", "x", "HOW")
    grey = AMB[:, 0]
    with pytest.raises(ValueError, match="layout=nhwc given but x holds a 3-D array"):
        apply_layout(grey, "nhwc", "x", "HOW")
    assert apply_layout(grey, "nhwc", "x", "HOW", strict=False) is grey


def _score(args: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    from ganeval.app.score import main

    rc = main([*args, "--features", "pixels", "--metrics", "fid", "--quiet", "--json"])
    out, err = capsys.readouterr()
    return rc, out, err


def test_ganeval_score_layout(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    real = np.random.default_rng(1).integers(0, 256, size=(40, 8, 3, 3), dtype=np.uint8)  # unambiguous N×H×W×C
    np.save(tmp_path / "real.npy", real)
    np.save(tmp_path / "amb.npy", AMB)
    np.save(tmp_path / "nchw.npy", np.ascontiguousarray(AMB.transpose(0, 3, 1, 2)))  # what NHWC means, unambiguous
    rc, _, err = _score([str(tmp_path / "real.npy"), str(tmp_path / "amb.npy")], capsys)
    assert rc == 2 and "amb.npy" in err and "--layout nchw or --layout nhwc" in err and len(err.strip().splitlines()) == 1
    rc, out, _ = _score([str(tmp_path / "real.npy"), str(tmp_path / "amb.npy"), "--layout", "nhwc"], capsys)
    assert rc == 0
    got = json.loads(out)["results"][0]["value"]
    rc, out, _ = _score([str(tmp_path / "real.npy"), str(tmp_path / "nchw.npy")], capsys)
    assert rc == 0 and json.loads(out)["results"][0]["value"] == got
    # a stated layout applies to every 4-D array: one it does not fit is refused, not read another way
    rc, _, err = _score([str(tmp_path / "real.npy"), str(tmp_path / "amb.npy"), "--layout", "nchw"], capsys)
    assert rc == 2 and "real.npy" in err and "has 8 on its channel axis" in err


def test_callable_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.gan.generators import CallableGenerator

    (tmp_path / "amb22.py").write_text(
        "import numpy as np\ndef sample(n, seed):\n"
        "    return np.random.default_rng(seed).integers(0, 256, size=(n, 3, 8, 3), dtype=np.uint8)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("amb22", None)
    with pytest.raises(ValueError, match=r"fits both N×C×H×W.*\+generator\.layout=nhwc"):
        CallableGenerator("amb22:sample").sample(4, 0)
    raw = np.random.default_rng(0).integers(0, 256, size=(4, 3, 8, 3), dtype=np.uint8)
    assert np.array_equal(CallableGenerator("amb22:sample", layout="nchw").sample(4, 0), raw)
    assert np.array_equal(CallableGenerator("amb22:sample", layout="nhwc").sample(4, 0), raw.transpose(0, 3, 1, 2))
    assert "layout" not in CallableGenerator("amb22:sample").identity()  # auto: the identity it always had
    assert CallableGenerator("amb22:sample", layout="NHWC").identity()["layout"] == "nhwc"
    with pytest.raises(ValueError, match="layout must be one of"):
        CallableGenerator("amb22:sample", layout="hwc")


def test_samples_file_layout(tmp_path: Path) -> None:
    from ganeval.gan import SampleGenerator

    np.save(tmp_path / "amb.npy", AMB)
    with pytest.raises(ValueError, match=r"fits both N×C×H×W.*\+generator\.layout=nhwc"):
        SampleGenerator(tmp_path / "amb.npy").validate()
    g = SampleGenerator(tmp_path / "amb.npy", layout="nhwc")
    g.validate()
    assert np.array_equal(g.sample(len(AMB), 0), AMB.transpose(0, 3, 1, 2))
    assert g.identity()["layout"] == "nhwc" and "layout" not in SampleGenerator(tmp_path / "amb.npy").identity()
