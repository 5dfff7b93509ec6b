"""MovieLens ratings from local files: paper 004's features and a fitted ground truth (§4).

Nothing is downloaded: the user points :func:`load_movielens` at the ``ratings.csv``
(``userId,movieId,rating,timestamp``) and ``movies.csv`` (``movieId,title,genres``, genres
separated by ``|``) of a MovieLens release they have (e.g. ml-25m, Harper & Konstan 2015).

Features follow §4.2: an item is the binary vector of its genres among :data:`GENRES`; a user is
``[like; dislike]``, the share of the user's liked (rating ``>= like_threshold``) resp. disliked
movies in each genre (a movie counts once per genre), each half summing to 1 (a user without
liked or disliked movies gets a uniform half). Two ground truths with the ``train`` /
``utility`` interface of :class:`~dpbandits.recommendation.world.LatentWorld`:

- :func:`fit_network_world` -- paper 004's (§4.1): a neural network on (user features, movie
  genres) -> rating, trained on 250,000 ratings drawn from the first 500,000 and the users
  with enough of them, here scikit-learn's ``MLPRegressor`` (the optional ``sklearn``
  extra). The paper follows Dao-V (2024) exactly; this is a plain ReLU
  network of the given widths, Adam, early stopping on a 10 % validation split; it reports
  the paper's two test metrics (share within 0.5 of the rating, RMSE; paper: 61 %, 0.93);
- :func:`fit_world` -- a bilinear model ``u(f, b) = clip(c + w . b + f^T W b, 0, 5)`` by ridge
  least squares on all ratings (no extra needed; smooth in ``f``).
"""

from __future__ import annotations

import csv
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpbandits.core.arrays import FloatArray, IntArray
from dpbandits.core.extras import install_hint

__all__ = [
    "GENRES",
    "FittedWorld",
    "MovieLensData",
    "NetworkWorld",
    "fit_network_world",
    "fit_world",
    "load_movielens",
]

#: The 19 MovieLens genres (``(no genres listed)`` maps to no genre).
GENRES = (
    "Action", "Adventure", "Animation", "Children", "Comedy", "Crime", "Documentary", "Drama",
    "Fantasy", "Film-Noir", "Horror", "IMAX", "Musical", "Mystery", "Romance", "Sci-Fi",
    "Thriller", "War", "Western",
)  # fmt: skip


@dataclass(frozen=True)
class MovieLensData:
    """Users' features, items' genre vectors and the ratings as index triplets."""

    user_ids: IntArray
    features: FloatArray  # (n_users, 2G)
    movie_ids: IntArray
    items: FloatArray  # (n_movies, G)
    user_index: IntArray  # (n_ratings,) rows of features
    movie_index: IntArray  # (n_ratings,) rows of items
    ratings: FloatArray  # (n_ratings,)
    summary: str = ""  # what was read and dropped, one line


def _check_file(path: str | os.PathLike[str], name: str) -> str:
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise ValueError(f"{name}: no such file {p!r} (MovieLens files are never downloaded)")
    return p


def _cell(path: str, line: int, name: str, text: str, kind: type) -> Any:
    """One cell as ``kind`` (int or a finite float); errors name the file, line and column."""
    where = f"{path}, line {line}, column {name!r}"
    t = text.strip()
    if not t:
        raise ValueError(f"{where}: empty cell")
    try:
        value = kind(t)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise ValueError(f"{where}: {text!r} is not {what}") from None
    if kind is float and not np.isfinite(value):
        raise ValueError(f"{where}: {text!r} is not finite")
    return value


def _rows(path: str, expected: tuple[str, ...]) -> Any:
    """``(line, row)`` of a CSV file with the header ``expected`` (blank lines skipped;
    at least as many fields as the header names)."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or [h.strip() for h in header[: len(expected)]] != list(expected):
            raise ValueError(f"{path}: expected a header {','.join(expected)!r}, got {header!r}")
        for row in reader:
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) < len(expected):
                raise ValueError(
                    f"{path}, line {reader.line_num}: {len(row)} fields, the header has "
                    f"{len(expected)} ({','.join(expected)})"
                )
            yield reader.line_num, row


def _read_movies(path: str) -> dict[int, FloatArray]:
    pos = {g: i for i, g in enumerate(GENRES)}
    out: dict[int, FloatArray] = {}
    for line, row in _rows(path, ("movieId", "title", "genres")):
        vec = np.zeros(len(GENRES))
        for g in row[-1].split("|"):
            if g in pos:
                vec[pos[g]] = 1.0
        out[_cell(path, line, "movieId", row[0], int)] = vec
    return out


def _read_ratings(path: str, max_rows: int | None) -> tuple[IntArray, IntArray, FloatArray]:
    users: list[int] = []
    movies: list[int] = []
    ratings: list[float] = []
    for line, row in _rows(path, ("userId", "movieId", "rating")):
        if max_rows is not None and len(ratings) >= max_rows:
            break
        users.append(_cell(path, line, "userId", row[0], int))
        movies.append(_cell(path, line, "movieId", row[1], int))
        r = _cell(path, line, "rating", row[2], float)
        if not 0.0 <= r <= 5.0:
            raise ValueError(f"{path}, line {line}, column 'rating': {r:g} is out of range [0, 5]")
        ratings.append(r)
    if not ratings:
        raise ValueError(f"{path}: no ratings")
    return np.array(users, np.int64), np.array(movies, np.int64), np.array(ratings, np.float64)


def load_movielens(
    ratings_path: str | os.PathLike[str],
    movies_path: str | os.PathLike[str],
    *,
    like_threshold: float = 4.0,
    min_ratings: int = 1,
    max_rows: int | None = None,
) -> MovieLensData:
    """Read local MovieLens CSVs (module docstring); ``max_rows`` reads only the first rows
    (paper 004 trains on ratings among the first 500,000), ``min_ratings`` drops users with
    fewer ratings."""
    rp = _check_file(ratings_path, "ratings_path")
    mp = _check_file(movies_path, "movies_path")
    if isinstance(min_ratings, bool) or not isinstance(min_ratings, int) or min_ratings < 1:
        raise ValueError(f"min_ratings must be an integer >= 1, got {min_ratings!r}")
    if max_rows is not None and (
        isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1
    ):
        raise ValueError(f"max_rows must be None or an integer >= 1, got {max_rows!r}")
    genres = _read_movies(mp)
    u, m, r = _read_ratings(rp, max_rows)
    n_read = r.size
    known = np.isin(m, np.fromiter(genres, dtype=np.int64, count=len(genres)))
    u, m, r = u[known], m[known], r[known]
    user_ids, uidx, counts = np.unique(u, return_inverse=True, return_counts=True)
    keep_user = counts >= min_ratings
    keep = keep_user[uidx]
    u, m, r = u[keep], m[keep], r[keep]
    summary = (
        f"loaded {rp}: {n_read:,} ratings; dropped {int((~known).sum()):,} of movies not in "
        f"{os.path.basename(mp)} and {int((~keep).sum()):,} of the "
        f"{int((~keep_user).sum()):,} users with fewer than {min_ratings} ratings; kept "
        f"{r.size:,} ratings of {int(keep_user.sum()):,} users"
    )
    user_ids, uidx = np.unique(u, return_inverse=True)
    movie_ids, midx = np.unique(m, return_inverse=True)
    items = (
        np.stack([genres[int(i)] for i in movie_ids])
        if movie_ids.size
        else np.zeros((0, len(GENRES)))
    )
    g = len(GENRES)
    like = np.zeros((user_ids.size, g))
    dislike = np.zeros((user_ids.size, g))
    liked = r >= like_threshold
    np.add.at(like, uidx[liked], items[midx[liked]])
    np.add.at(dislike, uidx[~liked], items[midx[~liked]])
    for half in (like, dislike):
        tot = half.sum(axis=1, keepdims=True)
        half[:] = np.where(tot > 0, half / np.where(tot > 0, tot, 1.0), 1.0 / g)
    return MovieLensData(
        user_ids=user_ids.astype(np.int64),
        features=np.concatenate([like, dislike], axis=1),
        movie_ids=movie_ids.astype(np.int64),
        items=items,
        user_index=uidx.astype(np.int64),
        movie_index=midx.astype(np.int64),
        ratings=r,
        summary=summary,
    )


@dataclass(frozen=True)
class FittedWorld:
    """A bilinear rating model fitted to MovieLens; ``train`` are the public users."""

    train: FloatArray
    items: FloatArray
    W: FloatArray  # (2G, G)
    w: FloatArray  # (G,)
    c: float

    def utility(self, f: FloatArray) -> FloatArray:
        fa = np.asarray(f, dtype=np.float64)
        return np.clip(self.c + self.items @ self.w + (fa @ self.W) @ self.items.T, 0.0, 5.0)


def fit_world(
    data: MovieLensData, *, ridge: float = 1.0, train_users: int | None = None, rng: int = 0
) -> FittedWorld:
    """Ridge fit of ``rating ~ c + w . b + f^T W b`` on all ratings (chunked normal equations).

    ``train_users`` (default all) users drawn at random form the public training set.
    """
    if not (isinstance(ridge, (int, float)) and ridge >= 0):
        raise ValueError(f"ridge must be a number >= 0, got {ridge!r}")
    if data.ratings.size == 0:
        raise ValueError("no ratings to fit")
    g = data.items.shape[1]
    d = data.features.shape[1]
    n_par = 1 + g + d * g
    xtx = np.zeros((n_par, n_par))
    xty = np.zeros(n_par)
    for s in range(0, data.ratings.size, 20_000):
        f = data.features[data.user_index[s : s + 20_000]]
        b = data.items[data.movie_index[s : s + 20_000]]
        x = np.concatenate(
            [np.ones((f.shape[0], 1)), b, (f[:, :, None] * b[:, None, :]).reshape(f.shape[0], -1)],
            axis=1,
        )
        xtx += x.T @ x
        xty += x.T @ data.ratings[s : s + 20_000]
    beta = np.asarray(np.linalg.solve(xtx + ridge * np.eye(n_par), xty), dtype=np.float64)
    n = data.features.shape[0]
    if train_users is None or train_users >= n:
        train = data.features
    else:
        pick = np.random.default_rng(rng).choice(n, size=int(train_users), replace=False)
        train = data.features[np.sort(pick)]
    return FittedWorld(
        train=train,
        items=data.items,
        W=beta[1 + g :].reshape(d, g),
        w=beta[1 : 1 + g],
        c=float(beta[0]),
    )


@dataclass(frozen=True)
class NetworkWorld:
    """A network's ratings of every movie (:func:`fit_network_world`); ``train`` are the public
    users. The network sees genres only, so it is evaluated once per distinct genre vector."""

    train: FloatArray
    items: FloatArray
    model: Any
    metrics: dict[str, float] = field(default_factory=dict)

    def utility(self, f: FloatArray) -> FloatArray:
        fa = np.asarray(f, dtype=np.float64)
        flat = fa.reshape(-1, fa.shape[-1])
        combos, of_item = np.unique(self.items, axis=0, return_inverse=True)
        n, u = flat.shape[0], combos.shape[0]
        x = np.concatenate([np.repeat(flat, u, axis=0), np.tile(combos, (n, 1))], axis=1)
        pred = np.clip(np.asarray(self.model.predict(x), dtype=np.float64), 0.0, 5.0)
        return pred.reshape(n, u)[:, of_item.reshape(-1)].reshape(fa.shape[:-1] + (-1,))


def fit_network_world(
    data: MovieLensData,
    *,
    hidden: tuple[int, ...] = (64, 32),
    n_ratings: int = 250_000,
    min_user_ratings: int = 20,
    max_iter: int = 200,
    train_users: int | None = None,
    rng: int = 0,
) -> NetworkWorld:
    """Paper 004's ground truth (§4.1) as a scikit-learn ``MLPRegressor`` (module docstring).

    ``data`` should hold the first 500,000 ratings (``load_movielens(..., max_rows=500_000)``);
    ``n_ratings`` of them are drawn at random, the users with at least ``min_user_ratings`` of
    those are kept (the paper ends with 3402 users), and 10 % of these ratings are held out
    for the test metrics ``within_0.5`` and ``rmse`` (``NetworkWorld.metrics``). The public
    training users are those users (``train_users`` caps their number).
    """
    try:
        from sklearn.neural_network import MLPRegressor
    except ImportError as exc:
        raise ImportError(
            f"the MovieLens network needs scikit-learn: {install_hint('sklearn')}"
        ) from exc
    if data.ratings.size < 10:
        raise ValueError(f"need at least 10 ratings, got {data.ratings.size}")
    for name, v in (("n_ratings", n_ratings), ("min_user_ratings", min_user_ratings)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if not hidden or any(int(h) < 1 for h in hidden):
        raise ValueError(f"hidden must be layer widths >= 1, got {hidden!r}")
    gen = np.random.default_rng(rng)
    pick = gen.choice(data.ratings.size, size=min(n_ratings, data.ratings.size), replace=False)
    users, counts = np.unique(data.user_index[pick], return_counts=True)
    keep_users = users[counts >= min_user_ratings]
    if keep_users.size == 0:
        raise ValueError(f"no user has {min_user_ratings} of the {pick.size} ratings drawn")
    pick = pick[np.isin(data.user_index[pick], keep_users)]
    x = np.concatenate(
        [data.features[data.user_index[pick]], data.items[data.movie_index[pick]]], axis=1
    )
    y = data.ratings[pick]
    test = gen.random(pick.size) < 0.1
    model = MLPRegressor(
        hidden_layer_sizes=tuple(int(h) for h in hidden),
        early_stopping=True,
        max_iter=int(max_iter),
        random_state=int(gen.integers(2**31 - 1)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter: the model is usable
        model.fit(x[~test], y[~test])
    metrics: dict[str, float] = {"ratings": float(pick.size), "users": float(keep_users.size)}
    if test.any():
        err = np.clip(model.predict(x[test]), 0.0, 5.0) - y[test]
        metrics["within_0.5"] = float(np.mean(np.abs(err) <= 0.5))
        metrics["rmse"] = float(np.sqrt(np.mean(err**2)))
    train = data.features[keep_users]
    if train_users is not None and train_users < train.shape[0]:
        train = train[np.sort(gen.choice(train.shape[0], size=int(train_users), replace=False))]
    return NetworkWorld(train=train, items=data.items, model=model, metrics=metrics)
