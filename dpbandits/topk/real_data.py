"""Paper 002's real-data experiments: the user's data sets, Table 1, stand-ins, Figs. 6-7.

- :func:`load_csv` -- a user's data set (numeric columns, one of them the target) and
  :func:`load_microarray` -- one of §5's microarray sets in a documented CSV layout (class
  labels allowed; genes in columns or in rows), for the real-data experiments (Table 1,
  Figs. 2-4, 6-8), whose data we do not ship;
- :func:`microarray_standin` -- a synthetic stand-in with the (n, d, R^2) of a Table 1 data set
  (:data:`TABLE1`), and :func:`table1` -- Table 1's columns for any data sets;
- :func:`accuracy_differences` -- Figs. 6-7: DP-SIS minus two-stage accuracy per data set and
  eps, with its standard error.

Real data are centred and scaled to infinity-norm 1; the truth is
:func:`dpbandits.topk.feature_selection.lasso_ranking` at ``lambda = 0.1`` (extended down the
LASSO path when ``lambda`` keeps fewer than k features, and reported); R^2 is the in-sample R^2
of that LASSO. The accuracy curves themselves are
:func:`dpbandits.topk.experiments.accuracy_curves`.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
from numpy.typing import NDArray

from dpbandits.topk import feature_selection as fs
from dpbandits.topk.experiments import Dataset, resolve_k

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "TABLE1",
    "TruthOptions",
    "accuracy_differences",
    "load_csv",
    "load_microarray",
    "microarray_standin",
    "paper_dataset",
    "standin",
    "table1",
]

#: Table 1 of paper 002: data set -> (n, p, R^2 of the non-private LASSO at lambda = 0.1).
TABLE1: dict[str, tuple[int, int, float]] = {
    "alon": (62, 2000, 0.4822),
    "borovecki": (31, 22283, 0.9011),
    "burczynski": (127, 22283, 0.2175),
    "chiaretti": (128, 12625, 0.2705),
    "chin": (118, 22215, 0.5879),
    "chowdary": (104, 22283, 0.8338),
    "christensen": (217, 1413, 0.7870),
    "golub": (72, 7129, 0.6819),
    "gordon": (181, 12533, 0.2432),
    "gravier": (168, 2905, 0.0689),
    "khan": (63, 2308, 0.6961),
    "shipp": (77, 7129, 0.4204),
    "singh": (102, 12600, 0.6449),
    "sorlie": (85, 457, 0.9300),
    "su": (102, 5564, 0.9602),
    "subramanian": (50, 10100, 0.5340),
    "tian": (173, 12625, 0.0080),
    "west": (49, 7129, 0.7044),
    "yeoh": (248, 12625, 0.4611),
}


#: The k (or ks: ints or "log") the LASSO truth of a real data set must cover.
TruthK = int | str | Sequence[int | str] | None


class TruthOptions(TypedDict, total=False):
    """How the reference ranking of a loaded data set is made (paper 002 §5), the keywords
    :func:`load_csv` and :func:`load_microarray` pass on unchanged (defaults in brackets):

    - ``truth_k`` (``None``): the k, or ks (ints or ``"log"``), the LASSO ranking must cover;
      ``None``: ``max(8, floor(log d))``, enough for the paper's k in {5, 8, floor(log d)},
      kept shorter when the LASSO path has fewer features;
    - ``lam`` (0.1) and ``convention`` (``"mean"``): the LASSO penalty
      (:func:`~dpbandits.topk.feature_selection.lasso_alpha`).
    """

    truth_k: TruthK
    lam: float
    convention: str


def _check_truth_options(options: Mapping[str, Any]) -> None:
    """No key of ``options`` is foreign to :class:`TruthOptions` (checked before the file is
    read, naming the misspelt keyword)."""
    unknown = sorted(set(options) - set(TruthOptions.__annotations__))
    if unknown:
        raise TypeError(
            f"unexpected keyword argument {unknown[0]!r}; the truth options are "
            f"{list(TruthOptions.__annotations__)}"
        )


#: Cells read as missing values (rejected with their position).
_MISSING = frozenset({"", "na", "nan", "null", "none", "?"})


def _read_table(path: str) -> tuple[list[str], list[list[str]], list[int]]:
    """Header, data rows and their line numbers in a CSV file (blank lines skipped; field
    counts checked)."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        raise ValueError(f"--data: no such file {path!r}")
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise ValueError(f"{path}: empty file") from None
        rows, lines = [], []
        for row in reader:
            line = reader.line_num  # the line the record ends on (quoted newlines counted)
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise ValueError(
                    f"{path}: line {line}: {len(row)} fields, the header has {len(header)}"
                )
            rows.append(row)
            lines.append(line)
    if len(rows) < 2:
        raise ValueError(f"{path}: need at least 2 data rows, got {len(rows)}")
    return header, rows, lines


def _numbers(path: str, cells: list[list[str]], names: Sequence[str], rows: Sequence[str]) -> Any:
    """A float matrix from text cells; the first bad cell is named by its row and column."""
    try:
        out = np.array(cells, dtype=np.float64)
    except ValueError:
        for i, row in enumerate(cells):
            for j, c in enumerate(row):
                if not _is_float(c):
                    what = "missing" if c.strip().lower() in _MISSING else "not a number"
                    raise ValueError(f"{path}: {rows[i]}, {names[j]} is {what}: {c!r}") from None
        raise
    if not np.all(np.isfinite(out)):
        i, j = (int(v) for v in np.argwhere(~np.isfinite(out))[0])
        raise ValueError(f"{path}: {rows[i]}, {names[j]} is not finite")
    return out


def _encode_labels(
    path: str, labels: Sequence[str], where: Sequence[str], target: str
) -> tuple[NDArray[np.float64], list[str]]:
    """Numeric labels as they are; text labels coded 0..C-1 in sorted order (R's factor
    levels); the classes in code order (empty for numeric labels). ``where[i]`` names the
    place of label ``i`` in the file (a line, or a sample's column)."""
    stripped = [c.strip() for c in labels]
    missing = [i for i, c in enumerate(stripped) if c.lower() in _MISSING]
    if missing:
        i = missing[0]
        raise ValueError(
            f"{path}: {where[i]} {target!r}: the label of sample {i + 1} is missing: {labels[i]!r}"
        )
    if all(_is_float(c) for c in stripped):
        return np.array(stripped, dtype=np.float64), []
    classes = sorted(set(stripped))
    code = {c: i for i, c in enumerate(classes)}
    return np.array([code[c] for c in stripped], dtype=np.float64), classes


def _real_dataset(
    name: str,
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    features: tuple[str, ...],
    *,
    lam: float = 0.1,
    convention: str = "mean",
    truth_k: TruthK = None,
    support: NDArray[np.int64] | None = None,
    paper: str | None = None,
) -> Dataset:
    """Centre and scale (not private, as paper 002 does); the LASSO truth and Table 1's R^2."""
    if np.ptp(y) == 0:
        raise ValueError(f"{name}: the target is constant")
    Xs, ys = fs.preprocess(X, y)
    d = Xs.shape[1]
    if truth_k is None:
        kk = min(max(8, resolve_k("log", d)), d)
    else:
        specs = [truth_k] if isinstance(truth_k, (int, str, np.integer)) else list(truth_k)
        kk = max(resolve_k(k, d) for k in specs)
    # the default length is a convenience: a shorter ranking is kept (accuracy_curves names
    # the k it cannot serve); an explicit truth_k must be met
    ranking = fs.lasso_ranking(Xs, ys, kk, lam, convention, strict=truth_k is not None)
    return Dataset(
        name=name,
        X=Xs,
        y=ys,
        truth=ranking.features,
        feature_names=features,
        r2=fs.lasso_r2(Xs, ys, lam, convention),
        n_nonzero=ranking.n_nonzero,
        lam=float(lam),
        truth_lambda=ranking.lam_used,
        convention=convention,
        support=support,
        paper=paper_dataset(paper),
    )


def paper_dataset(name: str | None) -> str | None:
    """The key of :data:`TABLE1` for ``name`` (case and spaces ignored); None stays None."""
    if name is None:
        return None
    key = str(name).strip().lower()
    if key not in TABLE1:
        raise ValueError(f"unknown Table 1 data set {name!r}; Table 1 has {', '.join(TABLE1)}")
    return key


def load_csv(
    path: str,
    target: str,
    *,
    name: str | None = None,
    paper_dataset: str | None = None,
    **truth: Unpack[TruthOptions],
) -> Dataset:
    """Load a numeric CSV (header row; one column is ``target``) for the real-data experiments.

    The data are centred and scaled to infinity-norm 1 (:func:`dpbandits.topk.feature_selection.
    preprocess`, not private, as paper 002 does). The reference ranking is the non-private
    LASSO's at ``lam`` (:func:`~dpbandits.topk.feature_selection.lasso_ranking`, paper 002's
    proxy for the true top-k, §5), long enough for the largest of ``truth_k``
    (:class:`TruthOptions`); R^2 (Table 1) is recorded. Text labels in ``target`` are coded as
    in :func:`load_microarray`. ``paper_dataset`` names the Table 1 data set the file holds
    (its published R^2 is then shown beside ours; the file's name is never guessed from).
    Needs scikit-learn.
    """
    _check_truth_options(truth)
    header, rows, line_numbers = _read_table(path)
    X, labels, label_at, features = _samples_layout(path, header, rows, line_numbers, target)
    y, _ = _encode_labels(path, labels, label_at, target)
    ds_name = name or os.path.splitext(os.path.basename(path))[0]
    return _real_dataset(ds_name, X, y, tuple(features), paper=paper_dataset, **truth)


def _samples_layout(
    path: str,
    header: list[str],
    rows: list[list[str]],
    line_numbers: list[int],
    target: str,
    skip: frozenset[int] = frozenset(),
) -> tuple[NDArray[np.float64], list[str], list[str], list[str]]:
    """One sample per row, column ``target`` its label: ``(X, labels, where each label is,
    feature names)``; the columns in ``skip`` are neither label nor feature (row names)."""
    if target not in header:
        raise ValueError(f"{path}: no column {target!r}; columns: {', '.join(header[:20])}")
    t = header.index(target)
    cols = [j for j in range(len(header)) if j != t and j not in skip]
    features = [header[j] for j in cols]
    where = [f"line {n}" for n in line_numbers]
    X = _numbers(
        path, [[r[j] for j in cols] for r in rows], [f"column {f!r}" for f in features], where
    )
    return X, [r[t] for r in rows], [f"{w}, column" for w in where], features


def load_microarray(
    path: str,
    target: str = "y",
    *,
    layout: str = "samples",
    name: str | None = None,
    paper_dataset: str | None = None,
    **truth: Unpack[TruthOptions],
) -> Dataset:
    """Load one of paper 002's microarray data sets (§5, Table 1) from a CSV file.

    Layouts (docs/topk.md, "Real data"):

    - ``"samples"`` (default): a header row, then one row per sample. Column ``target`` holds
      the class label; every other column is one gene's expression. A first column with an
      empty header (the row names R's ``write.csv`` writes) holds sample ids and is skipped,
      e.g. ``write.csv(data.frame(alon$x, y = alon$y), "alon.csv")`` from the
      ``datamicroarray`` R package.
    - ``"genes"``: the transpose, as expression matrices are often stored -- a header row
      (first cell: anything, then the sample names), one row per gene (first cell the gene id)
      and one row whose first cell is ``target`` holding the labels.

    Labels may be numbers or text; text labels are coded 0, 1, ..., C-1 in sorted order (the
    order of R's factor levels) and the codes are the regression target, as Table 1's LASSO
    regressions need a numeric target. Missing values are rejected with their position.
    The rest is :func:`load_csv` (preprocessing, LASSO truth (:class:`TruthOptions`), R^2,
    ``paper_dataset``).
    """
    if layout not in ("samples", "genes"):
        raise ValueError(f"layout must be 'samples' or 'genes', got {layout!r}")
    _check_truth_options(truth)
    header, rows, line_numbers = _read_table(path)
    ds_name = name or os.path.splitext(os.path.basename(path))[0]
    if layout == "samples":
        row_names = frozenset({0} if header[0] == "" else ())  # R's write.csv row names
        X, labels, label_at, genes = _samples_layout(
            path, header, rows, line_numbers, target, row_names
        )
    else:
        first = [r[0].strip() for r in rows]
        if target not in first:
            raise ValueError(
                f"{path}: no row {target!r} (layout 'genes': the labels are the row whose "
                f"first cell is {target!r})"
            )
        t = first.index(target)
        labels = rows[t][1:]
        gene_rows = [r for i, r in enumerate(rows) if i != t]
        gene_lines = [n for i, n in enumerate(line_numbers) if i != t]
        genes = [r[0].strip() for r in gene_rows]
        samples = header[1:]
        label_at = [f"line {line_numbers[t]}, sample {c!r} of the row" for c in samples]
        X = _numbers(
            path,
            [list(col) for col in zip(*(r[1:] for r in gene_rows), strict=True)],
            [f"line {n} (gene {g!r})" for g, n in zip(genes, gene_lines, strict=True)],
            [f"sample {s!r}" for s in samples],
        )
    y, _ = _encode_labels(path, labels, label_at, target)
    return _real_dataset(ds_name, X, y, tuple(genes), paper=paper_dataset, **truth)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _standin_data(
    n: int, d: int, n_informative: int, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Noise, labels (+-1, balanced), class directions and the informative genes."""
    noise = rng.standard_normal((n, d))
    labels = np.where(rng.permutation(n) < n // 2, -1.0, 1.0)
    support = np.sort(rng.choice(d, size=n_informative, replace=False)).astype(np.int64)
    signs = np.where(rng.random(n_informative) < 0.5, -1.0, 1.0)
    return noise, labels, signs, support


def microarray_standin(
    spec: str | tuple[int, int, float],
    rng: np.random.Generator | int | None = None,
    *,
    n_informative: int = 20,
    lam: float = 0.1,
    convention: str = "mean",
    truth_k: TruthK = None,
    tol: float = 0.01,
) -> Dataset:
    """A synthetic stand-in with the shape (n, d) and Table 1 R^2 of a microarray data set.

    ``spec`` is a name of :data:`TABLE1` or ``(n, d, r2)``. Model: two balanced classes
    ``c = +-1``; ``n_informative`` genes are ``mu c s_j + N(0, 1)`` (random signs ``s_j``), the
    others ``N(0, 1)`` -- the class-conditional Gaussian model of microarray simulations. The
    target is the class label, as in Table 1. ``mu`` is found by bisection (common random
    numbers) so that the in-sample R^2 of the LASSO at ``lam`` on the preprocessed data is
    within ``tol`` of ``r2``; when even ``mu = 0`` (labels independent of the genes) gives
    more, ``mu = 0`` is used and the achieved R^2 (``Dataset.r2``) says so. The truth is the
    LASSO's ranking, as for real data; ``Dataset.support`` holds the informative genes.
    """
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key not in TABLE1:
            raise ValueError(f"unknown Table 1 data set {spec!r}; known: {', '.join(TABLE1)}")
        n, d, r2 = TABLE1[key]
        ds_name = f"{key} (stand-in)"
    else:
        try:
            n, d, r2 = (int(spec[0]), int(spec[1]), float(spec[2]))
        except (TypeError, ValueError, IndexError):
            raise ValueError(f"spec must be a Table 1 name or (n, d, r2), got {spec!r}") from None
        ds_name = f"stand-in ({n}, {d}, {r2:g})"
    if n < 4 or d < 2 or not (0.0 <= r2 < 1.0):
        raise ValueError(f"need n >= 4, d >= 2 and 0 <= r2 < 1, got {(n, d, r2)}")
    m = min(int(n_informative), d)
    if m < 1:
        raise ValueError(f"n_informative must be >= 1, got {n_informative!r}")
    gen = np.random.default_rng(rng)
    noise, c, signs, support = _standin_data(n, d, m, gen)

    def design(mu: float) -> NDArray[np.float64]:
        X = noise.copy()
        X[:, support] += mu * c[:, None] * signs[None, :]
        return X

    def r2_at(mu: float) -> float:
        Xs, ys = fs.preprocess(design(mu), c)
        return fs.lasso_r2(Xs, ys, lam, convention)

    lo, hi = 0.0, 1.0
    if r2_at(0.0) < r2:
        while r2_at(hi) < r2:
            lo, hi = hi, 2.0 * hi
            if hi > 1e3:
                raise ValueError(f"R^2 = {r2} is out of reach for {(n, d)} at lambda = {lam}")
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            got = r2_at(mid)
            if abs(got - r2) <= tol:
                lo = hi = mid
                break
            lo, hi = (mid, hi) if got < r2 else (lo, mid)
        mu = 0.5 * (lo + hi)
    else:
        mu = 0.0
    return _real_dataset(
        ds_name,
        design(mu),
        c,
        tuple(f"g{j}" for j in range(d)),
        lam=lam,
        convention=convention,
        truth_k=truth_k,
        support=support,
        paper=key if isinstance(spec, str) else None,
    )


def standin(name: str, seed: int, **kwargs: Any) -> Dataset:
    """The stand-in of Table 1's data set ``name`` for ``seed``: keyed by the name (its row of
    :data:`TABLE1`), so one name and seed give the same data in every command and call,
    whatever else is asked for. ``kwargs`` go to :func:`microarray_standin`."""
    key = paper_dataset(name)
    assert key is not None
    return microarray_standin(key, np.random.default_rng([seed, 2, list(TABLE1).index(key)]),
                              **kwargs)  # fmt: skip


def table1(datasets: Iterable[Dataset]) -> list[dict[str, Any]]:
    """Table 1's columns for each data set: n, p, R^2 (ours) beside the paper's when the data
    set names its Table 1 row (``Dataset.paper``), with the LASSO's nonzero count and the
    truth's penalty. When the penalty keeps fewer features than the truth needs (a user's
    sparse or weak data: R^2 can be 0 there), ``r2_truth`` is the R^2 of the LASSO at the
    truth's penalty ``truth_lambda``, down the path; else it equals ``r2``."""
    out = []
    for ds in datasets:
        paper = TABLE1.get(ds.paper) if ds.paper else None
        r2_truth = ds.r2
        if ds.truth_lambda < ds.lam:
            r2_truth = fs.lasso_r2(ds.X, ds.y, ds.truth_lambda, ds.convention)
        out.append(
            {
                "dataset": ds.name,
                "paper_dataset": ds.paper or "",
                "n": int(ds.X.shape[0]),
                "p": int(ds.X.shape[1]),
                "r2": ds.r2,
                "r2_paper": paper[2] if paper else math.nan,
                "n_nonzero": ds.n_nonzero,
                "lambda": ds.lam,
                "truth_lambda": ds.truth_lambda,
                "r2_truth": r2_truth,
                "convention": ds.convention,
            }
        )
    return out


def accuracy_differences(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Figs. 6-7: DP-SIS minus private two-stage top-k accuracy per (data set, k, eps, mechanism).

    ``z`` is the difference over its standard error (the two arms are independent); the paper
    calls a difference significant without saying how; ``significant`` here is ``|z| > 2``.
    """
    keyed: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
    for r in records:
        if math.isinf(r["epsilon"]):
            continue
        key = (r["dataset"], int(r["k"]), float(r["epsilon"]), r["mechanism"])
        keyed.setdefault(key, {})[r["method"]] = r
    out = []
    for (ds, k, e, mech), arms in keyed.items():
        if "DP-SIS" not in arms or "two-stage (private)" not in arms:
            continue
        a, b = arms["DP-SIS"], arms["two-stage (private)"]
        diff = float(a["accuracy"] - b["accuracy"])
        se = math.hypot(a["accuracy_se"], b["accuracy_se"])
        z = diff / se if se > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
        out.append(
            {
                "dataset": ds,
                "k": k,
                "epsilon": e,
                "mechanism": mech,
                "difference": diff,
                "se": se,
                "z": z,
                "significant": bool(abs(z) > 2),
            }
        )
    return out
