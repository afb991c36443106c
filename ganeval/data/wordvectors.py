"""Word vectors from fastText/word2vec files: text `.vec` (optionally `.gz`) and word2vec binary `.bin`.

Such files list words by decreasing frequency, so the `vocab` most frequent words are the first `vocab` rows; only
those rows are read (streaming, memory bounded by `vocab` × dimension). A bad file is refused in one line naming the
line (the header is line 1, word k is line k + 1; in a binary file a "line" is one word's entry). A binary file has
no line breaks to go by: each entry's bytes are placed by the header's dimension, so a header that disagrees with the
rows reads them out of step, silently where the words are long. Its first entries are therefore read under the
header's dimension and under every other one, whatever `vocab`, and a header that another dimension fits is refused
naming both; every entry read after them is checked as it comes (its word, the newline after its vector).
"""

from __future__ import annotations

import gzip
import io
import os
import re
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
_BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark, which Windows editors write at the start of a text file


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
    missing, non-numeric or non-finite value (or one past float32's range), or an empty vocabulary raise
    `WordVectorsError` naming the line. A text file may start with a UTF-8 byte-order mark."""
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
            first = reader.readline()
            n, d = _header(first if binary else first.removeprefix(_BOM), name)
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
            raise WordVectorsError(f"{name}: line {line}: {_not_finite(raw[cut + 1:].split(), values)}")
        out[i] = values
    return words, b""


def _not_finite(tokens: list[bytes], values: np.ndarray) -> str:
    """What is wrong with the first value of a text row that float32 does not hold: a number past its range (it
    would be read as inf), or nan/inf as written."""
    token = tokens[int(np.flatnonzero(~np.isfinite(values))[0])]
    if np.isfinite(float(token)):
        return (f"the value {token[:30].decode('utf-8', 'replace')} exceeds float32's range "
                f"(±{float(np.finfo(np.float32).max):.4g}): rescale the vectors")
    return "a value is not finite (nan or inf)"


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
    """Fill `out` from word2vec binary entries "word<space><D little-endian float32>" after the header (`n` words),
    each followed by a newline (word2vec.c) or by nothing (gensim) as the first entry is; the words in order and the
    bytes read past the last entry. The file's first entries are checked against the header's dimension whatever
    `out`'s rows (`_check_head`), then every entry read against the header as it comes (`_entry`)."""
    rows, d = out.shape
    want = max(_CHUNK, (_PROBE + 1) * (4 * d + _MAX_WORD_BYTES + 2))
    buf = f.read(want)
    eof = len(buf) < want
    sep = _check_head(name, buf, eof, n, d)
    words: list[str] = []
    seen: set[str] = set()
    pos = 0
    for i in range(rows):
        line = i + 2
        got = _entry(buf, pos, d, sep, eof)
        while got is None:  # the entry goes on past what was read
            more = f.read(max(_CHUNK, 4 * d + _MAX_WORD_BYTES + 2))
            eof = not more
            buf, pos = buf[pos:] + more, 0
            got = _entry(buf, pos, d, sep, eof)
        if isinstance(got, str):
            raise WordVectorsError(_fault_message(name, line, got, i, n, d))
        cut, end = got
        words.append(_word(buf[pos:cut], name, line, seen))
        out[i] = np.frombuffer(buf, dtype="<f4", count=d, offset=cut + 1)
        pos = end
    for start in range(0, rows, _CHUNK // 16):  # finite values, checked in blocks (a row at a time costs more)
        bad = np.flatnonzero(~np.isfinite(out[start:start + _CHUNK // 16]).all(axis=1))
        if bad.size:
            i = start + int(bad[0])
            raise WordVectorsError(f"{name}: line {i + 2}: a value of {words[i]!r} is not finite (nan or inf)")
    return words, buf[pos:]


_PROBE = 6  # a binary file's first entries, read under its header's dimension and under others, whatever the vocab
_END = "END"  # `_entry`: the file ends where an entry would begin
# no word holds whitespace (word2vec.c and fastText split words at it) or NUL; in a row read out of step, float bytes do
_NOT_IN_WORDS = re.compile(rb"[\x00\t\n\v\f\r]")


def _entry(buf: bytes, pos: int, d: int, sep: bytes, eof: bool) -> tuple[int, int] | str | None:
    """The binary entry at `pos` of `buf` read with dimension `d`, each vector followed by `sep` (b"\\n" or b""):
    (where its word ends, where the next entry begins); what is wrong with it (`_END`: nothing is left); None when
    `buf` ends inside it and more may follow (not `eof`)."""
    cut = buf.find(b" ", pos, pos + _MAX_WORD_BYTES + 1)
    if cut < 0:
        if len(buf) - pos > _MAX_WORD_BYTES:
            return f"no word (no space within {_MAX_WORD_BYTES} bytes)"
        if not eof:
            return None
        return _END if pos >= len(buf) else f"the file ends inside the word {buf[pos:pos + 40]!r}"
    raw = buf[pos:cut]
    fault = _word_fault(raw)
    if fault is not None:
        return fault
    end = cut + 1 + 4 * d
    if len(buf) < end + len(sep) and not eof:
        return None
    if len(buf) < end:
        return f"the file ends inside the vector of {_shown(raw)} ({len(buf) - cut - 1} of {4 * d} bytes)"
    if sep and end < len(buf) and buf[end:end + 1] != sep:  # the last entry's newline may be left out
        return (f"the {d} values of {_shown(raw)} are followed by {buf[end:end + 1]!r}, not by the newline that "
                "follows the first row's")
    return cut, min(end + len(sep), len(buf))


def _word_fault(raw: bytes) -> str | None:
    """What makes the bytes `raw` no binary entry's word (empty, not UTF-8, whitespace or NUL), else None."""
    if not raw:
        return "empty word"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return f"the word {raw[:40]!r} is not UTF-8"
    if _NOT_IN_WORDS.search(raw):
        return f"the word {raw[:40]!r} holds whitespace or NUL"
    return None


def _shown(raw: bytes) -> str:
    return repr(raw[:40].decode("utf-8", "replace"))


def _entries(buf: bytes, d: int, sep: bytes, limit: int, n: int, eof: bool) -> tuple[int, str | None]:
    """How many of the first `limit` entries of `buf` (a binary file's bytes after its header line, `n` words) read
    with dimension `d` and separator `sep`, and what is wrong with the next (None: `limit` read, or `buf` ended
    first while more may follow; with every entry of a whole file read, bytes after them are a fault)."""
    pos = 0
    for i in range(limit):
        got = _entry(buf, pos, d, sep, eof)
        if got is None:
            return i, None
        if isinstance(got, str):
            return i, got
        pos = got[1]
    if limit == n and eof and buf[pos:].strip():
        return limit, f"more rows than the header's {n} words"
    return limit, None


def _check_head(name: str, head: bytes, eof: bool, n: int, d: int) -> bytes:
    """The separator after each vector of a binary file whose first bytes after the header line are `head`: b"\\n"
    when the first entry read with the header's dimension `d` is followed by one (word2vec.c), else b"" (gensim).
    Refused, naming the rows' dimension when another one reads them: a header whose dimension its first rows
    disagree with; rows of fewer values, each followed by a newline, that read as the header's dimension too (each
    vector then ends with the newline and the next word's first letters, and the next word loses them)."""
    first = _entry(head, 0, d, b"\n", eof)
    sep = b"\n" if isinstance(first, tuple) else b""
    limit = min(n, _PROBE)
    count, fault = _entries(head, d, sep, limit, n, eof)
    other = _other_dimension(head, d, n, eof, fault is None)
    if other is not None:
        raise WordVectorsError(f"{name}: line 2: the rows have {other} values, but the header says dimension {d}")
    if fault is not None:
        raise WordVectorsError(_fault_message(name, count + 2, fault, count, n, d))
    return sep


def _other_dimension(head: bytes, d: int, n: int, eof: bool, below: bool) -> int | None:
    """A dimension other than `d` with which every entry in `head` reads (see `_entries`; all `n` of them, and
    nothing after, when `head` is the whole file), nearest `d` first; None when there is none. Entries may merge by
    chance where words are short, but not all through a file. With `below` (the header's dimension reads the first
    entries too), only smaller ones that read at least 2 entries followed by newlines or 3 followed by nothing."""
    cut = head.find(b" ", 0, _MAX_WORD_BYTES + 1)
    if cut < 0 or _word_fault(head[:cut]) is not None:
        return None  # the first word is where it is whatever the dimension
    top = d - 1 if below else min((len(head) - cut - 1) // 4, 4 * d + _MAX_WORD_BYTES)
    for e in sorted(range(1, top + 1), key=lambda e: (abs(e - d), e)):
        at = cut + 1 + 4 * e
        for sep in (b"\n", b""):
            nxt = head[at:at + 1]
            if nxt and (nxt != b"\n" if sep else (nxt in b" \x00\t\n\v\f\r" or 0x80 <= nxt[0] < 0xC2)):
                continue  # cannot be followed by what follows `e` values (a newline; a word's first byte)
            count, fault = _entries(head, e, sep, n, n, eof)
            if fault is None and (count >= (2 if sep else 3) or count == n and not below):
                return e
    return None


def _fault_message(name: str, line: int, fault: str, read: int, n: int, d: int) -> str:
    """The refusal of a binary entry at `line` (`read` entries before it) that `_entry` found wrong: out of step
    with its header once rows before it were read, since an entry's bytes are placed by the dimension."""
    if fault == _END:
        return f"{name}: line {line}: the file ends after {read} words, but its header says {n}"
    if read == 0 or fault.startswith("more rows"):
        return f"{name}: line {line}: {fault}"
    return (f"{name}: line {line}: {fault}: a row before it does not have the header's dimension {d} "
            "(or the file is damaged)")


def _nothing_after(f: BinaryIO, name: str, n: int, rest: bytes) -> None:
    """Refuse a file with more entries than its header says (checked only when every word was read); `rest` is what
    was already read past the last entry."""
    rest = (rest + f.read(_MAX_WORD_BYTES)).strip()
    if rest:
        raise WordVectorsError(f"{name}: line {n + 2}: more rows than the header's {n} words")
