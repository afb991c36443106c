"""Word vectors from fastText/word2vec files: text `.vec` (optionally `.gz`) and word2vec binary `.bin`.

Such files list words by decreasing frequency, so the `vocab` most frequent words are the first `vocab` rows; only
those rows are read (streaming, memory bounded by `vocab` × dimension). A bad file is refused in one line naming the
line (the header is line 1, word k is line k + 1; in a binary file a "line" is one word's entry).
"""

from __future__ import annotations

import gzip
import io
import os
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

TEXT_SUFFIXES = (".vec", ".vec.gz")
BINARY_SUFFIXES = (".bin", ".bin.gz")
SUFFIXES = TEXT_SUFFIXES + BINARY_SUFFIXES
_MAX_WORD_BYTES = 4096  # a binary entry's word longer than this is a corrupt file, not a word
_CHUNK = 1 << 20


class WordVectorsError(ValueError):
    """A word-vector file that cannot be read as one (the message names the file and the line)."""


@dataclass(frozen=True)
class WordVectors:
    """The first N words of a word-vector file (frequency order) and their vectors (float32, N × D)."""

    words: list[str]
    vectors: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])


def is_word_vector_file(path: str | os.PathLike) -> bool:
    """Whether `path` names a word-vector file by its suffix (.vec, .vec.gz, .bin, .bin.gz)."""
    return str(path).lower().endswith(SUFFIXES)


def read_word_vectors(path: str | os.PathLike, vocab: int | None = None) -> WordVectors:
    """The `vocab` most frequent words of the fastText/word2vec file `path` (all of them when None) and their vectors.

    A file with fewer words than `vocab`, a header that disagrees with the rows, a duplicate or non-UTF-8 word, a
    missing, non-numeric or non-finite value, or an empty vocabulary raise `WordVectorsError` naming the line."""
    p = Path(path).expanduser()
    name = str(p)
    if vocab is not None and (isinstance(vocab, bool) or not isinstance(vocab, (int, np.integer)) or vocab < 1):
        raise ValueError(f"vocab must be a positive whole number of words (or None for all), got {vocab!r}")
    if not is_word_vector_file(p):
        raise WordVectorsError(f"{name}: not a word-vector file: expected one of {', '.join(SUFFIXES)}")
    if not p.is_file():
        raise FileNotFoundError(f"word-vector file {name} does not exist or is not a file")
    binary = name.lower().endswith(BINARY_SUFFIXES)
    raw = gzip.open(p, "rb") if name.lower().endswith(".gz") else open(p, "rb")  # noqa: SIM115 - closed below
    with raw as f:
        try:
            reader = io.BufferedReader(f, buffer_size=_CHUNK) if isinstance(f, gzip.GzipFile) else f
            n, d = _header(reader.readline(), name)
            if vocab is not None and vocab > n:
                raise WordVectorsError(f"{name}: line 1: the file has {n} words, fewer than vocab={vocab}")
            rows = n if vocab is None else int(vocab)
            try:
                vectors = np.empty((rows, d), dtype=np.float32)
            except MemoryError:
                raise WordVectorsError(f"{name}: line 1: the header's {n} words of dimension {d} do not fit in "
                                       "memory: pass a smaller vocab") from None
            words, rest = (_binary_rows if binary else _text_rows)(reader, name, vectors, n)
            if vocab is None:
                _nothing_after(reader, name, n, rest)
        except (gzip.BadGzipFile, EOFError, zlib.error) as e:
            raise WordVectorsError(f"{name}: not a readable gzip file ({e})") from None
    return WordVectors(words=words, vectors=vectors)


def word_vector_array(path: str | os.PathLike, vocab: int | None = None) -> np.ndarray:
    """The vectors alone (float32 N × D) of `read_word_vectors`: a data source as the app's data configs take them."""
    return read_word_vectors(path, vocab).vectors


def _header(line: bytes, name: str) -> tuple[int, int]:
    """(words, dimension) from the header line "N D"; anything else is refused (line 1)."""
    parts = line.split()
    if len(parts) != 2 or not all(x.isdigit() for x in parts):
        shown = line[:60].decode("utf-8", "replace").strip()
        raise WordVectorsError(f"{name}: line 1: expected the header 'N D' (word count and dimension), got "
                               f"{shown!r}" if line else f"{name}: line 1: the file is empty (no header 'N D')")
    n, d = int(parts[0]), int(parts[1])
    if n == 0 or d == 0:
        raise WordVectorsError(f"{name}: line 1: empty vocabulary (header says {n} words of dimension {d})")
    return n, d


def _word(raw: bytes, name: str, line: int, seen: set[str]) -> str:
    """The word `raw` decoded, refused when it is not UTF-8, empty or already seen."""
    try:
        word = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise WordVectorsError(f"{name}: line {line}: the word {raw[:40]!r} is not UTF-8") from None
    if not word:
        raise WordVectorsError(f"{name}: line {line}: empty word")
    if word in seen:
        raise WordVectorsError(f"{name}: line {line}: duplicate word {word!r}")
    seen.add(word)
    return word


def _text_rows(f: BinaryIO, name: str, out: np.ndarray, n: int) -> tuple[list[str], bytes]:
    """Fill `out` from the text rows "word v1 ... vD" after the header (`n` words); the words in file order."""
    rows, d = out.shape
    words: list[str] = []
    seen: set[str] = set()
    for i in range(rows):
        line = i + 2
        raw = f.readline()
        if not raw:
            raise WordVectorsError(f"{name}: line {line}: the file ends after {i} words, but its header says {n}")
        raw = raw.rstrip(b"\r\n").rstrip(b" ")
        cut = raw.find(b" ")
        if cut <= 0:
            raise WordVectorsError(f"{name}: line {line}: expected a word and {d} values, got "
                                   f"{raw[:60].decode('utf-8', 'replace')!r}")
        words.append(_word(raw[:cut], name, line, seen))
        values = _values(raw[cut + 1:])
        if values is None or values.size != d:
            tokens = raw[cut + 1:].split()
            bad = next((t for t in tokens if not _is_number(t)), None)
            what = (f"the value {bad[:30].decode('utf-8', 'replace')!r} is not a number" if bad is not None
                    else f"{len(tokens)} values, but the header says dimension {d}")
            raise WordVectorsError(f"{name}: line {line}: {what}")
        if not np.isfinite(values).all():
            raise WordVectorsError(f"{name}: line {line}: a value is not finite (nan or inf)")
        out[i] = values
    return words, b""


def _values(text: bytes) -> np.ndarray | None:
    """The numbers of a row (np.fromstring stops at the first non-number; a short result is caught by the caller)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return np.fromstring(text, dtype=np.float32, sep=" ")
        except ValueError:
            return None


def _is_number(token: bytes) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _binary_rows(f: BinaryIO, name: str, out: np.ndarray, n: int) -> tuple[list[str], bytes]:
    """Fill `out` from word2vec binary entries "word<space><D little-endian float32>[\\n]" after the header (`n`
    words); the words in order and the bytes read past the last entry."""
    rows, d = out.shape
    size = 4 * d
    words: list[str] = []
    seen: set[str] = set()
    buf = b""
    pos = 0
    for i in range(rows):
        line = i + 2
        while True:  # the word: bytes up to a space, after the previous entry's optional newline(s)
            while pos < len(buf) and buf[pos:pos + 1] == b"\n":
                pos += 1
            cut = buf.find(b" ", pos)
            if cut >= 0:
                break
            if len(buf) - pos > _MAX_WORD_BYTES:
                raise WordVectorsError(f"{name}: line {line}: no word (no space within {_MAX_WORD_BYTES} bytes)")
            more = f.read(_CHUNK)
            if not more:
                raise WordVectorsError(f"{name}: line {line}: the file ends after {i} words, but its header "
                                       f"says {n}")
            buf, pos = buf[pos:] + more, 0
        words.append(_word(buf[pos:cut], name, line, seen))
        pos = cut + 1
        while len(buf) - pos < size:
            more = f.read(max(_CHUNK, size))
            if not more:
                raise WordVectorsError(f"{name}: line {line}: the file ends inside the vector of "
                                       f"{words[-1]!r} ({len(buf) - pos} of {size} bytes)")
            buf, pos = buf[pos:] + more, 0
        values = np.frombuffer(buf, dtype="<f4", count=d, offset=pos)
        if not np.isfinite(values).all():
            raise WordVectorsError(f"{name}: line {line}: a value of {words[-1]!r} is not finite (nan or inf)")
        out[i] = values
        pos += size
    return words, buf[pos:]


def _nothing_after(f: BinaryIO, name: str, n: int, rest: bytes) -> None:
    """Refuse a file with more entries than its header says (checked only when every word was read); `rest` is what
    was already read past the last entry."""
    rest = (rest + f.read(_MAX_WORD_BYTES)).strip()
    if rest:
        raise WordVectorsError(f"{name}: line {n + 2}: more rows than the header's {n} words")
