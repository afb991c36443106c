"""Sweep 6 (metrics): exact checks of the metric streams' keys and of the torchmetrics `features=` argument's
checks (`extractor_of`, `_check_batch`, `features_of`) at each edge."""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pytest
import torch
from torch import nn

from ganeval.features.base import Extractor
from ganeval.metrics import streams
from ganeval.torchmetrics import features as tf


# ---------------------------------------------------------------- streams


@pytest.mark.parametrize("name", ["fid", "kid", "imd", "fd_inf", "é"])
def test_stream_key_is_sha256_word_with_top_bit(name: str) -> None:
    """stream_key = first 4 bytes of SHA-256(UTF-8 name), big-endian, with bit 31 set: a 32-bit word ≥ 2**31."""
    word = hashlib.sha256(name.encode("utf-8")).digest()[:4]
    want = (word[0] << 24 | word[1] << 16 | word[2] << 8 | word[3]) | 0x80000000
    got = streams.stream_key(name)
    assert got == want
    assert 2**31 <= got < 2**32


def test_metric_generator_and_draws_seed_key_then_stream() -> None:
    """metric_generator(m, *k) is default_rng([*k, stream_key(m)]); metric_draws(*k)(m) is the same stream."""
    want = np.random.default_rng([3, 1, streams.stream_key("kid")]).random(4)
    assert np.array_equal(streams.metric_generator("kid", 3, 1).random(4), want)
    assert np.array_equal(streams.metric_draws(3, 1)("kid").random(4), want)
    assert not np.array_equal(streams.metric_draws(3, 1)("fid").random(4), want)


# ---------------------------------------------------------------- torchmetrics features: extractor_of


class _Rows(nn.Module):
    """A module returning a fixed output whatever the batch."""

    def __init__(self, out: object) -> None:
        super().__init__()
        self.out = out

    def forward(self, x: torch.Tensor) -> object:
        return self.out


@pytest.mark.parametrize("bad", [True, False, 1.5, None, [64]])
def test_extractor_of_refuses_other_types(bad: object) -> None:
    """A bool (though an int), a float, None or a list is refused with the list of what is allowed."""
    with pytest.raises(ValueError, match="^features must be an extractor name"):
        tf.extractor_of(bad)  # type: ignore[arg-type]


def test_extractor_of_name_without_options() -> None:
    """A registered name with no options (None or {}) gives that extractor."""
    for opts in (None, {}):
        made = tf.extractor_of("identity", opts)
        assert isinstance(made, Extractor) and made.name == "identity"


def test_extractor_of_module_as_is_and_refuses_options() -> None:
    """An nn.Module is returned itself; features_options beside it are refused."""
    m = nn.Identity()
    assert tf.extractor_of(m) is m
    assert tf.extractor_of(m, {}) is m
    with pytest.raises(ValueError, match="features_options apply"):
        tf.extractor_of(m, {"weights": "x"})


def test_extractor_of_unknown_name_names_feature() -> None:
    """An unknown name is a ValueError starting with features='name'."""
    with pytest.raises(ValueError, match="^features='nosuch': "):
        tf.extractor_of("nosuch")


# ---------------------------------------------------------------- _check_batch / features_of (identity)


def _ident() -> Extractor:
    return tf.extractor_of("identity")  # type: ignore[return-value]


def test_features_of_identity_one_row_exact() -> None:
    """One row (the least batch) is taken; rows come back float32, exact."""
    out = tf.features_of(torch.tensor([[1.5, -2.0, 3.0]]), _ident())
    assert out.dtype == torch.float32 and out.tolist() == [[1.5, -2.0, 3.0]]


def test_features_of_identity_float64_and_integers() -> None:
    """float64 and every integer dtype are real numbers: converted to float32 exactly."""
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    assert tf.features_of(x, _ident()).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        out = tf.features_of(torch.tensor([[1, 2], [3, 4]], dtype=dt), _ident())
        assert out.dtype == torch.float32 and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_features_of_copies_caller_buffer() -> None:
    """A float32 batch's rows are copied: refilling the caller's buffer does not change them."""
    x = torch.ones(2, 3)
    out = tf.features_of(x, _ident())
    x.fill_(7.0)
    assert out.tolist() == [[1.0] * 3] * 2
    out2 = tf.features_of(torch.ones(2, 3, dtype=torch.float64), _ident())
    assert out2.tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("x", [[[1.0, 2.0]], np.ones((2, 2)), "x"])
def test_check_batch_refuses_non_tensor(x: object) -> None:
    """Anything but a torch.Tensor is refused, naming its type."""
    with pytest.raises(ValueError, match="^x must be a torch.Tensor, got "):
        tf.features_of(x, _ident())


@pytest.mark.parametrize("shape", [(), (0, 3), (0,)])
def test_check_batch_refuses_empty_or_scalar(shape: tuple[int, ...]) -> None:
    """A scalar or an empty batch is refused as such."""
    with pytest.raises(ValueError, match="^x is empty or a scalar"):
        tf.features_of(torch.zeros(shape), _ident())


@pytest.mark.parametrize("shape", [(3,), (2, 3, 1), (1, 1, 1, 1)])
def test_check_batch_identity_needs_two_dims(shape: tuple[int, ...]) -> None:
    """Features given directly must be N×D: 1-D or 3-D batches are refused as such (not as empty)."""
    with pytest.raises(ValueError, match="^x must be N×D features for features='identity'"):
        tf.features_of(torch.ones(shape), _ident())


@pytest.mark.parametrize("dt", [torch.bool, torch.complex64])
def test_check_batch_identity_refuses_bool_complex(dt: torch.dtype) -> None:
    """bool and complex rows are not real numbers."""
    with pytest.raises(ValueError, match="^x must hold real numbers"):
        tf.features_of(torch.ones(2, 2, dtype=dt), _ident())


@pytest.mark.parametrize("v", [float("nan"), float("inf"), -float("inf")])
def test_check_batch_refuses_non_finite(v: float) -> None:
    """NaN/inf in x is refused before the extractor runs (identity and a module alike)."""
    x = torch.ones(2, 2)
    x[1, 0] = v
    with pytest.raises(ValueError, match="^x has NaN or inf values"):
        tf.features_of(x, _ident())
    with pytest.raises(ValueError, match="^x has NaN or inf values"):
        tf.features_of(x, nn.Identity())


def test_check_batch_module_takes_any_shape() -> None:
    """An nn.Module's input is not shape-checked; a finite 4-D float batch flattened gives its rows."""
    x = torch.arange(8, dtype=torch.float32).reshape(2, 1, 2, 2)
    out = tf.features_of(x, nn.Flatten())
    assert out.tolist() == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]
    xi = torch.tensor([[1, 2]], dtype=torch.int64)
    assert tf.features_of(xi, nn.Identity()).tolist() == [[1.0, 2.0]]


@pytest.mark.parametrize("out, said", [
    ([[1.0]], "list"), (torch.ones(2), "(2,)"), (torch.ones(2, 1, 1), "(2, 1, 1)"), (torch.ones(3, 2), "(3, 2)"),
])
def test_features_of_refuses_rows_not_one_per_sample(out: object, said: str) -> None:
    """A module must return an N×D tensor with one row per sample of x."""
    with pytest.raises(ValueError, match=r"^features gave " + said.replace("(", r"\(").replace(")", r"\)")):
        tf.features_of(torch.ones(2, 2), _Rows(out))


@pytest.mark.parametrize("dt", [torch.bool, torch.complex64])
def test_features_of_refuses_unreal_rows(dt: torch.dtype) -> None:
    """Rows of bool or complex dtype are refused."""
    with pytest.raises(ValueError, match="^features gave dtype"):
        tf.features_of(torch.ones(2, 2), _Rows(torch.ones(2, 3, dtype=dt)))


def test_features_of_module_integer_rows_accepted() -> None:
    """Integer rows are real numbers: returned as float32."""
    out = tf.features_of(torch.ones(2, 2), _Rows(torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)))
    assert out.dtype == torch.float32 and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_features_of_refuses_non_finite_rows() -> None:
    """A module that overflows (inf/NaN rows) is refused; finite rows pass."""
    bad = torch.ones(2, 2)
    bad[0, 1] = float("inf")
    with pytest.raises(ValueError, match="^x gives features with NaN or inf"):
        tf.features_of(torch.ones(2, 2), _Rows(bad))
    assert tf.features_of(torch.ones(2, 2), _Rows(torch.full((2, 2), 2.0))).tolist() == [[2.0, 2.0]] * 2


def test_features_of_extractor_value_error_names_x() -> None:
    """A ValueError from the extractor is re-raised prefixed with 'x: '."""

    class Bad(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise ValueError("boom")

    with pytest.raises(ValueError, match="^x: boom$"):
        tf.features_of(torch.ones(2, 2), Bad())


# ---------------------------------------------------------------- suite


def test_set_state_n_is_row_count() -> None:
    """SetState.n is the number of rows, not of columns."""
    from ganeval.metrics.suite import SetState

    assert SetState(torch.ones(3, 2)).n == 3


def test_suite_fid_two_rows_least_legal_matches_closed_form() -> None:
    """Two rows (the least legal set) are prepared; FID of the pair is the Fréchet closed form in float64;
    one row is refused."""
    import scipy.linalg

    from ganeval.metrics.suite import prepare_set, score_pair

    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, generator=g, dtype=torch.float64)
    y = torch.randn(2, 3, generator=g, dtype=torch.float64)
    sx, sy = prepare_set(x, ["fid"]), prepare_set(y, ["fid"])
    assert sx.n == 2 and list(sx.stats) == ["fid"]
    got = score_pair(sx, sy, streams.metric_draws(0), ["fid"])
    xn, yn = x.numpy(), y.numpy()
    c1, c2 = np.cov(xn, rowvar=False), np.cov(yn, rowvar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # two rows: the covariances are singular
        root = np.real(scipy.linalg.sqrtm(c1 @ c2))
    want = ((xn.mean(0) - yn.mean(0)) ** 2).sum() + np.trace(c1 + c2 - 2 * root)
    assert list(got) == ["fid"]
    assert got["fid"] == pytest.approx(want, rel=1e-6, abs=1e-9)
    with pytest.raises(ValueError, match="at least 2"):
        prepare_set(x[:1], ["fid"])
