"""Word-vector files (fastText/word2vec text, gzipped text, word2vec binary): values, vocab, and every bad file."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

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
