"""`dpbandits list` and `dpbandits audit`."""

from dpbandits import selectors
from dpbandits.cli import main


def test_list_shows_every_selector_with_parameters_and_guarantee(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in selectors.available():
        assert name in out
    assert "beta=0.05" in out and "gamma=0.05" in out and "eta=0.0" in out
    assert "eps-DP" in out and "not DP" in out and "0-DP" in out


def test_audit_command_pass_and_fail(capsys):
    assert main(["audit", "rnm", "--draws", "20000", "--pairs", "shift2", "swap"]) == 0
    out = capsys.readouterr().out
    assert "shift2" in out and "PASS" in out
    assert main(["audit", "rnmh", "--draws", "20000", "--pairs", "sec4a"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "does not claim DP" in out
    assert main(["audit", "gem", "--epsilon", "2", "--param", "beta=0.1", "--draws", "2000"]) == 0
    assert "beta=0.1" in capsys.readouterr().out


def test_audit_command_bad_input(capsys):
    assert main(["audit", "nope"]) == 2
    assert "unknown selector 'nope'" in capsys.readouterr().err
    assert main(["audit", "rnm", "--pairs", "zzz"]) == 2
    assert main(["audit", "rnm", "--epsilon", "-1"]) == 2
    assert "epsilon must be finite and > 0" in capsys.readouterr().err


def test_list_agents_prints_whole_summaries_wrapped_at_word_boundaries(capsys):
    """Each agent's summary (its docstring's first paragraph) is printed whole, wrapped at word
    boundaries within 100 columns: joined with spaces, the lines give it back (a cut inside a
    word would add a space); AdaP-UCB's summary stopped at "Partial Information:"."""
    import inspect

    import agents

    assert main(["list", "agents"]) == 0
    lines = capsys.readouterr().out.splitlines()
    text = " ".join(" ".join(lines).split())
    for name in agents.available():
        cls = agents.describe(name).cls
        summary = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("``", "")
        assert f"{name} {cls.__name__}: {' '.join(summary.split())}" in text, name
    assert "Partial Information: A Refined Analysis of Differentially Private Bandits" in text
    assert max(len(x) for x in lines[2:]) <= 100
