"""Large tables read a chunk at a time, with errors that name the file's line or row.

The auction loaders (:mod:`~dpbandits.recommendation.auction_files` and
:mod:`~dpbandits.recommendation.taobao`, paper 001 §4 and App. E) read their files through
pandas' C parser (CSV) or pyarrow (Parquet), ``chunk_rows`` rows at a time, so the text of a
26-million-row log is never held at once: only the compact numeric columns are kept. Every bad
cell is reported with its place in the file -- ``raw_sample.csv, line 7`` for CSV (the header
is line 1; one record per line, as these logs are written) or ``a.parquet, row 7`` (the 1-based
data row) -- and its column. pandas (and pyarrow for Parquet) are the optional extras
``pandas`` and ``parquet`` (docs/recommendation.md, "Your auction data").
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.core.arrays import FloatArray
from dpbandits.core.extras import install_hint

__all__ = ["CHUNK_ROWS", "Chunk", "Codes", "TableFile", "open_table"]

#: Rows per chunk: about 50-100 MB of parsed columns, whatever the file's length.
CHUNK_ROWS = 1_000_000


def _pandas(path: str) -> Any:
    parquet = _is_parquet(path)
    try:
        import pandas as pd

        if parquet:
            import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        extra, needs = ("parquet", "pandas and pyarrow") if parquet else ("pandas", "pandas")
        raise ImportError(
            f"reading {os.path.basename(path)} needs {needs} (dpbandits' optional extra "
            f"'{extra}'): {install_hint(extra)}"
        ) from exc
    return pd


def _is_parquet(path: str) -> bool:
    return path.lower().endswith((".parquet", ".pq"))


@dataclass
class Chunk:
    """``frame``: the chunk's columns (stripped names); ``rows``: each row's data-row index in
    the file (0-based; blank lines skipped); ``place``: the file's place of a data-row index."""

    frame: Any
    rows: NDArray[np.int64]
    place: Callable[[int], str]

    def __len__(self) -> int:
        return int(len(self.frame))

    def where(self, i: int) -> str:
        """The file and line (CSV) or row (Parquet) of the chunk's row ``i``."""
        return self.place(int(self.rows[i]))

    def fail(self, bad: NDArray[np.bool_], name: str, message: str) -> None:
        """Raise at the first row where ``bad``: ``FILE, line N, column 'name': message``."""
        if bad.any():
            raise ValueError(f"{self.where(int(np.argmax(bad)))}, column {name!r}: {message}")

    def text(self, name: str) -> NDArray[Any]:
        """Column ``name`` as stripped text; a missing or empty cell is an error."""
        col = self.frame[name]
        missing = col.isna().to_numpy()
        if not missing.any():
            col = col.astype(str).str.strip()
            missing = (col == "").to_numpy()
        if missing.any():
            i = int(np.argmax(missing))
            raise ValueError(f"{self.where(i)}, column {name!r}: empty cell")
        return np.asarray(col.to_numpy(), dtype=object)

    def numbers(self, name: str, *, empty: bool = False, bools: bool = False) -> FloatArray:
        """Column ``name`` as floats. Text that is not a number, infinities and NaN are errors
        naming the cell; an empty cell is NaN when ``empty`` (else an error); ``True``/``False``
        only when ``bools``."""
        import pandas as pd

        col = self.frame[name]
        kind = col.dtype.kind
        if kind == "b":  # a column of True/False (Parquet booleans, or CSV text)
            if not bools:
                raise ValueError(
                    f"{self.where(0)}, column {name!r}: {col.iloc[0]!r} is not a number"
                )
            values = col.to_numpy(dtype=np.float64)
        elif kind in "iuf":
            values = col.to_numpy(dtype=np.float64, na_value=np.nan)
        else:  # text somewhere in the column: find the first cell that is no number
            raw = col.astype(object)
            blank = (raw.isna() | (raw.astype(str).str.strip() == "")).to_numpy()
            conv = pd.to_numeric(raw.where(~blank, None), errors="coerce")
            bad = conv.isna().to_numpy() & ~blank
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(
                    f"{self.where(i)}, column {name!r}: {raw.iloc[i]!r} is not a number"
                )
            values = conv.to_numpy(dtype=np.float64, na_value=np.nan)
        missing = np.isnan(values)
        if missing.any() and not empty:
            i = int(np.argmax(missing))
            raise ValueError(f"{self.where(i)}, column {name!r}: empty cell")
        inf = np.isinf(values)
        if inf.any():
            i = int(np.argmax(inf))
            raise ValueError(f"{self.where(i)}, column {name!r}: {values[i]} is not finite")
        return values

    def integers(self, name: str) -> NDArray[np.int64]:
        """Column ``name`` as integers (``3.0`` is 3; ``3.5`` and empty cells are errors)."""
        v = self.numbers(name)
        self.check(name, v, v == np.floor(v), "is not an integer")
        return v.astype(np.int64)

    def check(self, name: str, values: FloatArray, ok: NDArray[np.bool_], rule: str) -> None:
        """Raise at the first cell of ``values`` that is not ``ok`` (NaN cells pass)."""
        bad = ~ok & ~np.isnan(values)
        if bad.any():
            i = int(np.argmax(bad))
            self.fail(bad, name, f"{values[i]:g} {rule}")


class Codes:
    """Dense integer codes for values met chunk after chunk, in order of first appearance."""

    def __init__(self) -> None:
        import pandas as pd

        self._pd = pd
        self.values = pd.Index([], dtype=object)

    def encode(self, values: NDArray[Any]) -> NDArray[np.int64]:
        codes, uniques = self._pd.factorize(values)
        known = self.values.get_indexer(uniques)
        new = known < 0
        known[new] = len(self.values) + np.arange(int(new.sum()))
        self.values = self.values.append(self._pd.Index(uniques[new]))
        return known[codes].astype(np.int64)


@dataclass(frozen=True)
class TableFile:
    """A CSV or Parquet file's header, read: ``columns`` are the stripped names."""

    path: str
    columns: tuple[str, ...]
    raw: tuple[str, ...]  # the names as written

    @property
    def parquet(self) -> bool:
        return _is_parquet(self.path)

    def require(self, required: Sequence[str], what: str = "") -> None:
        """Every name of ``required`` is a column, once."""
        twice = sorted({c for c in self.columns if self.columns.count(c) > 1})
        if twice:
            raise ValueError(f"{self.path}: column(s) {', '.join(twice)} appear more than once")
        missing = [c for c in required if c not in self.columns]
        if missing:
            hint = ""
            if len(self.columns) == 1 and any(sep in self.columns[0] for sep in ";\t|"):
                hint = " (the file must be comma-separated)"
            raise ValueError(
                f"{self.path}: missing column(s) {', '.join(missing)}{what}; the header has "
                f"{', '.join(self.columns) or 'nothing'}{hint}"
            )

    def chunks(
        self,
        columns: Sequence[str],
        *,
        text: Sequence[str] = (),
        chunk_rows: int = CHUNK_ROWS,
        max_rows: int | None = None,
    ) -> Iterator[Chunk]:
        """The named columns, ``chunk_rows`` rows at a time (``text`` columns as strings);
        blank lines are skipped, keeping the line numbers; at most ``max_rows`` data rows."""
        pd = _pandas(self.path)
        raw_of = dict(zip(self.columns, self.raw, strict=True))
        wanted = [raw_of[c] for c in columns]
        rename = {raw_of[c]: c for c in columns}
        start = 0
        for frame in self._frames(pd, wanted, [raw_of[c] for c in text], chunk_rows):
            frame = frame.rename(columns=rename)
            n = len(frame)
            if max_rows is not None and start + n > max_rows:
                frame = frame.iloc[: max(0, max_rows - start)]
            blank = frame.isna().all(axis=1).to_numpy() if not self.parquet else None
            rows = np.arange(start, start + len(frame))
            if blank is not None and blank.any():
                frame, rows = frame.loc[~blank], rows[~blank]
            frame = frame.reset_index(drop=True)
            yield Chunk(frame, rows, self.place)
            start += n
            if max_rows is not None and start >= max_rows:
                return

    def place(self, row: int) -> str:
        """``FILE, line N`` (CSV: the header is line 1) or ``FILE, row N`` (Parquet, 1-based)
        of the data row with 0-based index ``row``."""
        if self.parquet:
            return f"{self.path}, row {row + 1}"
        return f"{self.path}, line {row + 2}"

    def _frames(
        self, pd: Any, wanted: list[str], text: list[str], chunk_rows: int
    ) -> Iterator[Any]:
        if self.parquet:
            import pyarrow.parquet as pq

            for batch in pq.ParquetFile(self.path).iter_batches(chunk_rows, columns=wanted):
                yield batch.to_pandas()
            return
        # every column is parsed (only a chunk at a time), so that a row with too many
        # fields is an error naming its line, which pandas skips when given usecols
        reader = pd.read_csv(
            self.path, dtype={c: str for c in text}, chunksize=chunk_rows,
            keep_default_na=False, na_values=[""], skip_blank_lines=False,
            encoding="utf-8-sig", low_memory=False,
        )  # fmt: skip
        try:
            with reader:
                for frame in reader:
                    yield frame[wanted]
        except pd.errors.ParserError as exc:  # e.g. "Expected 5 fields in line 7, saw 6"
            raise ValueError(f"{self.path}: {exc}") from None


def open_table(path: str | os.PathLike[str], what: str = "data") -> TableFile:
    """The header of a CSV or Parquet file (``.parquet``/``.pq``); ``what`` names the file in
    the error when it does not exist (nothing is ever downloaded)."""
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise ValueError(f"no such file {p!r} ({what} are never downloaded)")
    _pandas(p)  # the missing extra is named before anything else
    if _is_parquet(p):
        import pyarrow.parquet as pq

        try:
            names = list(pq.ParquetFile(p).schema_arrow.names)
        except Exception as exc:  # pyarrow's ArrowInvalid: not a Parquet file
            raise ValueError(f"{p}: not a Parquet file ({exc})") from None
    else:  # the header as written (pandas would rename a repeated name)
        with open(p, newline="", encoding="utf-8-sig") as fh:
            names = next(csv.reader(fh), [])
        if not names:
            raise ValueError(f"{p}: empty file")
    return TableFile(p, tuple(n.strip() for n in names), tuple(names))
