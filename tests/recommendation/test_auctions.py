"""Second-price auctions, revenue, surplus and CTR of paper 001 (§4.1, App. A, RQ1, Figs. 2-8),
the per-auction loader and the Taobao loader (App. E.1)."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from dpbandits.cli import main
from dpbandits.recommendation import auctions as au
from dpbandits.recommendation import taobao
from dpbandits.recommendation.auction_files import load_auctions


def _loop_prices(bid, pclick, present, reserve, payment):
    """An independent, one-auction-at-a-time reading of App. A's second price."""
    out = np.zeros_like(bid)
    for i in range(bid.shape[0]):
        cand = [j for j in range(bid.shape[1]) if present[i, j] and bid[i, j] >= reserve[i]]
        ranked = sorted(cand, key=lambda j: (-bid[i, j] * pclick[i, j], j))
        for r, j in enumerate(ranked):
            if r + 1 < len(ranked):
                nxt = ranked[r + 1]
                imp = bid[i, nxt] * pclick[i, nxt]
                out[i, j] = imp if payment == "impression" else imp / pclick[i, j]
            else:
                out[i, j] = reserve[i] * (pclick[i, j] if payment == "impression" else 1.0)
    return out


def test_second_prices_by_hand():
    bid = np.array([[2.0, 1.0, 4.0, 3.0]])
    pc = np.array([[0.1, 0.4, 0.05, 0.1]])  # scores 0.2, 0.4, 0.2, 0.3: ranks 2/3 tie by column
    el = np.ones((1, 4), dtype=bool)
    imp = au.second_prices(bid * pc, pc, el, [0.5])
    np.testing.assert_allclose(imp, [[0.2, 0.3, 0.5 * 0.05, 0.2]])
    clk = au.second_prices(bid * pc, pc, el, [0.5], "click")
    np.testing.assert_allclose(clk, [[0.2 / 0.1, 0.3 / 0.4, 0.5, 0.2 / 0.1]])


@pytest.mark.parametrize("payment", ["impression", "click"])
def test_prices_and_metrics_match_a_loop_implementation(payment):
    rng = np.random.default_rng(0)
    r, k = 300, 6
    bid = rng.lognormal(0, 1, (r, k))
    ps, pd = rng.uniform(0.01, 0.3, (r, k)), rng.uniform(0.01, 0.3, (r, k))
    present = rng.random((r, k)) < 0.8
    present[:, 0] = True
    bid[:, 0] = np.maximum(bid[:, 0], 0.6)
    reserve = np.full(r, 0.5)
    a = au.make_auctions(bid, ps, pd, reserve=reserve, present=present)
    assert a.n == r
    el = present & (bid >= 0.5)
    np.testing.assert_array_equal(a.eligible, el)
    for pricing, pclick in (("server", ps), ("device", pd)):
        got = au.auction_prices(a, pricing, payment)
        np.testing.assert_allclose(got, _loop_prices(bid, pclick, present, reserve, payment))
    chosen = np.array([int(np.flatnonzero(el[i])[-1]) for i in range(r)])
    prices = au.auction_prices(a, "server", payment)
    m = au.auction_metrics(a, chosen, prices, payment=payment)
    rows = np.arange(r)
    c = pd[rows, chosen]
    p = prices[rows, chosen] * (c if payment == "click" else 1.0)
    assert m["ctr"] == pytest.approx(c.mean())
    assert m["revenue"] == pytest.approx(p.mean())
    assert m["surplus"] == pytest.approx((bid[rows, chosen] * c - p).mean())
    with pytest.raises(ValueError, match="not eligible"):
        au.auction_metrics(a, np.full(r, k - 1), prices)


def test_make_auctions_validates():
    with pytest.raises(ValueError, match=r"pclick_server\[0, 1\]"):
        au.make_auctions([[1.0, 1.0]], [[0.1, 1.5]], [[0.1, 0.1]])
    with pytest.raises(ValueError, match="shape"):
        au.make_auctions([[1.0, 1.0]], [[0.1]], [[0.1, 0.1]])
    # an auction whose every ad bids below the reserve is dropped
    a = au.make_auctions([[1.0], [3.0]], [[0.1], [0.1]], [[0.1], [0.1]], reserve=2.0)
    assert a.n == 1 and a.bid[0, 0] == 3.0


def test_full_information_second_price_never_overcharges():
    """Greedy on s_device priced with the device ranking: each winner pays at most its value
    (second-price auctions are individually rational), so surplus >= 0 per auction."""
    a = au.synthetic_auctions(2000, rng=1)
    chosen = np.argmax(np.where(a.eligible, a.s_device, -1), axis=1)
    for payment in au.PAYMENTS:
        p = au.auction_prices(a, "device", payment)[np.arange(a.n), chosen]
        value = a.bid[np.arange(a.n), chosen] * (
            a.pclick_device[np.arange(a.n), chosen] if payment == "impression" else 1.0
        )
        assert np.all(p <= value + 1e-12)


def test_rq1_direction_depends_on_the_payment():
    """RQ1 (Fig. 2): greedy selection, gamma = 1. Paid per click, pricing with pClick_server
    raises revenue and lowers surplus, more so with the uninformed model (as the paper
    finds); paid per impression the signs flip. Each lift is > 5 standard errors."""
    a = au.synthetic_auctions(4000, rng=2)
    for payment, sign in (("click", 1), ("impression", -1)):
        rows = {r["pricing"]: r for r in au.pricing_comparison(a, payment=payment, rng=0)}
        ref = rows["device"]
        assert rows["server"]["ctr"] == ref["ctr"] == rows["naive"]["ctr"]
        for pr in ("server", "naive"):
            for key, direction in (("revenue", sign), ("surplus", -sign)):
                # a difference of two means over the same auctions: the paired s.e. is at
                # most the sum of the two
                se = rows[pr][f"{key}_se"] + ref[f"{key}_se"]
                assert direction * (rows[pr][key] - ref[key]) > 5 * se, (payment, pr, key)
        if payment == "click":
            assert rows["naive"]["revenue"] > rows["server"]["revenue"]


def test_sweeps_hit_their_limits():
    """gamma = 0 keeps only the best public ad: the system is the non-personalised baseline;
    at eps = 60 with gamma = 1 RR is greedy on the private scores."""
    a = au.synthetic_auctions(1500, rng=3)
    (g0,) = au.auction_gamma_sweep(a, [0.0], rng=0)
    for key in ("ctr", "surplus", "revenue"):
        assert g0[key] == pytest.approx(g0[f"{key}_nonpersonalised"])
    rows = au.auction_epsilon_sweep(a, [60.0], mechanisms=["rr"], rng=0)
    for key in ("ctr", "surplus", "revenue"):
        assert rows[0][key] == pytest.approx(rows[0][f"{key}_greedy"])
    bounds = au.auction_epsilon_sweep(
        a, [1.0], mechanisms=["snm_clipped"], bounds=[0.01, 0.05], rng=0
    )
    assert [r["bound"] for r in bounds] == [0.01, 0.05]
    with pytest.raises(ValueError, match="outcome='click' needs logged clicks"):
        au.auction_epsilon_sweep(a, [1.0], outcome="click")


def _write_auctions(path, a, *, reserve=True, click=True):
    rows = [("auction_id", "bid", "pclick_server", "pclick_device", "click", "reserve")]
    for i in range(a.n):
        for j in np.flatnonzero(a.eligible[i]):
            rows.append(
                (f"a{i}", a.bid[i, j], a.pclick_server[i, j], a.pclick_device[i, j],
                 int(j % 2), a.reserve[i])
            )  # fmt: skip
    keep = [0, 1, 2, 3] + ([4] if click else []) + ([5] if reserve else [])
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([[r[c] for c in keep] for r in rows])


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_load_auctions_round_trip(tmp_path, fmt):
    a = au.synthetic_auctions(50, n_candidates=(1, 5), reserve=0.7, rng=4)
    path = tmp_path / "a.csv"
    _write_auctions(path, a)
    if fmt == "parquet":
        import pandas as pd

        pq = tmp_path / "a.parquet"
        pd.read_csv(path).to_parquet(pq)
        path = pq
    b = load_auctions(path)
    assert b.n == a.n and b.auction_id[0] == "a0"
    np.testing.assert_array_equal(b.n_candidates, a.n_candidates)
    for name in ("bid", "pclick_server", "pclick_device"):  # the file lists eligible ads only
        for i in range(a.n):
            np.testing.assert_allclose(
                getattr(b, name)[i][b.eligible[i]], getattr(a, name)[i][a.eligible[i]]
            )
    np.testing.assert_allclose(b.reserve, 0.7)
    assert b.click is not None and set(np.unique(b.click[b.eligible])) <= {0.0, 1.0}
    top = load_auctions(path, max_candidates=1)
    assert top.n_candidates.max() == 1
    np.testing.assert_allclose(top.s_server.max(axis=1), a.s_server.max(axis=1))


def test_load_auctions_rejects_bad_files(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("auction_id,bid,pclick_server\n1,2,0.1\n")
    with pytest.raises(ValueError, match="missing column"):
        load_auctions(path)
    path.write_text("auction_id,bid,pclick_server,pclick_device\n1,x,0.1,0.2\n")
    with pytest.raises(ValueError, match="line 2, column 'bid': 'x' is not a number"):
        load_auctions(path)
    path.write_text(
        "auction_id,bid,pclick_server,pclick_device,reserve\n1,2,0.1,0.2,0.5\n1,2,0.1,0.2,0.6\n"
    )
    with pytest.raises(ValueError, match="reserve must be constant"):
        load_auctions(path)
    with pytest.raises(ValueError, match="no such file"):
        load_auctions(tmp_path / "none.csv")


def _write_taobao(d, n_users=120, n_ads=40, n_rows=3000, seed=0):
    """Files in the published Tianchi format (header of user_profile with its trailing space,
    NULL brands, empty pvalue_level, users without a profile). Clicks: a base rate per ad,
    tripled when the user's gender matches the category's parity and divided by 3 otherwise."""
    rng = np.random.default_rng(seed)
    cates = rng.integers(1, 6, n_ads)
    price = np.round(rng.lognormal(3, 1, n_ads), 1)
    with open(d / "ad_feature.csv", "w") as f:
        f.write("adgroup_id,cate_id,campaign_id,customer,brand,price\n")
        for a in range(n_ads):
            brand = "NULL" if a % 7 == 0 else str(1000 + a)
            f.write(f"{a + 1},{cates[a]},{500 + a},{900 + a // 3},{brand},{price[a]}\n")
    gender = rng.integers(1, 3, n_users)
    with open(d / "user_profile.csv", "w") as f:
        f.write(",".join(taobao.USER_PROFILE) + " \n")
        for u in range(n_users - 10):
            pv = "" if u % 5 == 0 else str(1 + u % 3)
            cells = (u + 1, 0, u % 13, gender[u], u % 7, pv, 1 + u % 3, u % 2, 1 + u % 4)
            f.write(",".join(map(str, cells)) + "\n")
    base = rng.uniform(0.02, 0.12, n_ads)
    events = []
    while len(events) < n_rows:
        u, t = int(rng.integers(1, n_users + 1)), 1494000000 + int(rng.integers(0, 8 * 86400))
        for a in rng.choice(n_ads, size=int(rng.integers(1, 6)), replace=False):
            p = base[a] * (3.0 if gender[u - 1] == 1 + cates[a] % 2 else 1 / 3)
            c = int(rng.random() < p)
            events.append((u, t, int(a) + 1, c))
    with open(d / "raw_sample.csv", "w") as f:
        f.write("user,time_stamp,adgroup_id,pid,nonclk,clk\n")
        for u, t, a, c in events:
            f.write(f"{u},{t},{a},430548_1007,{1 - c},{c}\n")
    return events, price


def test_load_taobao_builds_the_papers_auctions(tmp_path):
    events, price = _write_taobao(tmp_path)
    a = taobao.load_taobao(tmp_path)
    last_day = (max(t for _, t, _, _ in events) + 8 * 3600) // 86400
    split = last_day * 86400 - 8 * 3600
    test = [e for e in events if e[1] >= split]
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for u, t, ad, c in test:
        groups.setdefault((u, t), []).append((ad, c))
    assert a.n == len(groups)
    assert a.n_candidates.sum() == len(test)
    i = int(np.flatnonzero(a.auction_id == "{1}_{0}".format(*min(groups)))[0])
    ads = groups[min(groups)]
    np.testing.assert_allclose(a.bid[i, : len(ads)], [price[ad - 1] for ad, _ in ads])
    np.testing.assert_array_equal(a.click[i, : len(ads)], [c for _, c in ads])
    assert np.all(a.reserve == pytest.approx(float(price[[e[2] - 1 for e in test]].min())))
    for p in (a.pclick_server, a.pclick_device):
        assert np.all((p[a.eligible] > 0) & (p[a.eligible] <= 1))
    rows = au.pricing_comparison(a, outcome="click", rng=0)
    assert {r["pricing"] for r in rows} == set(au.PRICINGS)


def test_load_taobao_device_model_uses_the_profile(tmp_path):
    """The device model sees gender (a private feature): on the test day its log-loss on the
    logged clicks is below the server model's. Clicks depend on gender x category by a factor
    of 9, so the gap is large (> 5 standard errors of the paired difference)."""
    _write_taobao(tmp_path, n_rows=80000, seed=1)
    a = taobao.load_taobao(tmp_path)
    y = a.click[a.eligible]

    def loss(p):
        return -(y * np.log(p) + (1 - y) * np.log1p(-p))

    diff = loss(a.pclick_server[a.eligible]) - loss(a.pclick_device[a.eligible])
    assert diff.mean() > 5 * diff.std(ddof=1) / math.sqrt(diff.size)


def test_load_taobao_rejects_other_formats(tmp_path):
    _write_taobao(tmp_path, n_rows=200)
    (tmp_path / "ad_feature.csv").write_text("adgroup,cate,price\n1,2,3\n")
    with pytest.raises(ValueError, match="not the published format"):
        taobao.load_taobao(tmp_path)
    with pytest.raises(ValueError, match="no such file"):
        taobao.load_taobao(tmp_path / "nowhere")


def test_cli_recommend_on_auction_files(tmp_path):
    a = au.synthetic_auctions(300, n_candidates=(2, 6), rng=5)
    path = tmp_path / "a.csv"
    _write_auctions(path, a, click=False)
    out = tmp_path / "o"
    code = main(
        ["recommend", "--auctions", str(path), "--epsilon", "1,5", "--gamma", "0,1",
         "--no-plots", "--no-progress", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    with open(out / "rq1.csv") as fh:
        assert [r["pricing"] for r in csv.DictReader(fh)] == ["device", "server", "naive"]
    with open(out / "auction_epsilon.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["mechanism"] for r in rows} == {"rr", "snm_scaled", "snm_clipped"}
    assert (out / "auction_gamma.csv").exists()
    _write_taobao(tmp_path, n_rows=300)
    code = main(
        ["recommend", "--taobao", str(tmp_path), "--experiment", "rq1", "--no-plots",
         "--no-progress", "--out", str(tmp_path / "t")]
    )  # fmt: skip
    assert code == 0 and (tmp_path / "t" / "rq1.csv").exists()


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--auctions", "nope.csv"], "--auctions: no such file"),
        (["--taobao", "nowhere"], "--taobao: no such directory"),
        (["--auctions", "x", "--taobao", "y"], "exclude each other"),
        (["--auction-bound", "-1"], "--auction-bound values must be"),
    ],
)
def test_cli_recommend_auction_bad_input(tmp_path, capsys, argv, match):
    assert main(["recommend", "--out", str(tmp_path / "o"), *argv]) == 2
    assert match in capsys.readouterr().err
