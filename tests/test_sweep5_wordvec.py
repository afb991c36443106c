"""Sweep 5: exact pins of the word-vector reader's bounds and messages, and of the word-vector studies' helpers."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import ganeval.data.wordvectors as wv


def _bin(words: list[str], v: np.ndarray, newline: bool = True, header: str | None = None) -> bytes:
    out = (header or f"{len(words)} {v.shape[1]}").encode() + b"\n"
    for w, row in zip(words, v):
        out += w.encode("utf-8") + b" " + np.asarray(row, "<f4").tobytes() + (b"\n" if newline else b"")
    return out


class _Recorder(io.BytesIO):
    """A binary file that records the size of every read."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.sizes: list[int] = []

    def read(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        self.sizes.append(-1 if size is None else size)
        return super().read(size)


def test_module_constants_and_suffixes() -> None:
    assert wv.SUFFIXES == (".vec", ".vec.gz", ".bin", ".bin.gz")
    assert wv._MAX_WORD_BYTES == 4096 and wv._CHUNK == 1048576 and wv._PROBE == 6
    assert wv.is_word_vector_file("A.BIN.GZ") and not wv.is_word_vector_file("a.npy")


def test_word_vectors_is_frozen_and_reports_its_dimension() -> None:
    w = wv.WordVectors(words=["a", "b"], vectors=np.zeros((2, 5), np.float32))
    assert w.dim == 5
    with pytest.raises(AttributeError):
        w.words = []  # type: ignore[misc]


def test_binary_rows_first_read_is_the_probe_bound_and_later_reads_a_chunk() -> None:
    """The first read is max(1 MiB, 7 × (4d + 4098)) bytes; each further read max(1 MiB, 4d + 4098)."""
    d, n = 40000, 9
    v = np.zeros((n, d), np.float32)
    v[:, 0] = np.arange(n)
    body = _bin([f"w{i}" for i in range(n)], v)
    head, rest = body.split(b"\n", 1)
    f = _Recorder(rest)
    out = np.empty((n, d), np.float32)
    words, tail = wv._binary_rows(f, "x.bin", out, n)
    assert f.sizes[0] == 7 * (4 * d + 4096 + 2) == 1148686
    assert f.sizes[1:] == [1 << 20] * (len(f.sizes) - 1) and len(f.sizes) >= 2
    assert words == [f"w{i}" for i in range(n)] and tail == b""
    np.testing.assert_array_equal(out, v)


def test_binary_rows_small_dimension_reads_one_mebibyte_first() -> None:
    body = _bin(["a", "b"], np.ones((2, 3), np.float32)).split(b"\n", 1)[1]
    f = _Recorder(body)
    out = np.empty((2, 3), np.float32)
    assert wv._binary_rows(f, "x.bin", out, 2) == (["a", "b"], b"")
    assert f.sizes == [1 << 20]


def test_binary_rows_huge_dimension_reads_more_than_a_chunk_each_time() -> None:
    """Rows of more than 1 MiB: every further read is 4d + 4098 bytes."""
    d, n = 270000, 8
    v = np.zeros((n, d), np.float32)
    v[:, -1] = np.arange(1, n + 1)
    body = _bin([f"w{i}" for i in range(n)], v).split(b"\n", 1)[1]
    f = _Recorder(body)
    out = np.empty((n, d), np.float32)
    words, _ = wv._binary_rows(f, "x.bin", out, n)
    assert f.sizes[0] == 7 * (4 * d + 4098)
    assert set(f.sizes[1:]) == {4 * d + 4098}
    assert words == [f"w{i}" for i in range(n)]
    np.testing.assert_array_equal(out, v)


@pytest.mark.parametrize("newline", [True, False])
def test_binary_file_longer_than_the_first_read_is_read_across_the_boundary(tmp_path: Path, newline: bool) -> None:
    """300 rows of 1000 values (1.2 MB): rows straddle the first read's end and are read exactly."""
    n, d = 300, 1000
    v = np.random.default_rng(1).standard_normal((n, d)).astype(np.float32)
    words = [f"word{i}" for i in range(n)]
    path = tmp_path / "w.bin"
    path.write_bytes(_bin(words, v, newline))
    got = wv.read_word_vectors(path)
    assert got.words == words
    np.testing.assert_array_equal(got.vectors, v)
    got = wv.read_word_vectors(path, vocab=n)
    np.testing.assert_array_equal(got.vectors, v)


def test_binary_nan_past_the_first_block_of_rows_is_named_by_its_line(tmp_path: Path) -> None:
    """Finite values are checked in blocks of 65536 rows: a nan in row 65538 (line 65540) is found and named."""
    n = 65540
    v = np.zeros((n, 1), np.float32)
    v[65538, 0] = np.nan
    v[65539, 0] = np.inf
    words = [f"{i}" for i in range(n)]
    path = tmp_path / "w.bin"
    path.write_bytes(_bin(words, v, True))
    with pytest.raises(wv.WordVectorsError, match=r"w\.bin: line 65540: a value of '65538' is not finite"):
        wv.read_word_vectors(path)


def test_binary_nan_near_the_end_of_the_first_block_is_found(tmp_path: Path) -> None:
    """Row 65000 lies in the first block of 65536 rows, past 61680: found and named (line 65002)."""
    n = 65001
    v = np.zeros((n, 1), np.float32)
    v[65000, 0] = -np.inf
    path = tmp_path / "w.bin"
    path.write_bytes(_bin([f"{i}" for i in range(n)], v, False))
    with pytest.raises(wv.WordVectorsError, match=r"w\.bin: line 65002: a value of '65000' is not finite"):
        wv.read_word_vectors(path)


def test_binary_first_non_finite_row_is_named(tmp_path: Path) -> None:
    v = np.zeros((4, 2), np.float32)
    v[0, 1] = np.nan
    v[2, 0] = np.inf
    path = tmp_path / "w.bin"
    path.write_bytes(_bin(["a", "b", "c", "d"], v, True))
    with pytest.raises(wv.WordVectorsError, match=r"line 2: a value of 'a' is not finite \(nan or inf\)$"):
        wv.read_word_vectors(path)
    v[0, 1] = 0
    path.write_bytes(_bin(["a", "b", "c", "d"], v, False))
    with pytest.raises(wv.WordVectorsError, match=r"line 4: a value of 'c' is not finite \(nan or inf\)$"):
        wv.read_word_vectors(path)


def test_entry_reads_exact_offsets() -> None:
    row = np.array([1.5, -2.0], "<f4").tobytes()
    buf = b"ab " + row + b"\n" + b"c " + row
    assert wv._entry(buf, 0, 2, b"\n", True) == (2, 12)
    assert wv._entry(buf, 12, 2, b"\n", True) == (13, 22)  # the last entry's newline may be left out
    assert wv._entry(buf, 22, 2, b"\n", True) == wv._END
    assert wv._entry(buf, 22, 2, b"\n", False) is None
    assert wv._entry(buf, 12, 2, b"\n", False) is None  # its newline may still come
    assert wv._entry(buf + b"\n", 12, 2, b"\n", False) == (13, 23)
    assert wv._entry(buf, 12, 2, b"", False) == (13, 22)
    assert wv._entry(b"ab " + row + b"x", 0, 2, b"", True) == (2, 11)
    assert wv._entry(b"ab " + row + b"x", 0, 2, b"\n", True) == (
        "the 2 values of 'ab' are followed by b'x', not by the newline that follows the first row's")
    assert wv._entry(b"ab " + row[:5], 0, 2, b"", True) == "the file ends inside the vector of 'ab' (5 of 8 bytes)"
    assert wv._entry(b"ab " + row[:5], 0, 2, b"", False) is None
    assert wv._entry(b"abc", 0, 2, b"", True) == "the file ends inside the word b'abc'"
    assert wv._entry(b"abc", 0, 2, b"", False) is None
    assert wv._entry(b" " + row, 0, 2, b"", True) == "empty word"
    assert wv._entry(b"\xff " + row, 0, 2, b"", True) == "the word b'\\xff' is not UTF-8"
    assert wv._entry(b"a\tb " + row, 0, 2, b"", True) == "the word b'a\\tb' holds whitespace or NUL"


def test_entry_word_length_bound_is_exactly_4096_bytes() -> None:
    row = np.zeros(1, "<f4").tobytes()
    ok = b"w" * 4096 + b" " + row
    assert wv._entry(ok, 0, 1, b"", True) == (4096, 4101)
    assert wv._entry(b"x" + ok, 1, 1, b"", True) == (4097, 4102)
    long = b"w" * 4097 + b" " + row
    assert wv._entry(long, 0, 1, b"", True) == "no word (no space within 4096 bytes)"
    assert wv._entry(long, 0, 1, b"", False) == "no word (no space within 4096 bytes)"
    assert wv._entry(b"w" * 4096, 0, 1, b"", True) == f"the file ends inside the word {b'w' * 40!r}"
    assert wv._entry(b"w" * 4096, 0, 1, b"", False) is None
    assert wv._entry(b"w" * 4097, 0, 1, b"", False) == "no word (no space within 4096 bytes)"


def test_binary_word_of_4096_bytes_is_read_and_4097_refused(tmp_path: Path) -> None:
    path = tmp_path / "w.bin"
    v = np.array([[1.0], [2.0]], np.float32)
    path.write_bytes(_bin(["a" * 4096, "b"], v, True))
    got = wv.read_word_vectors(path)
    assert got.words == ["a" * 4096, "b"]
    np.testing.assert_array_equal(got.vectors, v)
    path.write_bytes(_bin(["a" * 4097, "b"], v, True))
    with pytest.raises(wv.WordVectorsError, match=r"line 2: no word \(no space within 4096 bytes\)$"):
        wv.read_word_vectors(path)


def test_entries_counts_and_faults() -> None:
    row = np.array([3.0], "<f4").tobytes()
    buf = b"a " + row + b"\nb " + row + b"\nc " + row + b"\n"
    assert wv._entries(buf, 1, b"\n", 3, 3, True) == (3, None)
    assert wv._entries(buf, 1, b"\n", 2, 3, True) == (2, None)
    assert wv._entries(buf, 1, b"\n", 2, 2, True) == (2, "more rows than the header's 2 words")
    assert wv._entries(buf, 1, b"\n", 2, 2, False) == (2, None)
    assert wv._entries(buf, 1, b"\n", 4, 4, True) == (3, wv._END)
    assert wv._entries(buf[:-3], 1, b"\n", 3, 3, False) == (2, None)
    assert wv._entries(buf + b" \n", 1, b"\n", 3, 3, True) == (3, None)


def test_check_head_separator() -> None:
    row = np.array([3.0, 4.0], "<f4").tobytes()
    assert wv._check_head("x", b"a " + row + b"\nb " + row + b"\n", True, 2, 2) == b"\n"
    assert wv._check_head("x", b"a " + row + b"b " + row, True, 2, 2) == b""
    assert wv._check_head("x", b"a " + row, True, 1, 2) == b"\n"


def test_check_head_fault_lines() -> None:
    row = np.array([3.0, 4.0], "<f4").tobytes()
    with pytest.raises(wv.WordVectorsError, match=r"^x: line 3: the file ends after 1 words, but its header says 2$"):
        wv._check_head("x", b"a " + row + b"\n", True, 2, 2)
    with pytest.raises(wv.WordVectorsError, match=r"^x: line 2: empty word$"):
        wv._check_head("x", b" " + row + b"\n", True, 2, 2)


def test_fault_message_forms() -> None:
    assert wv._fault_message("f", 5, wv._END, 3, 9, 4) == "f: line 5: the file ends after 3 words, but its header says 9"
    assert wv._fault_message("f", 2, "empty word", 0, 9, 4) == "f: line 2: empty word"
    assert wv._fault_message("f", 4, "more rows than x", 2, 2, 4) == "f: line 4: more rows than x"
    assert wv._fault_message("f", 3, "empty word", 1, 9, 4) == (
        "f: line 3: empty word: a row before it does not have the header's dimension 4 (or the file is damaged)")


def test_other_dimension_finds_the_rows_dimension() -> None:
    row3 = np.array([1.0, 2.0, 3.0], "<f4").tobytes()
    nl = b"a " + row3 + b"\nb " + row3 + b"\nc " + row3 + b"\n"
    assert wv._other_dimension(nl, 2, 3, True, False) == 3
    assert wv._other_dimension(nl, 4, 3, True, False) == 3
    assert wv._other_dimension(nl, 3, 3, True, True) is None
    assert wv._other_dimension(b"\xff " + row3, 2, 1, True, False) is None
    assert wv._other_dimension(b"abc", 2, 1, True, False) is None
    gensim = b"a " + row3 + b"b " + row3 + b"c " + row3
    assert wv._other_dimension(gensim, 2, 3, True, False) == 3
    assert wv._other_dimension(gensim, 4, 3, True, True) == 3


def test_other_dimension_below_needs_two_newline_rows_or_three_bare_rows() -> None:
    row1 = np.array([1.0], "<f4").tobytes()
    two = b"a " + row1 + b"\nb " + row1 + b"\n"
    assert wv._other_dimension(two, 2, 2, False, True) == 1
    one = b"a " + row1 + b"\n"
    assert wv._other_dimension(one, 2, 1, False, True) is None
    assert wv._other_dimension(one, 2, 1, True, False) == 1
    bare2 = b"a " + row1 + b"b " + row1
    assert wv._other_dimension(bare2, 2, 2, False, True) is None
    bare3 = b"a " + row1 + b"b " + row1 + b"c " + row1
    assert wv._other_dimension(bare3, 2, 3, False, True) == 1


def test_nothing_after_reads_the_rest() -> None:
    wv._nothing_after(io.BytesIO(b" \n"), "f", 2, b"\n")
    with pytest.raises(wv.WordVectorsError, match=r"^f: line 4: more rows than the header's 2 words$"):
        wv._nothing_after(io.BytesIO(b"x"), "f", 2, b"")
    with pytest.raises(wv.WordVectorsError, match=r"^f: line 4: more rows than the header's 2 words$"):
        wv._nothing_after(io.BytesIO(b""), "f", 2, b"y")


def test_header_parsing() -> None:
    assert wv._header(b"3 7\n", "f") == (3, 7)
    assert wv._header(b"1 1", "f") == (1, 1)
    for bad in (b"3\n", b"3 7 1\n", b"3 x\n", b"x 3\n"):
        with pytest.raises(wv.WordVectorsError, match=r"^f: line 1: expected the header 'N D'"):
            wv._header(bad, "f")
    with pytest.raises(wv.WordVectorsError, match=r"^f: line 1: the file is empty"):
        wv._header(b"", "f")
    with pytest.raises(wv.WordVectorsError, match=r"got '" + "9" * 30 + " " + "9" * 29 + "'$"):
        wv._header(b"9" * 30 + b" " + b"9" * 40 + b" 1", "f")
    for bad, shown in ((b"0 3", "0 words of dimension 3"), (b"3 0", "3 words of dimension 0")):
        with pytest.raises(wv.WordVectorsError, match=rf"^f: line 1: empty vocabulary \(header says {shown}\)$"):
            wv._header(bad, "f")


def test_vocab_argument_edges(tmp_path: Path) -> None:
    path = tmp_path / "w.vec"
    path.write_bytes(b"2 2\na 1 2\nb 3 4\n")
    assert wv.read_word_vectors(path, vocab=1).words == ["a"]
    assert wv.read_word_vectors(path, vocab=np.int64(2)).words == ["a", "b"]
    assert wv.read_word_vectors(path, vocab=2).words == ["a", "b"]
    assert wv.read_word_vectors(path).words == ["a", "b"]
    np.testing.assert_array_equal(wv.word_vector_array(path, 1), np.array([[1, 2]], np.float32))
    with pytest.raises(wv.WordVectorsError, match=r"line 1: the file has 2 words, fewer than vocab=3$"):
        wv.read_word_vectors(path, vocab=3)
    for bad in (0, True, 1.0, "1"):
        with pytest.raises(ValueError, match="vocab must be a positive whole number"):
            wv.read_word_vectors(path, vocab=bad)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        wv.read_word_vectors(tmp_path / "nope.vec")
    (tmp_path / "d.vec").mkdir()
    with pytest.raises(FileNotFoundError):
        wv.read_word_vectors(tmp_path / "d.vec")
    path.write_bytes(b"2 2\na 1 2\nb 3 4\nc 5 6\n")
    assert wv.read_word_vectors(path, vocab=2).words == ["a", "b"]
    with pytest.raises(wv.WordVectorsError, match=r"line 4: more rows than the header's 2 words$"):
        wv.read_word_vectors(path)


def test_text_rows_messages_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "w.vec"
    cases = [
        (b"2 2\na 1 2\n", r"line 3: the file ends after 1 words, but its header says 2$"),
        (b"1 2\n 1 2\n", r"line 2: expected a word and 2 values, got ' 1 2'$"),
        (b"1 2\nab\n", r"line 2: expected a word and 2 values, got 'ab'$"),
        (b"1 2\na 1 x\n", r"line 2: the value 'x' is not a number$"),
        (b"1 2\na 1 2 3\n", r"line 2: 3 values, but the header says dimension 2$"),
        (b"1 2\na 1\n", r"line 2: 1 values, but the header says dimension 2$"),
        (b"2 2\na 1 2\na 3 4\n", r"line 3: duplicate word 'a'$"),
        (b"2 2\na 1 2\nb 1 nan\n", r"line 3: a value is not finite \(nan or inf\)$"),
        (b"1 2\na 1 1e39\n", r"line 2: the value 1e39 exceeds float32's range"),
        (b"1 3\na 1e39 inf 2\n", r"line 2: the value 1e39 exceeds float32's range"),
        (b"1 3\na inf 1e39 2\n", r"line 2: a value is not finite"),
        (b"1 2\n\xff 1 2\n", r"line 2: the word b'\\xff' is not UTF-8$"),
    ]
    for data, match in cases:
        path.write_bytes(data)
        with pytest.raises(wv.WordVectorsError, match=match):
            wv.read_word_vectors(path)


def test_text_row_with_one_letter_word_and_trailing_spaces(tmp_path: Path) -> None:
    path = tmp_path / "w.vec"
    path.write_bytes(b"2 2\nx 0.5 -1.25   \r\nyz 2 3\n")
    got = wv.read_word_vectors(path)
    assert got.words == ["x", "yz"]
    np.testing.assert_array_equal(got.vectors, np.array([[0.5, -1.25], [2, 3]], np.float32))


def test_word_checks() -> None:
    seen: set[str] = set()
    assert wv._word(b"a", "f", 2, seen) == "a" and seen == {"a"}
    with pytest.raises(wv.WordVectorsError, match=r"^f: line 3: duplicate word 'a'$"):
        wv._word(b"a", "f", 3, seen)
    with pytest.raises(wv.WordVectorsError, match=r"^f: line 4: empty word$"):
        wv._word(b"", "f", 4, seen)
    assert wv._is_number(b"1e3") and not wv._is_number(b"x")
    assert wv._shown(b"q" * 50) == repr("q" * 40)
    assert wv._not_finite([b"1", b"2", b"inf"], np.array([1, 2, np.inf])) == "a value is not finite (nan or inf)"
    assert wv._not_finite([b"1e39", b"inf"], np.array([np.inf, np.inf])).startswith("the value 1e39 exceeds")


# ------------------------------------------------------------------------------------------ studies/wordvec_dims

import pandas as pd  # noqa: E402

from ganeval.studies import wordvec_dims as wdims  # noqa: E402


def _seeded(values: dict[tuple[int, int], float]) -> pd.Series:
    idx = pd.MultiIndex.from_tuples(list(values), names=["train_seed", "run"])
    return pd.Series(list(values.values()), index=idx)


def test_wordvec_check_dims_and_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b\n")
    assert wdims.check([1, 2], str(corpus)) == [1, 2]
    assert wdims.check(np.array([8, 4]), str(corpus)) == [8, 4]
    for bad in ([4, 4], [4], [0, 4], [-1, 4], [4, 8, 4]):
        with pytest.raises(ValueError, match="dims must be at least two distinct positive dimensions"):
            wdims.check(bad, str(corpus))
    with pytest.raises(ValueError, match="does not exist or is not a file"):
        wdims.check([4, 8], str(tmp_path / "none.txt"))
    with pytest.raises(ValueError, match="does not exist or is not a file"):
        wdims.check([4, 8], str(tmp_path))


def test_wordvec_corpus_path_defaults_to_gensims_lee_corpus() -> None:
    assert wdims.corpus_path("my.txt") == "my.txt"
    for none in (None, ""):
        p = Path(wdims.corpus_path(none))
        assert p.name == "lee_background.cor" and p.parent.name == "test_data" and p.is_file()


def test_wordvec_train_matches_gensim_directly(tmp_path: Path) -> None:
    """One Word2Vec per dimension from the same seed, one worker (so the seed fixes it); the vocabulary is the first
    model's, in frequency order."""
    from gensim.models import Word2Vec
    from gensim.utils import simple_preprocess

    lines = Path(wdims.corpus_path(None)).read_text(encoding="utf-8").splitlines()  # > 10000 words: several jobs
    corpus = tmp_path / "c.cor"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    words, sets = wdims.train(str(corpus), [3, 5], 7, 1, 3)
    sentences = [simple_preprocess(x) for x in lines]
    m3 = Word2Vec(sentences, vector_size=3, min_count=3, epochs=1, workers=1, seed=7)
    m5 = Word2Vec(sentences, vector_size=5, min_count=3, epochs=1, workers=1, seed=7)
    assert words == list(m3.wv.index_to_key) and len(words) > 20
    assert list(sets) == ["3", "5"]
    assert sets["3"].dtype == np.float32 and sets["3"].shape == (len(words), 3) and sets["5"].shape == (len(words), 5)
    np.testing.assert_array_equal(sets["3"], np.stack([m3.wv[w] for w in words]))
    np.testing.assert_array_equal(sets["5"], np.stack([m5.wv[w] for w in words]))


def test_wordvec_with_seed_and_units() -> None:
    rows = pd.DataFrame({"run": [0, 1], "value": [1.0, 2.0]})
    assert list(wdims.with_seed(rows).train_seed) == [0, 0]
    seeded = rows.assign(train_seed=[3, 4])
    assert wdims.with_seed(seeded) is seeded
    one = _seeded({(0, 0): 1.0, (0, 1): 2.0, (0, 2): 6.0})
    x, unit = wdims.units(one)
    assert unit == "runs" and x.tolist() == [1.0, 2.0, 6.0]
    two = _seeded({(0, 0): 1.0, (0, 1): 2.0, (1, 0): 6.0, (1, 1): 10.0})
    x, unit = wdims.units(two)
    assert unit == "training seeds" and x.tolist() == [1.5, 8.0]


def test_wordvec_per_seed_labels() -> None:
    one = _seeded({(0, 0): 1.0, (0, 1): 2.0})
    assert wdims.per_seed(one, lambda y: "x") == ""
    two = _seeded({(0, 0): 1.0, (0, 1): 2.0, (1, 0): -6.0, (1, 1): -10.0})
    assert wdims.per_seed(two, lambda y: "same") == "per training seed (intervals over its runs): same at 2 of 2 seeds"
    assert wdims.per_seed(two, lambda y: f"{y.sum():g}") == "per training seed (intervals over its runs): seed 0 3, seed 1 -16"


def test_wordvec_shown_numbers() -> None:
    assert wdims.plain(-0.0123456) == "−0.0123"
    assert wdims.plain(12345.0) == "1.23e+04"
    assert wdims.percent_of(0.015) == "+1.5 %"
    assert wdims.percent_of(-0.2) == "−20.0 %"


def test_wordvec_constants() -> None:
    assert (wdims.STRONG.value, wdims.STRONG.low, wdims.STRONG.high) == (0.5, 0.3, 0.7)
    assert (wdims.CLEARLY.value, wdims.CLEARLY.low, wdims.CLEARLY.high) == (0.1, 0.05, 0.25)
    assert wdims.CORPUS == "lee_background.cor" and wdims.SEED == "train_seed"


def _matrix(value: dict[tuple[int, int], list[float]], seeds: tuple[int, ...] = (0,), metrics: tuple[str, ...] = ("imd",)
            ) -> pd.DataFrame:
    return pd.DataFrame([{"run": r, "a": str(a), "b": str(b), "metric": m, "value": v[r] + 0.5 * s, "train_seed": s}
                         for s in seeds for (a, b), v in value.items() for r in range(len(v)) for m in metrics])


def test_wordvec_pair_and_relative_are_exact() -> None:
    rows = _matrix({(4, 8): [2.0, 4.0], (16, 4): [3.0, 5.0], (8, 16): [1.0, 1.0]}, seeds=(1, 0))
    p = wdims._pair(rows, "imd", 4, 16)
    assert list(p.index) == [(0, 0), (0, 1), (1, 0), (1, 1)] and p.tolist() == [3.0, 5.0, 3.5, 5.5]
    assert wdims._pair(rows, "imd", 16, 4).tolist() == p.tolist()
    rel = wdims.relative(rows, "imd")
    assert rel.tolist() == [(3 - 2) / 2, (5 - 4) / 4, (3.5 - 2.5) / 2.5, (5.5 - 4.5) / 4.5]


def test_wordvec_rho_per_run_is_scipys_spearman() -> None:
    from scipy.stats import spearmanr

    vals = {(4, 8): [1.0, 3.0], (4, 16): [2.0, 1.0], (8, 16): [0.5, 2.0], (4, 32): [4.0, 0.1]}
    rows = _matrix(vals, seeds=(0, 2))
    got = wdims.rho_per_run(rows, "imd")
    assert list(got.index) == [(0, 0), (0, 1), (2, 0), (2, 1)]
    gaps = [abs(np.log2(a) - np.log2(b)) for a, b in vals]
    for r in (0, 1):
        want = spearmanr(gaps, [v[r] for v in vals.values()]).statistic
        assert got[(0, r)] == pytest.approx(want, rel=1e-12) and got[(2, r)] == pytest.approx(want, rel=1e-12)
    assert got[(0, 0)] == pytest.approx(3 / np.sqrt(10), rel=1e-12)  # hand-ranked, ties averaged


def test_wordvec_row_steps_three_dims() -> None:
    assert wdims.row_steps(["4", "8", "16"]) == [("4", "8", "16"), ("16", "8", "4")]
    assert wdims.row_steps(["4", "8"]) == []


def test_wordvec_sign_claim_texts_and_detectable() -> None:
    from ganeval.results import t_interval
    from ganeval.results.power import one_sided_mde
    from ganeval.results.verdicts import CONTRADICTED, HOLDS

    x = np.array([1.0, 1.2, 0.9, 1.1, 1.05])
    s = _seeded({(0, r): v for r, v in enumerate(x)})
    c = wdims.sign_claim("n", "st", s, "W", "T", 0.99, 0.95)
    iv = t_interval(x, 0.99)
    assert c.verdict == HOLDS
    assert c.rule == "W; one-sided t over 5 runs that it lies above 0"
    assert c.evidence == f"{wdims.plain(iv['mean'])} [{wdims.plain(iv['ci_low'])}, {wdims.plain(iv['ci_high'])}] over runs"
    assert c.detectable == f"{one_sided_mde(float(np.std(x, ddof=1)), 5, 0.05):.3g} (one-sided)"
    f = wdims.sign_claim("n", "st", s, "W", "T", 0.99, 0.95, flip=True)
    assert f.verdict == CONTRADICTED
    assert f.rule == "W; one-sided t over 5 runs (contradicted when it lies above 0, holds when below)"
    two = _seeded({(0, 0): 1.0, (0, 1): 1.1, (0, 2): 0.9, (1, 0): 2.0, (1, 1): 2.1, (1, 2): 1.9, (2, 0): 1.5,
                   (2, 1): 1.6, (2, 2): 1.4})
    g = wdims.sign_claim("n", "st", two, "W", "T", 0.9, 0.9, flip=True)
    assert g.verdict == CONTRADICTED
    assert "one-sided t over 3 training seeds" in g.rule
    assert g.evidence.endswith("per training seed (intervals over its runs): contradicted at 3 of 3 seeds")
    h = wdims.sign_claim("n", "st", two, "W", "T", 0.9, 0.9)
    assert h.evidence.endswith("per training seed (intervals over its runs): holds at 3 of 3 seeds")
    neg = _seeded({k: -v for k, v in two.items()})
    assert wdims.sign_claim("n", "st", neg, "W", "T", 0.9, 0.9, flip=True).evidence.endswith("holds at 3 of 3 seeds")


def test_wordvec_across_claim_texts() -> None:
    from ganeval.results import t_interval
    from ganeval.results.verdicts import HOLDS, NOT_TESTABLE

    x = np.array([0.9, 0.91, 0.92, 0.93])
    s = _seeded({(0, r): v for r, v in enumerate(x)})
    c = wdims.across_claim("n", "st", s, "W", wdims.STRONG, "above", 0.99)
    assert c.verdict == HOLDS and c.detectable == ""
    assert c.rule == "W; its Student-t interval over 4 runs above the threshold"
    iv = t_interval(x, 0.99)
    assert c.evidence == f"{wdims.plain(iv['mean'])} [{wdims.plain(iv['ci_low'])}, {wdims.plain(iv['ci_high'])}] over runs"
    y = np.array([0.1, 0.9, 0.5, 0.3])
    two = _seeded({(s_, r): v + s_ for s_ in (0, 1) for r, v in enumerate(y)})
    c = wdims.across_claim("n", "st", two, "W", wdims.STRONG, "above", 0.99)
    ivt = t_interval(np.array([0.45, 1.45]), 0.99)
    assert c.verdict == NOT_TESTABLE
    assert c.detectable == f"an interval clear of the threshold (half-width {ivt['half_width']:.2g})"
    assert c.evidence.endswith(f" (at {wdims.STRONG.show(0.5)})") and "over training seeds; " in c.evidence


def test_wordvec_monotone_claim_counts_and_lists_at_most_four_falls() -> None:
    from ganeval.results.verdicts import CONTRADICTED

    dims = [4, 8, 16, 32, 64]
    # every pair's distance falls with the gap: every step outward falls
    vals = {(a, b): [10 - abs(np.log2(b / a)) + e for e in (0.0, 0.01, -0.01, 0.02, -0.02)]
            for i, a in enumerate(dims) for b in dims[i + 1:]}
    c = wdims.monotone_claim(_matrix(vals), "imd", [str(d) for d in dims], 0.99)
    n = len(wdims.row_steps([str(d) for d in dims]))
    assert n == 12 and c.verdict == CONTRADICTED
    assert c.evidence.startswith(f"0 of {n} steps rise significantly, {n} fall (row 4: 16 nearer than 8; ")
    assert c.evidence.endswith(" …)") and c.evidence.count(";") == 3
    assert c.name == "IMD: every row grows away from the diagonal (stand-in corpus)"
    assert f"each of the {n} steps outward" in c.rule and "over runs" in c.rule


def _full(fn, seeds: tuple[int, ...] = (0,), dims: tuple[int, ...] = (4, 8, 16)) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"run": r, "a": str(a), "b": str(b), "metric": m, "value": fn(m, a, b) + rng.normal(0, 0.01),
                          "train_seed": s} for s in seeds for r in range(6) for i, a in enumerate(dims)
                         for b in dims[i + 1:] for m in ("imd", "pip")])


def test_wordvec_decide_claim_set_depends_on_4_8_16() -> None:
    from ganeval.results.verdicts import STAND_IN

    fn = lambda m, a, b: abs(np.log2(b / a))  # noqa: E731
    claims = wdims.decide(_full(fn), 0.99)
    assert len(claims) == 13
    paper = [c for c in claims if c.verdict == STAND_IN]
    assert [c.name for c in paper] == [x[1] for x in wdims.PAPER_CLAIMS]
    assert paper[0].evidence.startswith("on the Lee corpus stand-in: IMD: closer dimensions are closer: ")
    fewer = wdims.decide(_full(fn, dims=(4, 8, 32)), 0.99)
    assert len(fewer) == 7 and [c.name for c in fewer if c.verdict == STAND_IN] == [wdims.PAPER_CLAIMS[0][1]]
    assert wdims.paper_claims([]) == []


def test_wordvec_summary_frame_and_verdict_text() -> None:
    from ganeval.results import t_interval

    fn = lambda m, a, b: abs(np.log2(b / a)) * (2 if m == "pip" else 1)  # noqa: E731
    rows = _full(fn, seeds=(0, 1))
    summ = wdims.summary_frame(rows, 0.95)
    assert len(summ) == 6
    g = rows[(rows.a == "4") & (rows.b == "16") & (rows.metric == "pip")]
    means = g.groupby("train_seed").value.mean().to_numpy()
    row = summ[(summ.a == "4") & (summ.b == "16") & (summ.metric == "pip")].iloc[0]
    want = t_interval(means, 0.95)
    assert row["mean"] == pytest.approx(want["mean"], rel=1e-12) and row["ci_low"] == pytest.approx(want["ci_low"], rel=1e-12)
    one = wdims.summary_frame(rows.drop(columns="train_seed").query("run < 6").iloc[:36], 0.95)
    assert len(one) == 6
    config = {"dims": [4, 8, 16], "train_seeds": [0, 1], "seed": 0, "min_count": 2, "epochs": 3,
              "corpus_name": "c.cor", "vocabulary": 99, "runs": 6, "sample_size": 50,
              "imd": {"k": 5, "m": 10, "nv": 10}}
    claims = wdims.decide(rows, 0.95)
    text = wdims.verdict_text(claims, summ, config, 0.95)
    m48 = summ[(summ.a == "4") & (summ.b == "8") & (summ.metric == "imd")]["mean"].iloc[0]
    assert f"| **8** | {m48:.4g} | 0 |" in text and f"| **4** | 0 | {m48:.4g} |" in text
    assert "training seeds 0, 1, one worker" in text and "over the 2 training seeds" in text
    assert "|---|---|---|---|" in text and "| | 4 | 8 | 16 |" in text and "control variate" not in text
    text1 = wdims.verdict_text(claims, summ, {**config, "train_seeds": [5], "imd": {**config["imd"],
                                                                                      "variance_reduction": "cv"}}, 0.95)
    assert "training seed 5, one worker" in text1 and "over word subsamples of one trained embedding" in text1
    assert ", control variate cv)" in text1


# ------------------------------------------------------------------------------------ studies/language_manifolds

import inspect  # noqa: E402

from ganeval.studies import language_manifolds as lman  # noqa: E402


def test_lm_defaults_and_constants() -> None:
    assert inspect.signature(lman.measure).parameters["kid_subset"].default == 1000
    p = inspect.signature(lman.planted_families).parameters
    assert (p["n"].default, p["dim"].default, p["seed"].default) == (1200, 50, 0)
    assert (lman.RECOVERED.value, lman.RECOVERED.low, lman.RECOVERED.high) == (0.8, 0.6, 0.95)
    assert lman.PLANTED == (("ring", 3), ("blob", 3), ("roll", 3))


def test_lm_check_edges(tmp_path: Path) -> None:
    f = tmp_path / "a.vec"
    f.write_text("1 1\na 1\n")
    lman.check({"a": str(f)}, {"a": "x"}, 5, 5)
    lman.check({}, {}, 5, 4)
    with pytest.raises(ValueError, match=r"^vocab=4 is fewer than sample_size=5 words"):
        lman.check({"a": str(f)}, {}, 4, 5)
    with pytest.raises(ValueError, match=r"^languages\.b: .*none\.vec does not exist or is not a file$"):
        lman.check({"a": str(f), "b": str(tmp_path / "none.vec")}, {}, 5, 5)
    with pytest.raises(ValueError, match=r"^families names languages not given in languages: \['c', 'z'\]$"):
        lman.check({"a": str(f)}, {"z": "x", "a": "y", "c": "x"}, 5, 5)


def test_lm_write_vec_and_load(tmp_path: Path) -> None:
    v = np.array([[1.0, -0.5], [0.25, 2.0], [3.0, 4.0]])
    path = lman.write_vec(tmp_path / "x.vec", "q", v)
    assert path.read_text() == "3 2\nq0 1.000000 -0.500000\nq1 0.250000 2.000000\nq2 3.000000 4.000000\n"
    sets = lman.load({"x": str(path), 7: str(path)}, 2)
    assert list(sets) == ["x", "7"]
    np.testing.assert_array_equal(sets["x"], v[:2].astype(np.float32))
    with pytest.raises(wv.WordVectorsError, match="fewer than vocab=4"):
        lman.load({"x": str(path)}, 4)


def test_lm_fid_and_kid_are_the_metrics() -> None:
    from ganeval.metrics import fid, kid

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((40, 3)), rng.standard_normal((30, 3)) + 1
    assert lman._fid(a, b, rng) == pytest.approx(float(fid(a, b)), rel=1e-12)
    got = lman._kid(1000)(a, b, np.random.default_rng(5))
    assert got == pytest.approx(float(kid(a, b, subset_size=30, seed=np.random.default_rng(5))[0]), rel=1e-12)
    got = lman._kid(20)(a, b, np.random.default_rng(5))
    assert got == pytest.approx(float(kid(a, b, subset_size=20, seed=np.random.default_rng(5))[0]), rel=1e-12)
    got = lman._kid(35)(b, a, np.random.default_rng(5))
    assert got == pytest.approx(float(kid(b, a, subset_size=30, seed=np.random.default_rng(5))[0]), rel=1e-12)


def test_lm_clusters_symmetrise_and_fill_nan() -> None:
    m = np.array([[0, 1, 9, 9], [0, 0, 9, 9], [9, 9, 0, 1], [9, 9, 1, 0]], float)
    c = lman.clusters(m, 2)
    assert c[0] == c[1] != c[2] == c[3]
    # the upper triangle says 0-2 near; the larger of (i, j) and (j, i) counts: 0-2 are far
    m2 = np.array([[0, 1, 0.5, 9], [1, 0, 9, 9], [9, 9, 0, 1], [9, 9, 1, 0]], float)
    c2 = lman.clusters(m2, 2)
    assert c2[0] == c2[1] != c2[2] == c2[3]
    # a pair not scored counts as the largest distance
    m3 = np.array([[0, 1, np.nan, 5], [1, 0, 5, 5], [np.nan, 5, 0, 1], [5, 5, 1, 0]], float)
    c3 = lman.clusters(m3, 2)
    assert c3[0] == c3[1] != c3[2] == c3[3]
    assert sorted(lman.clusters(np.full((3, 3), np.nan), 3)) == [1, 2, 3]
    assert list(lman.clusters(m, 1)) == [1, 1, 1, 1]
    assert len(set(lman.clusters(m, 4))) == 4


def test_lm_recovered_label_at_the_threshold() -> None:
    from ganeval.results.verdicts import CONTRADICTED, HOLDS

    assert lman.recovered_label(0.8, True, 0.8) == CONTRADICTED
    assert lman.recovered_label(0.8, False, 0.8) == HOLDS
    assert lman.recovered_label(0.81, True, 0.8) == HOLDS
    assert lman.recovered_label(0.81, False, 0.8) == CONTRADICTED


def _lm_rows(names: list[str], fam: dict[str, str], metrics: tuple[str, ...] = ("imd", "fid"), runs: int = 2) -> pd.DataFrame:
    rows = []
    for r in range(runs):
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                near = fam[a] == fam[b]
                for m in metrics:
                    rows.append({"run": r, "a": a, "b": b, "metric": m, "value": (1.0 if near else 9.0) + 0.1 * r})
    return pd.DataFrame(rows)


def test_lm_decide_texts() -> None:
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, STAND_IN

    names = ["a", "b", "c", "d"]
    fam = {"a": "x", "b": "x", "c": "y", "d": "y"}
    for rows, f in ((None, fam), (pd.DataFrame(columns=["run", "a", "b", "metric", "value"]), fam),
                    (_lm_rows(names, fam), {})):
        (c,) = lman.decide(rows, names, f, 0.95)
        assert c.verdict == NOT_TESTABLE and c.evidence == "no word-vector files here"
        assert c.detectable == f"nothing: missing {lman.MISSING}"
    cl = lman.decide(_lm_rows(names, fam), names, fam, 0.95)
    assert [c.name for c in cl] == ["IMD recovers the language families", "FID does not recover the language families"]
    assert [c.verdict for c in cl] == [HOLDS, CONTRADICTED] and cl[0].evidence == "ARI = 1.000"
    assert "over 2 runs, cut into 2 clusters" in cl[0].rule and cl[0].rule.endswith("adjusted Rand index above the threshold")
    assert cl[1].rule.endswith("adjusted Rand index at or below the threshold")
    # FID scored only for some pairs: left out; a language without a family is its own
    part = _lm_rows(names, fam)
    part = part[(part.metric == "imd") | (part.a == "a")]
    demo = lman.decide(part, names, {"a": "x", "b": "x", "c": "y"}, 0.95, demonstration="made up")
    assert [c.name for c in demo] == ["IMD recovers the language families (demonstration: planted families)",
                                      "IMD recovers the 16 Wikipedias' language families; FID and KID do not"]
    assert "cut into 3 clusters" in demo[0].rule
    assert demo[1].verdict == STAND_IN and demo[1].evidence.startswith("made up: IMD recovers the language families: ")


def test_lm_mapping() -> None:
    assert lman.mapping({"a": 1}) == {"a": 1}
    with pytest.raises(ValueError, match=r"^expected a mapping name -> value, got \['a'\]$"):
        lman.mapping(["a"])


def test_lm_planted_families_small(tmp_path: Path) -> None:
    files, fams = lman.planted_families(tmp_path / "p", n=20, dim=9, seed=3)
    assert list(files) == ["ring_a", "ring_b", "ring_c", "blob_a", "blob_b", "blob_c", "roll_a", "roll_b", "roll_c"]
    assert fams == {n: n.split("_")[0] for n in files}
    got = wv.read_word_vectors(files["roll_b"])
    assert got.words[:2] == ["roll_b0", "roll_b1"] and got.vectors.shape == (20, 9)
    ring = wv.read_word_vectors(files["ring_a"]).vectors.astype(np.float64)
    s = np.linalg.svd(ring, compute_uv=False)  # a ring of radius r with 0.05 noise in 6 more directions: rank 8 of 9
    assert s[-1] < 1e-4 < s[-2]
    again, _ = lman.planted_families(tmp_path / "q", n=20, dim=9, seed=3)
    assert again["blob_c"].read_bytes() == files["blob_c"].read_bytes()


def test_lm_write_texts(tmp_path: Path) -> None:
    names = ["a", "b", "c", "d"]
    fam = {"a": "x", "b": "x", "c": "y", "d": "y"}
    config = {"languages": {n: f"{n}.vec" for n in names}, "families": fam, "vocab": 30, "runs": 2,
              "sample_size": 20, "seed": 0, "confidence": 0.95, "imd": {"k": 5, "m": 10, "nv": 10}}
    out = tmp_path / "o"
    out.mkdir()
    lman.write(out, _lm_rows(names, fam), config)
    text = (out / "verdict.md").read_text()
    assert "Protocol: 4 languages (a, b, c, d), the 30 most frequent words of each file, 2 runs of 20 words" in text
    assert "IMD clusters (2): a 1, b 1, c 2, d 2" in text and "control variate" not in text
    assert "A demonstration" not in text and (out / "summary.csv").exists()
    out2 = tmp_path / "o2"
    out2.mkdir()
    lman.write(out2, None, {**config, "languages": {}, "families": {}, "demonstration": "toy",
                            "imd": {**config["imd"], "variance_reduction": "cv"}})
    t2 = (out2 / "verdict.md").read_text()
    assert "0 languages (none given)" in t2 and f"Missing here: {lman.MISSING}." in t2
    assert "**A demonstration, not the paper's data**: toy." in t2 and ", control variate cv)" in t2
    assert not (out2 / "summary.csv").exists()


# ------------------------------------------------------------------------------------------ studies/heat_clusters

from ganeval.studies import heat_clusters as hcl  # noqa: E402


def test_hc_constants_and_defaults() -> None:
    assert hcl.CLASSES == tuple(range(1, 11)) and hcl.LARGE_T == (10.0, 30.0, 100.0) and hcl.DECIDE_T == 100.0
    assert (hcl.STEP, hcl.STRONG, hcl.FACTOR, hcl.PER_CLASS, hcl.K) == (1e-3, 0.8, 2.0, 150, 5)
    p = inspect.signature(hcl.measure).parameters
    assert (p["per_class"].default, p["runs"].default, p["seed"].default, p["k"].default) == (150, 20, 0, 5)
    assert p["classes"].default == tuple(range(1, 11))
    assert inspect.signature(hcl.counts).parameters["k"].default == 5
    assert inspect.signature(hcl.cross_class_edges).parameters["k"].default == 5
    assert inspect.signature(hcl.t_points).parameters["ts"].default == (10.0, 30.0, 100.0)


def test_hc_t_points_exact() -> None:
    assert hcl.t_points().tolist() == [10 * 0.999, 10 * 1.001, 30 * 0.999, 30 * 1.001, 100 * 0.999, 100 * 1.001]
    assert hcl.t_points([2.0]).tolist() == [2.0 * (1.0 - 1e-3), 2.0 * (1.0 + 1e-3)]


def test_hc_cross_class_edges_hand_counted() -> None:
    x = np.array([[0.0], [1.0], [3.0], [7.0]])
    lab = np.array([0, 0, 1, 1])
    # 1-NN: 0→1, 1→0, 2→1, 3→2: one edge of four joins the classes
    assert hcl.cross_class_edges(x, lab, k=1) == 0.25
    # 2-NN: 0→{1,2}, 1→{0,2}, 2→{1,0}, 3→{2,1}: 0-2, 1-2, 2-1, 2-0, 3-1 cross: 5 of 8
    assert hcl.cross_class_edges(x, lab, k=2) == 5 / 8
    y = np.arange(12, dtype=float)[:, None]
    assert hcl.cross_class_edges(y, (np.arange(12) >= 6).astype(int)) == pytest.approx(
        np.mean([sum((j >= 6) != (i >= 6) for j in sorted(range(12), key=lambda j: (abs(j - i), j))[1:6])
                 for i in range(12)]) / 5, abs=0)


def test_hc_measure_least_and_first_illegal_per_class() -> None:
    rows = hcl.measure(per_class=2, runs=1, classes=(3,), k=2)
    assert len(rows) == 6 and set(rows.n) == {6} and rows.t.tolist() == hcl.t_points().tolist()
    assert set(rows.run) == {0} and set(rows.classes) == {3}
    one = hcl.measure(per_class=20, runs=1, classes=(1,))
    assert set(one.cross_edges) == {0.0} and set(one.n) == {20}  # every row a 0: no edge joins two classes
    with pytest.raises(ValueError, match=r"^per_class must lie in 2\.\.174 \(the smallest digit class\), got 1$"):
        hcl.measure(per_class=1, runs=1, classes=(1,))
    with pytest.raises(ValueError, match=r"got 175$"):
        hcl.measure(per_class=175, runs=1, classes=(1,))


def _hc_rows(count: dict[int, list[float]], k: int = 5) -> pd.DataFrame:
    """runs.csv rows whose count read at every large t is count[classes][run], the null computed as `counts` does."""
    from ganeval.metrics.imd import SCALE, normalize_trace

    out = []
    for c, per_run in count.items():
        n = 100 * c
        for r, val in enumerate(per_run):
            for t in hcl.LARGE_T:
                lo, hi = t * (1.0 - 1e-3), t * (1.0 + 1e-3)
                null = normalize_trace(np.ones(2), "er", n, k, np.asarray([lo, hi])) * SCALE
                out += [{"run": r, "classes": c, "n": n, "cross_edges": 0.01 * c, "t": x, "value": val * v}
                        for x, v in zip((lo, hi), null)]
    return pd.DataFrame(out)


def test_hc_counts_exact_with_the_default_k() -> None:
    got = hcl.counts(_hc_rows({1: [1.0, 2.0], 4: [4.0, 8.0]}))
    assert got.columns.tolist() == ["run", "classes", "t", "count"] and len(got) == 12
    assert got["count"].tolist() == [1.0] * 3 + [4.0] * 3 + [2.0] * 3 + [8.0] * 3
    assert got["t"].tolist() == [10.0, 30.0, 100.0] * 4


def test_hc_decide_at_the_factor_bounds_exactly() -> None:
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE

    half = {c: [0.5 * c] * 3 for c in (1, 2, 4, 8)}
    (reflects, approx), per_k = hcl.decide(_hc_rows(half), 0.95)
    assert reflects.verdict == HOLDS and approx.verdict == HOLDS  # ĉ/k = 1/2 exactly: within [1/2, 2]
    assert reflects.detectable == "" and approx.detectable == ""
    assert approx.evidence == "ĉ/k furthest from 1 at k = 1: 0.50 [0.50, 0.50]"
    assert reflects.evidence == "ρ = 1.000 [1.000, 1.000]; ĉ per k: 1: 0.50, 2: 1.00, 4: 2.00, 8: 4.00"
    assert "k = 1..8" in reflects.rule and "over 3 independent runs against +0.8" in reflects.rule
    assert approx.rule.endswith("each of k = 1..8: its Student-t interval over 3 runs against [1/2, 2]")
    double = {c: [2.0 * c] * 3 for c in (1, 2, 4, 8)}
    assert hcl.decide(_hc_rows(double), 0.95)[0][1].verdict == HOLDS
    quarter = {c: [0.25 * c] * 3 for c in (1, 2, 4, 8)}
    assert hcl.decide(_hc_rows(quarter), 0.95)[0][1].verdict == CONTRADICTED
    four = {c: [4.0 * c] * 3 for c in (1, 2, 4, 8)}
    assert hcl.decide(_hc_rows(four), 0.95)[0][1].verdict == CONTRADICTED
    straddle = {1: [0.25, 1.0, 0.5], 2: [2.0] * 3}
    (r2, a2), _ = hcl.decide(_hc_rows(straddle), 0.95)
    assert a2.verdict == NOT_TESTABLE and a2.detectable.startswith("an interval of ĉ/k within or beyond the bounds")
    assert per_k.columns.tolist()[:2] == ["t", "classes"] and per_k["cross_edges"].tolist() == pytest.approx([0.01, 0.02, 0.04, 0.08] * 3, rel=1e-12)


def test_hc_decide_flat_runs_have_rho_zero_and_a_worst_negative_count() -> None:
    from ganeval.results.verdicts import CONTRADICTED

    flat = {c: [4.0, 4.0] for c in (1, 2, 3)}  # a power of 2: the count read is exactly 4
    (reflects, approx), _ = hcl.decide(_hc_rows(flat), 0.95)
    assert reflects.verdict == CONTRADICTED and reflects.evidence.startswith("ρ = 0.000 [0.000, 0.000]")
    assert approx.evidence.startswith("ĉ/k furthest from 1 at k = 1: 4.00")
    neg = {1: [1.0, 1.0], 2: [-2.0, -2.0], 3: [9.0, 9.0]}
    (_, approx), _ = hcl.decide(_hc_rows(neg), 0.95)
    assert approx.evidence.startswith("ĉ/k furthest from 1 at k = 2: -1.00")


def test_hc_decide_not_testable_reflects_names_the_distance() -> None:
    from ganeval.results import t_interval
    from ganeval.results.verdicts import NOT_TESTABLE

    runs = {1: [1.0, 1.0, 1.0, 3.0], 2: [2.0, 0.5, 2.0, 2.0], 3: [3.0, 3.0, 0.25, 1.0]}
    (reflects, _), _ = hcl.decide(_hc_rows(runs), 0.95)
    from scipy.stats import spearmanr

    rho = [spearmanr([1, 2, 3], [runs[1][r], runs[2][r], runs[3][r]]).statistic for r in range(4)]
    iv = t_interval(rho, 0.95)
    assert reflects.verdict == NOT_TESTABLE
    assert reflects.detectable == (f"an interval half-width below {abs(iv['mean'] - 0.8):.2g} "
                                   f"(measured {iv['half_width']:.2g})")


def test_hc_verdict_text_table() -> None:
    half = {c: [0.5 * c, 0.5 * c] for c in (1, 2)}
    claims, per_k = hcl.decide(_hc_rows(half), 0.95)
    text = hcl.verdict_text(claims, per_k, {"runs": 2, "per_class": 7, "k": 5, "seed": 3}, 0.95)
    assert "| classes k | n | cross-class 5-NN edges | ĉ at t = 10 | ĉ at t = 30 | ĉ at t = 100 |" in text
    assert "|---|---|---|---|---|---|" in text
    assert "| 2 | 14 | 2.0% | 1.00 [1.00, 1.00] | 1.00 [1.00, 1.00] | 1.00 [1.00, 1.00] |" in text
    assert "t = 10: 0.50–0.50; t = 30: 0.50–0.50; t = 100: 0.50–0.50 (\"approximate\" = within [1/2, 2])." in text
    assert "seed 3;" in text and "t·(1 ± 0.001)" in text


def test_wordvec_measure_scores_pip_on_aligned_rows() -> None:
    """A set and the same rows scaled by 3: PIP is 0 only when both subsamples are the same words."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((60, 4))
    rows = wdims.measure({"4": a, "x": 3 * a}, 2, 20, 0, {"k": 3, "m": 5, "nv": 2, "method": "exact"})
    pip = rows[rows.metric == "pip"]
    assert len(pip) == 2 and pip.value.abs().max() < 1e-6
    assert set(rows.metric) == {"imd", "pip"}
