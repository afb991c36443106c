"""Word-vector files (fastText/word2vec text, gzipped text, word2vec binary): values, vocab, and every bad file."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ganeval.data.wordvectors import WordVectors, WordVectorsError, read_word_vectors

WORDS = ["the", "de", "и", "日本", "naïve", "x\u00a0y"]  # non-ASCII and a non-breaking space inside a word


def _vectors(n: int = len(WORDS), d: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)


def _text(words: list[str], v: np.ndarray, trailing: str = " ") -> bytes:
    """fastText's .vec layout: header "N D", then "word v1 ... vD " (fastText leaves a trailing space)."""
    rows = [f"{w} " + " ".join(repr(float(x)) for x in row) + trailing for w, row in zip(words, v)]
    return (f"{len(words)} {v.shape[1]}\n" + "\n".join(rows) + "\n").encode("utf-8")


def _binary(words: list[str], v: np.ndarray, newline: bool) -> bytes:
    """word2vec.c's layout (a newline after each vector) or gensim's (none)."""
    out = f"{len(words)} {v.shape[1]}\n".encode()
    for w, row in zip(words, v):
        out += w.encode("utf-8") + b" " + row.astype("<f4").tobytes() + (b"\n" if newline else b"")
    return out


@pytest.mark.parametrize("kind", ["vec", "vec.gz", "bin-newline", "bin-gensim", "bin.gz"])
def test_reads_every_format_exactly(tmp_path: Path, kind: str) -> None:
    v = _vectors()
    data = _text(WORDS, v) if kind.startswith("vec") else _binary(WORDS, v, newline=kind != "bin-gensim")
    path = tmp_path / ("w." + kind.split("-")[0])
    path.write_bytes(gzip.compress(data) if kind.endswith(".gz") else data)
    wv = read_word_vectors(path)
    assert isinstance(wv, WordVectors) and wv.words == WORDS and wv.vectors.dtype == np.float32
    np.testing.assert_array_equal(wv.vectors, v)  # repr() of a float32 value parses back to the same float32
    top = read_word_vectors(str(path), vocab=2)
    assert top.words == WORDS[:2] and top.vectors.shape == (2, 3)
    np.testing.assert_array_equal(top.vectors, v[:2])


def test_vocab_reads_only_the_first_rows(tmp_path: Path) -> None:
    """Rows past `vocab` are never parsed: garbage after them does not matter."""
    v = _vectors(3)
    path = tmp_path / "w.vec"
    path.write_bytes(_text(["a", "b", "c"], v) + b"junk not a row\n" * 10)
    np.testing.assert_array_equal(read_word_vectors(path, vocab=3).vectors, v)
    with pytest.raises(WordVectorsError, match=r"line 5: more rows than the header's 3 words"):
        read_word_vectors(path)


def _one_line(exc: pytest.ExceptionInfo) -> str:
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


@pytest.mark.parametrize("data, vocab, match", [
    (b"3 2\na 1 2\nb 3 4\n", None, r"w\.vec: line 4: the file ends after 2 words, but its header says 3"),
    (b"2 2\na 1 2\nb 3 4\nc 5 6\n", None, r"line 4: more rows than the header's 2 words"),
    (b"2 3\na 1 2 3\nb 3 4\n", None, r"line 3: 2 values, but the header says dimension 3"),
    (b"2 2\na 1 2\nb 3 4 5\n", None, r"line 3: 3 values, but the header says dimension 2"),
    (b"2 2\na 1 2\na 3 4\n", None, r"line 3: duplicate word 'a'"),
    (b"2 2\na 1 2\n\xff\xfe 3 4\n", None, r"line 3: the word .* is not UTF-8"),
    (b"2 2\na 1 x2\nb 3 4\n", None, r"line 2: the value 'x2' is not a number"),
    (b"2 2\na 1 nan\nb 3 4\n", None, r"line 2: a value is not finite"),
    (b"2 2\na 1 2\nb 3 -1e39\n", None, r"line 3: the value -1e39 exceeds float32's range \(±3\.403e\+38\)"),
    (b"2 2\na 1 2\nb 1e39 4\n", 2, r"line 3: the value 1e39 exceeds float32's range"),
    (b"2 2\na\nb 3 4\n", None, r"line 2: expected a word and 2 values"),
    (b"0 300\n", None, r"line 1: empty vocabulary"),
    (b"", None, r"line 1: the file is empty"),
    (b"a 1 2\nb 3 4\n", None, r"line 1: expected the header 'N D'"),
    (b"2 2\na 1 2\nb 3 4\n", 5, r"line 1: the file has 2 words, fewer than vocab=5"),
])
def test_bad_text_files_are_refused_in_one_line(tmp_path: Path, data: bytes, vocab: int | None, match: str) -> None:
    path = tmp_path / "w.vec"
    path.write_bytes(data)
    with pytest.raises(WordVectorsError, match=match) as exc:
        read_word_vectors(path, vocab=vocab)
    assert _one_line(exc).startswith(str(path) + ": ")


def test_bad_binary_files_are_refused_in_one_line(tmp_path: Path) -> None:
    v = _vectors(3, 2)
    path = tmp_path / "w.bin"
    cases = [
        (_binary(["a", "b", "a"], v, True), r"line 4: duplicate word 'a'"),
        (_binary(["a", "b", "c"], v, True)[:-7], r"line 4: the file ends inside the vector of 'c'"),
        (_binary(["a", "b"], v[:2], True).replace(b"2 2\n", b"3 2\n", 1), r"line 4: the file ends after 2 words"),
        (_binary(["a", "b", "c"], v, True).replace(b"\nb ", b"\n\xff ", 1), r"line 3: .* not UTF-8"),
        (_binary(["a", "b"], np.array([[1, np.inf], [0, 0]], np.float32), True), r"line 2: a value of 'a' is not"),
        (_binary(["a", "b"], v[:2], False) + b"c " + v[2].tobytes(), r"line 4: more rows than the header's 2"),
    ]
    for data, match in cases:
        path.write_bytes(data)
        with pytest.raises(WordVectorsError, match=match) as exc:
            read_word_vectors(path)
        _one_line(exc)


def test_bad_arguments(tmp_path: Path) -> None:
    (tmp_path / "w.npy").write_bytes(b"")
    with pytest.raises(WordVectorsError, match="not a word-vector file"):
        read_word_vectors(tmp_path / "w.npy")
    with pytest.raises(FileNotFoundError):
        read_word_vectors(tmp_path / "missing.vec")
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="vocab must be a positive whole number"):
            read_word_vectors(tmp_path / "missing.vec", vocab=bad)
    (tmp_path / "w.vec.gz").write_bytes(b"not gzip at all")
    with pytest.raises(WordVectorsError, match="not a readable gzip file"):
        read_word_vectors(tmp_path / "w.vec.gz")


def _rows(n: int, d: int, short: bool, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """`n` words (one or two letters when `short`, else 8) and `n` × `d` normal vectors."""
    words = [chr(97 + i % 26) + (chr(97 + i // 26) if i >= 26 else "") if short else f"word{i:04d}" for i in range(n)]
    return words, _vectors(n, d, seed)


@pytest.mark.parametrize("vocab", [None, 200, 1])
@pytest.mark.parametrize("short", [False, True], ids=["long-words", "short-words"])
@pytest.mark.parametrize("newline", [True, False], ids=["word2vec.c", "gensim"])
@pytest.mark.parametrize("row_dim", [19, 21])
def test_binary_header_dimension_that_disagrees_with_the_rows_is_refused_naming_both(
        tmp_path: Path, row_dim: int, newline: bool, short: bool, vocab: int | None) -> None:
    """Header "300 20" over rows of 19 or 21 values. Read with 20, 19-value rows each followed by a newline take the
    newline and 3 letters of the next word as a 20th value (IMD 352.8 where the true vectors give 73.47): silent
    under vocab with long words; with short words the next "word" is float bytes ("not UTF-8"); without vocab the
    last row "ends inside the vector". Every case names the rows' dimension and the header's."""
    words, v = _rows(300, row_dim, short)
    path = tmp_path / "w.bin"
    path.write_bytes(_binary(words, v, newline).replace(f"300 {row_dim}\n".encode(), b"300 20\n", 1))
    with pytest.raises(WordVectorsError, match=rf"w\.bin: line 2: the rows have {row_dim} values, but the header "
                                               r"says dimension 20$") as exc:
        read_word_vectors(path, vocab=vocab)
    _one_line(exc)


@pytest.mark.parametrize("newline", [True, False], ids=["word2vec.c", "gensim"])
def test_binary_true_vectors_read_as_the_text_file_of_the_same_vectors(tmp_path: Path, newline: bool) -> None:
    """The same 300 words of 19 values under a true header: the .bin and the .vec give the same words and vectors
    (so the same IMD: the command-level check is in test_unaligned.py), with and without vocab."""
    words, v = _rows(300, 19, short=False)
    (tmp_path / "w.bin").write_bytes(_binary(words, v, newline))
    (tmp_path / "w.vec").write_bytes(_text(words, v))
    for vocab in (None, 200, 1):
        b, t = read_word_vectors(tmp_path / "w.bin", vocab), read_word_vectors(tmp_path / "w.vec", vocab)
        assert b.words == t.words == words[:vocab or 300]
        np.testing.assert_array_equal(b.vectors, t.vectors)
        np.testing.assert_array_equal(b.vectors, v[:vocab or 300])
    gensim = pytest.importorskip("gensim.models")  # the peer reads the true file to the same vectors
    kv = gensim.KeyedVectors.load_word2vec_format(str(tmp_path / "w.bin"), binary=True)
    assert list(kv.index_to_key) == words
    np.testing.assert_array_equal(kv.vectors, v)


def test_binary_rows_out_of_step_past_the_first_are_refused_naming_the_header_dimension(tmp_path: Path) -> None:
    """Rows of 19 values after 10 of the header's 20 (each followed by a newline): the row read past its end is
    refused where it stops being followed by a newline, naming the header's dimension; so is a row that leaves
    float bytes where the next word should begin (gensim's layout)."""
    words, v = _rows(40, 20, short=False)
    _, w = _rows(30, 19, short=False, seed=1)
    path = tmp_path / "w.bin"
    path.write_bytes(_binary(words[:10], v[:10], True) + _binary(words[10:], w, True).partition(b"\n")[2])
    path.write_bytes(path.read_bytes().replace(b"10 20\n", b"40 20\n", 1))
    with pytest.raises(WordVectorsError, match=r"line 12: the 20 values of 'word0010' are followed by b'd', not by the "
                                               r"newline that follows the first row's: a row before it does not have "
                                               r"the header's dimension 20 \(or the file is damaged\)") as exc:
        read_word_vectors(path, vocab=30)
    _one_line(exc)
    words, v = _rows(40, 20, short=True)
    data = _binary(words[:10], v[:10], False) + _binary(words[10:], w, False).partition(b"\n")[2]
    path.write_bytes(data.replace(b"10 20\n", b"40 20\n", 1))
    with pytest.raises(WordVectorsError, match=r"line 13: .*: a row before it does not have the header's dimension "
                                               r"20 \(or the file is damaged\)"):
        read_word_vectors(path, vocab=30)


_ALPHABET = "abcxyz_-019éü日"


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.integers(1, 40), st.integers(1, 300), st.booleans(), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([0, 0, -1, 1, -2, 3, -7, 50]), st.integers(0, 40),
       st.lists(st.text(_ALPHABET, min_size=1, max_size=16), min_size=40, max_size=40, unique=True))
def test_binary_files_read_exactly_or_refused_naming_the_dimensions(
        n: int, d: int, newline: bool, seed: int, off: int, vocab: int, words: list[str]) -> None:
    """Any word2vec binary file of either layout, words of any length and vectors of any scale: read exactly under
    its true header, refused naming both dimensions under a header off by `off` (whatever the vocab)."""
    import tempfile

    rng = np.random.default_rng(seed)
    v = (rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-3, 3)).astype(np.float32)
    vocab_ = None if vocab == 0 or vocab > n else vocab
    header = max(1, d + off)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.bin"
        path.write_bytes(_binary(words[:n], v, newline).replace(f"{n} {d}\n".encode(), f"{n} {header}\n".encode(), 1))
        if header == d:
            wv = read_word_vectors(path, vocab_)
            assert wv.words == words[:vocab_ or n]
            np.testing.assert_array_equal(wv.vectors, v[:vocab_ or n])
        else:
            with pytest.raises(WordVectorsError, match=rf"line 2: the rows have {d} values, but the header says "
                                                       rf"dimension {header}$"):
                read_word_vectors(path, vocab_)


@pytest.mark.parametrize("suffix", [".vec", ".vec.gz"])
def test_a_text_file_starting_with_a_byte_order_mark_is_read_past_it(tmp_path: Path, suffix: str) -> None:
    """Windows editors write UTF-8's byte-order mark first: the header after it is read (it was "expected the
    header 'N D'")."""
    v = _vectors()
    data = b"\xef\xbb\xbf" + _text(WORDS, v)
    path = tmp_path / ("w" + suffix)
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    wv = read_word_vectors(path)
    assert wv.words == WORDS
    np.testing.assert_array_equal(wv.vectors, v)
