"""The hostile-input probe of issue #22: each case failed before its fix (see the README's Reliability table)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------------
# 6. a symlinked lock file is refused, not truncated through; 7. a lock path that is a folder: one line
# ------------------------------------------------------------------------------------------------
def test_symlinked_lock_file_is_refused_and_target_kept(tmp_path: Path) -> None:
    from ganeval.protocol.store import LOCK_FILE, locked

    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    res = tmp_path / "res"
    res.mkdir()
    (res / LOCK_FILE).symlink_to(victim)
    with pytest.raises(ValueError, match="symbolic link"):
        with locked(res):
            pass
    assert victim.read_text() == "keep me\n"


def test_lock_path_that_is_a_folder_is_one_line(tmp_path: Path) -> None:
    from ganeval.protocol.store import LOCK_FILE, locked

    (tmp_path / LOCK_FILE).mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        with locked(tmp_path):
            pass


def test_atomic_write_refuses_to_replace_a_link(tmp_path: Path) -> None:
    from ganeval.common import atomic_write_text

    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    (tmp_path / "summary.csv").symlink_to(victim)
    with pytest.raises(ValueError, match="symbolic link"):
        atomic_write_text(tmp_path / "summary.csv", "a,b\n")
    assert (tmp_path / "summary.csv").is_symlink() and victim.read_text() == "keep me\n"


# ------------------------------------------------------------------------------------------------
# 9. an array that fits N×C×H×W and N×H×W×C is refused unless data.layout says which
# ------------------------------------------------------------------------------------------------
def test_ambiguous_image_layout_is_refused_unless_layout_given(tmp_path: Path) -> None:
    from ganeval.data import array

    a = np.random.default_rng(0).integers(0, 256, size=(20, 3, 8, 3), dtype=np.uint8)
    np.save(tmp_path / "amb.npy", a)
    with pytest.raises(ValueError, match=r"amb\.npy.*both N×C×H×W.*data\.layout=NCHW"):
        array(tmp_path / "amb.npy")
    assert np.array_equal(array(tmp_path / "amb.npy", layout="NCHW"), a)
    assert np.array_equal(array(tmp_path / "amb.npy", layout="NHWC"), a.transpose(0, 3, 1, 2))
    np.save(tmp_path / "clear.npy", a[:, :, :, :2])  # W = 2: only N×C×H×W fits, read as before
    assert array(tmp_path / "clear.npy").shape == (20, 3, 8, 2)


# ------------------------------------------------------------------------------------------------
# 8. huge magnitudes are refused naming the file; JSON output is always valid
# ------------------------------------------------------------------------------------------------
def _big(tmp_path: Path, scale: float) -> str:
    path = tmp_path / f"big{scale:g}.npy"
    np.save(path, np.random.default_rng(0).normal(size=(60, 8)) * scale)  # float64
    return str(path)


@pytest.mark.parametrize("scale, says", [(1e30, "float64"), (1e200, "float32")])
def test_huge_features_are_refused_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture, scale: float,
                                                    says: str) -> None:
    from ganeval.app.score import main

    big = _big(tmp_path, scale)
    assert main([big, big, "--metrics", "fid,kid", "--option", "kid.subset_size=20", "--quiet", "--json"]) == 2
    err = capsys.readouterr().err
    assert "big" in err and says in err and "rescale" in err and "NaN" not in err


def test_scores_at_an_ordinary_scale_still_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import json

    from ganeval.app.score import main

    ok = _big(tmp_path, 1e3)
    assert main([ok, ok, "--metrics", "fid,kid", "--option", "kid.subset_size=20", "--quiet", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {r["metric"] for r in doc["results"]} == {"fid", "kid"}


def test_json_output_never_holds_nan_or_infinity() -> None:
    import json

    from ganeval.results.files import json_dumps, json_text

    doc = {"std": float("inf"), "rows": [np.float64("nan"), 1.5, -np.inf], "n": 3}
    for text in (json_dumps(doc), json_text(doc)):
        assert json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in JSON")) == \
            {"std": None, "rows": [None, 1.5, None], "n": 3}


# ------------------------------------------------------------------------------------------------
# 3. 16-bit PNGs are scaled to 8 bits (not clipped at 255); an alpha channel dropped is said once
# ------------------------------------------------------------------------------------------------
def test_16bit_png_is_scaled_not_clipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from PIL import Image

    from ganeval.data import files

    files._NOTED.clear()
    rng = np.random.default_rng(0)
    raw = [rng.integers(0, 65536, size=(8, 8), dtype=np.uint16) for _ in range(2)]
    for i, a in enumerate(raw):
        Image.fromarray(a).save(tmp_path / f"{i}.png")  # mode I;16
    with caplog.at_level("WARNING", logger="ganeval.data.files"):
        out = files.folder(tmp_path)
    expected = np.stack([np.rint(a / 257.0).astype(np.uint8) for a in raw])[:, None]
    assert np.array_equal(out, expected)  # before: 99.75 % of pixels read as 255
    assert sum("16-bit" in r.getMessage() for r in caplog.records) == 1
    from ganeval.data.sources.images import ImageSource

    assert np.array_equal(ImageSource(tmp_path).read_all(), expected)  # the streamed reader: the same pixels


def test_rgba_alpha_dropped_is_said_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from PIL import Image

    from ganeval.data import files

    files._NOTED.clear()
    rgba = np.random.default_rng(0).integers(0, 256, size=(3, 8, 8, 4), dtype=np.uint8)
    for i, a in enumerate(rgba):
        Image.fromarray(a, mode="RGBA").save(tmp_path / f"{i}.png")
    with caplog.at_level("WARNING", logger="ganeval.data.files"):
        out = files.folder(tmp_path)
    assert np.array_equal(out, rgba[..., :3].transpose(0, 3, 1, 2))
    assert sum("alpha" in r.getMessage() for r in caplog.records) == 1


# ------------------------------------------------------------------------------------------------
# 1. a callable's helper module is in its identity; 2. a stale .pyc never runs; 7. a SyntaxError is one line
# ------------------------------------------------------------------------------------------------
FAST = ["metrics.imd.nv=10", "metrics.kid.subsets=5", "metrics.kid.subset_size=50", "progress=false", "plots=false"]


def _callable_bench(tmp_path: Path, function: str, *extra: str) -> list[str]:
    real = tmp_path / "real.npy"
    if not real.exists():
        np.save(real, np.random.default_rng(0).normal(size=(300, 8)).astype(np.float32))
    return ["experiment=benchmark", "data=array", f"data.path={real}", "generator=callable",
            f"generator.function={function}", "generator.points=true", "features=identity", "sample_size=100",
            "runs=2", f"results_dir={tmp_path / 'res'}", f"cache_dir={tmp_path / 'cache'}", *FAST, *extra]


def test_callable_helper_module_is_in_its_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from apphelp import run_inprocess

    (tmp_path / "helper22.py").write_text("SCALE = 1.0\n")
    (tmp_path / "mymod22.py").write_text(
        "import numpy as np\nimport helper22\n\ndef sample(n, seed):\n"
        "    return (np.random.default_rng(seed).normal(size=(n, 8)) * helper22.SCALE).astype(np.float32)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    args = _callable_bench(tmp_path, "mymod22:sample")
    run_inprocess(args)
    run_inprocess(args)  # unchanged: resumes
    (tmp_path / "helper22.py").write_text("SCALE = 2.0\n")  # only the helper changes
    with pytest.raises(ValueError, match=r"what differs: .*modules\.helper22\.py"):
        run_inprocess([*args, "runs=3"])


def test_stale_pyc_never_runs(tmp_path: Path) -> None:
    src = tmp_path / "stale22.py"
    src.write_text("import numpy as np\nV = 1.0\ndef sample(n, seed):\n    return np.full((n, 8), V, np.float32)\n")
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path}"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", "import stale22"], env=env, cwd=tmp_path, check=True)
    assert list((tmp_path / "__pycache__").glob("stale22.*.pyc"))
    st = src.stat()
    src.write_text(src.read_text().replace("V = 1.0", "V = 2.0"))  # same size, mtime restored: the .pyc looks valid
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    code = ("from ganeval.gan.generators import CallableGenerator as C; "
            "print(C('stale22:sample', points=True).sample(2, 0)[0, 0])")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, check=True, capture_output=True,
                         text=True).stdout
    assert out.strip() == "2.0"  # the source's code, not the .pyc's 1.0


def test_callable_module_with_syntax_error_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.gan.generators import CallableGenerator

    (tmp_path / "broken22.py").write_text("def sample(n, seed)\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"broken22.*SyntaxError"):
        CallableGenerator("broken22:sample", points=True).validate()


# ------------------------------------------------------------------------------------------------
# 7. Ctrl-C, SIGTERM and a full disk end in one line saying what is stored
# ------------------------------------------------------------------------------------------------
class _Interrupted:
    """A task whose run `at` raises `exc` (what Ctrl-C or the SIGTERM handler raises in the main process)."""

    def __init__(self, at: int, exc: BaseException) -> None:
        self.at, self.exc = at, exc

    def row_spec(self):  # type: ignore[no-untyped-def]
        from ganeval.protocol import RowSpec

        return RowSpec(({"model": "a"},), ("m1",))

    def __call__(self, r: int) -> list[dict]:
        if r == self.at:
            raise self.exc
        return self.row_spec().rows(r, value=r + 0.5)


@pytest.mark.parametrize("exc, how", [(KeyboardInterrupt(), "Ctrl-C"), (None, "SIGTERM")])
def test_interrupted_run_loop_says_how_many_runs_are_stored(tmp_path: Path, exc: BaseException | None,
                                                             how: str) -> None:
    import pandas as pd

    from ganeval.protocol import Settings, run_loop
    from ganeval.stops import Terminated

    settings = Settings(runs=5, sample_size=10, metrics=("fid",), progress=False)
    with pytest.raises(KeyboardInterrupt, match=rf"stopped .*{how}.*: 3 of 5 runs stored in .*rerun the same command"):
        run_loop(_Interrupted(3, exc or Terminated("terminated (SIGTERM)")), settings, tmp_path)
    assert sorted(pd.read_csv(tmp_path / "runs.csv")["run"]) == [0, 1, 2]
    assert len(run_loop(_Interrupted(-1, KeyboardInterrupt()), settings, tmp_path)) == 5  # resumes


def _cli(tmp_path: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path}"}
    return subprocess.Popen([sys.executable, "-m", "ganeval", *args], env=env, cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_cli_stopped_by_a_signal_logs_one_line(tmp_path: Path, sig: str) -> None:
    import signal
    import time

    (tmp_path / "slow22.py").write_text(
        "import time, numpy as np\ndef sample(n, seed):\n    open('started', 'w').close()\n    time.sleep(60)\n"
        "    return np.zeros((n, 8), np.float32)\n")
    proc = _cli(tmp_path, *_callable_bench(tmp_path, "slow22:sample"))
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(getattr(signal, sig))
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert "Traceback" not in out and "stopped" in out and ("SIGTERM" in out) == (sig == "SIGTERM"), out


def test_full_disk_during_runs_is_one_line_and_runs_resume(tmp_path: Path) -> None:
    """The disk fills while run 1 is stored (ENOSPC from the write of runs.csv): one line, exit 2; then resume."""
    (tmp_path / "sitecustomize.py").write_text(
        "import errno, os\nif os.environ.get('FULL22'):\n    import ganeval.common as c\n    real = c.atomic_write_bytes\n"
        "    calls = []\n    def full(path, data):\n        if str(path).endswith('runs.csv'):\n            calls.append(path)\n"
        "            if len(calls) == 2:\n                raise OSError(errno.ENOSPC, 'No space left on device', str(path))\n"
        "        return real(path, data)\n    c.atomic_write_bytes = full\n")
    (tmp_path / "pts22.py").write_text("import numpy as np\ndef sample(n, seed):\n"
                                       "    return np.random.default_rng(seed).normal(size=(n, 8)).astype(np.float32)\n")
    args = _callable_bench(tmp_path, "pts22:sample", "runs=3")
    os.environ["FULL22"] = "1"
    try:
        proc = _cli(tmp_path, *args)
    finally:
        del os.environ["FULL22"]
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 2, out
    assert "Traceback" not in out and f"free space in {tmp_path / 'res'}" in out, out
    proc = _cli(tmp_path, *args)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "resuming: 1 of 3" in out, out


# ------------------------------------------------------------------------------------------------
# 4. a foreign non-empty results_dir is refused; 5. a fresh start leaves no stale output
# ------------------------------------------------------------------------------------------------
def _sample_bench(tmp_path: Path, *extra: str) -> list[str]:
    rng = np.random.default_rng(0)
    for name, shift in (("real", 0.0), ("fakeA", 0.5), ("fakeB", 1.0)):
        if not (tmp_path / f"{name}.npy").exists():
            np.save(tmp_path / f"{name}.npy", (rng.normal(size=(300, 8)) + shift).astype(np.float32))
    return ["experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}", "generator=samples",
            f"generator.path={tmp_path / 'fakeA.npy'}", "features=identity", "sample_size=100", "runs=2",
            f"results_dir={tmp_path / 'res'}", f"cache_dir={tmp_path / 'cache'}", *FAST, *extra]


def test_foreign_non_empty_results_dir_is_refused(tmp_path: Path) -> None:
    from apphelp import run_inprocess

    res = tmp_path / "res"
    res.mkdir()
    mine = {"table.md": "my own table\n", "summary.csv": "a,b\n1,2\n", "notes.txt": "mine\n"}
    for name, text in mine.items():
        (res / name).write_text(text)
    with pytest.raises(ValueError, match=r"not empty .*holds no ganeval run record.*overwrite=true"):
        run_inprocess(_sample_bench(tmp_path))
    assert {name: (res / name).read_text() for name in mine} == mine
    run_inprocess(_sample_bench(tmp_path, "overwrite=true"))  # asked for: written beside them
    assert (res / "notes.txt").read_text() == "mine\n" and (res / "runs.csv").is_file()
    run_inprocess(_sample_bench(tmp_path))  # now a ganeval directory: resumes
    assert (res / "notes.txt").read_text() == "mine\n"


def test_fresh_start_leaves_no_stale_output(tmp_path: Path) -> None:
    from apphelp import run_inprocess

    res = tmp_path / "res"
    two = f"+generators.B={{_target_: ganeval.gan.SampleGenerator, path: {tmp_path / 'fakeB.npy'}}}"
    run_inprocess(_sample_bench(tmp_path, two))
    assert (res / "comparison.csv").is_file()
    (res / "user.csv").write_text("x\n1\n")  # not ganeval's: kept, and not one of this run's results
    run_inprocess(_sample_bench(tmp_path, "overwrite=true"))  # one model now: no comparison
    assert not (res / "comparison.csv").exists()
    assert (res / "user.csv").read_text() == "x\n1\n"
    report = (res / "report.html").read_text()
    assert "comparison.csv" not in report.split('id="files"')[0] and "user.csv" not in report.split('id="files"')[0]


# ------------------------------------------------------------------------------------------------
# 10. the busy message names the process that holds the lock, not the pid written in the file
# ------------------------------------------------------------------------------------------------
def test_busy_message_names_the_lock_holder(tmp_path: Path) -> None:

    from ganeval.protocol.store import LOCK_FILE, ResultsDirBusyError, locked

    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               f"fd = os.open({str(tmp_path / LOCK_FILE)!r}, os.O_RDWR | os.O_CREAT)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX)\nos.write(fd, b'999999 forged\\n')\n"
                               "print('locked', flush=True)\ntime.sleep(60)\n"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(ResultsDirBusyError, match=rf"by process {holder.pid} "):
            with locked(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()


def test_system_directory_is_refused_as_results_dir() -> None:
    from ganeval.results.outputs import check_foreign

    for d in ("/etc", "/", str(Path.home())):
        with pytest.raises(ValueError, match="system or home directory"):
            check_foreign(d, overwrite=True)


def test_dry_run_into_etc_is_refused(tmp_path: Path) -> None:
    from apphelp import run_inprocess

    args = [a for a in _sample_bench(tmp_path) if not a.startswith("results_dir=")]
    with pytest.raises(ValueError, match="system or home directory"):
        run_inprocess([*args, "results_dir=/etc", "dry_run=true"])
