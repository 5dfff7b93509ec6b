"""Loading the Taobao log (paper 001, App. E.1): the chunked pandas reader against the previous
csv-module reader, on synthetic files in the published format (nothing is downloaded).

A synthetic log with the published headers and the real log's proportions (one user per ~23
impressions, one ad per ~31, 1-6 ads per (user, time stamp), 8 days, ~5 % clicks) is written to
a temporary directory. Printed, from one run (so that the load of the machine cancels):

1. at ``--rows`` (default 200 000) impressions: seconds of the previous loader (the
   csv-module reader with per-row look-ups, read from the repository's history at commit
   ``BEFORE`` with ``git show``; run this in a clone) and of ``load_taobao``, their ratio,
   and a check that both give the same auctions (same pClicks to 1e-12, same clicks, bids);
2. ``load_taobao`` alone at ``--scale`` sizes (default 1 000 000 and 4 000 000 impressions; each
   in a fresh process): seconds, peak resident memory, and both extrapolated linearly to the
   full log's 26 million impressions -- or measured, with ``--scale 26000000`` (the CSV is
   about 1 GB; writing it takes a few minutes).

Run:  python benchmarks/bench_taobao.py [--rows 200000] [--scale 1000000,4000000]
(``--rows 0`` skips the comparison; ``--scale 26557961`` measures the full log's size.)
Timings on a shared machine are noisy; the ratio in (1) is measured in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

FULL_LOG = 26_557_961  # impressions in raw_sample.csv of Tianchi data set 56
#: The last commit with the previous loader.
BEFORE = "0f0ce65"


def previous_loader():
    """``load_taobao`` as it was at ``BEFORE`` (None, with a note, outside a git clone)."""
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        text = subprocess.run(
            ["git", "show", f"{BEFORE}:dpbandits/recommendation/taobao.py"], cwd=here,
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"  (no previous loader to compare with: {exc}; run in a git clone)")
        return None
    path = os.path.join(tempfile.mkdtemp(), "taobao_before.py")
    with open(path, "w") as fh:
        fh.write(text)
    spec = importlib.util.spec_from_file_location("taobao_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["taobao_before"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.load_taobao


def write_log(directory: str, n_rows: int, seed: int = 0) -> None:
    """The three files in the published format, with ~``n_rows`` impressions."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_users, n_ads = max(50, n_rows // 23), max(40, n_rows // 31)
    cate = rng.integers(1, 1 + max(5, n_ads // 130), n_ads)
    price = np.round(rng.lognormal(4, 1.2, n_ads), 2)
    ads = pd.DataFrame({
        "adgroup_id": np.arange(1, n_ads + 1), "cate_id": cate,
        "campaign_id": rng.integers(1, 400_000, n_ads),
        "customer": rng.integers(1, 250_000, n_ads),
        "brand": np.where(
            rng.random(n_ads) < 0.3, "NULL", rng.integers(1, 460_000, n_ads).astype(str)
        ),
        "price": price,
    })  # fmt: skip
    ads.to_csv(os.path.join(directory, "ad_feature.csv"), index=False)
    prof = pd.DataFrame({"userid": np.arange(1, n_users + 1)})
    for c, hi in (("cms_segid", 97), ("cms_group_id", 13), ("final_gender_code", 3),
                  ("age_level", 7), ("pvalue_level", 4), ("shopping_level", 4),
                  ("occupation", 2), ("new_user_class_level", 5)):  # fmt: skip
        v = rng.integers(0 if c in ("cms_segid", "occupation") else 1, hi, n_users).astype(str)
        if c in ("pvalue_level", "new_user_class_level"):
            v = np.where(rng.random(n_users) < 0.3, "", v)
        prof[c] = v
    prof = prof.iloc[: int(0.9 * n_users)]  # some users have no profile, as in the real log
    path = os.path.join(directory, "user_profile.csv")
    prof.to_csv(path, index=False, header=[*prof.columns[:-1], "new_user_class_level "])
    groups = n_rows // 3 + 1
    size = rng.integers(1, 6, groups)
    user = np.repeat(rng.integers(1, n_users + 1, groups), size)[:n_rows]
    stamp = np.repeat(1494000000 + rng.integers(0, 8 * 86400, groups), size)[:n_rows]
    ad = rng.integers(1, n_ads + 1, user.size)
    clk = (rng.random(user.size) < 0.05).astype(np.int64)
    raw = pd.DataFrame({"user": user, "time_stamp": stamp, "adgroup_id": ad,
                        "pid": "430548_1007", "nonclk": 1 - clk, "clk": clk})  # fmt: skip
    raw.to_csv(os.path.join(directory, "raw_sample.csv"), index=False, chunksize=1_000_000)


def _timed(loader, directory: str) -> tuple[float, object]:
    t = time.perf_counter()
    out = loader(directory)
    return time.perf_counter() - t, out


def _cpu_timed(loader, directory: str) -> tuple[float, float, object]:
    """Wall and CPU seconds (CPU time is less disturbed by other jobs on the machine)."""
    c = time.process_time()
    wall, out = _timed(loader, directory)
    return wall, time.process_time() - c, out


def compare(n_rows: int) -> None:
    from dpbandits.recommendation.taobao import load_taobao

    before = previous_loader()
    if before is None:
        return
    with tempfile.TemporaryDirectory() as d:
        write_log(d, n_rows)
        import pandas  # noqa: F401  (its import is not part of the comparison)

        t_old, c_old, a = _cpu_timed(before, d)
        t_new, c_new, b = _cpu_timed(load_taobao, d)
    same = (
        a.n == b.n
        and np.array_equal(a.eligible, b.eligible)
        and np.array_equal(a.click, b.click)
        and np.array_equal(a.bid, b.bid)
        and np.allclose(a.pclick_server, b.pclick_server, rtol=0, atol=1e-12)
        and np.allclose(a.pclick_device, b.pclick_device, rtol=0, atol=1e-12)
        and list(a.auction_id) == list(b.auction_id)
    )
    print(f"{n_rows:,} impressions ({b.n:,} test auctions):")
    print(f"  previous loader {t_old:7.2f} s wall, {c_old:7.2f} s CPU")
    print(f"  load_taobao     {t_new:7.2f} s wall, {c_new:7.2f} s CPU")
    print(f"  -> {t_old / t_new:.1f}x faster in wall time, {c_old / c_new:.1f}x in CPU time")
    print(f"  same auctions (ids, bids, clicks, pClicks to 1e-12): {same}")


def _hwm_mb() -> float:
    """This process image's peak resident memory (VmHWM; Linux), in MB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _child(directory: str) -> None:
    """Load one log in this fresh process; report wall and CPU seconds and the peak resident
    memory before and after loading, as JSON."""
    from dpbandits.recommendation.taobao import load_taobao

    base = _hwm_mb()
    cpu = time.process_time()
    t, a = _timed(load_taobao, directory)
    print(json.dumps({"seconds": t, "cpu": time.process_time() - cpu, "peak_mb": _hwm_mb(),
                      "before_mb": base, "auctions": a.n}))  # fmt: skip


def scale(sizes: list[int]) -> None:
    print("load_taobao alone (each size loaded in a fresh process; wall and CPU time, peak")
    print("resident memory; on a busy machine the CPU time is the one to extrapolate):")
    points = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as d:
            write_log(d, n)
            size = os.path.getsize(os.path.join(d, "raw_sample.csv")) / 2**20
            out = subprocess.run(
                [sys.executable, __file__, "--child", d], capture_output=True, text=True,
                check=True,
            )  # fmt: skip
        r = json.loads(out.stdout.strip().splitlines()[-1])
        grew = r["peak_mb"] - r["before_mb"]
        print(f"  {n:>11,} impressions ({size:.0f} MB CSV): {r['seconds']:6.1f} s wall, "
              f"{r['cpu']:6.1f} s CPU; peak {r['peak_mb']:.0f} MB ({grew:.0f} MB above the "
              f"{r['before_mb']:.0f} MB after imports)")  # fmt: skip
        points.append((n, r["seconds"], r["cpu"], grew))
    if points[-1][0] >= FULL_LOG:
        return
    if len(points) >= 2:  # fixed cost + cost per impression, from the two largest sizes
        (n0, w0, c0, m0), (n1, w1, c1, m1) = points[-2:]
        slope = [(b - a) / (n1 - n0) for a, b in ((w0, w1), (c0, c1), (m0, m1))]
        last = (w1, c1, m1)
        wall, cpu, mem = (b + s_ * (FULL_LOG - n1) for b, s_ in zip(last, slope, strict=True))
        print(f"  per impression: {slope[1] * 1e6:.2f} s CPU per million, "
              f"{slope[2] * 2**20:.0f} bytes of memory")  # fmt: skip
    else:
        f = FULL_LOG / points[-1][0]
        wall, cpu, mem = (v * f for v in points[-1][1:])
    print(f"  extrapolated to the full log ({FULL_LOG:,} impressions): {cpu / 60:.1f} min "
          f"of CPU ({wall / 60:.1f} min wall at this load), {mem / 1024:.1f} GB above the "
          "imports")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--scale", default="1000000,4000000")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        _child(args.child)
        return
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (timings are noisy)")
    if args.rows > 0:
        compare(args.rows)
    if args.scale:
        scale([int(v) for v in args.scale.split(",")])


if __name__ == "__main__":
    main()
