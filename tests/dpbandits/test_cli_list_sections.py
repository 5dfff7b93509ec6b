"""`dpbandits list` lists agents and environments with their constructor parameters too."""

import inspect

import gymnasium
import pytest

import agents
from dpbandits.cli import main
from dpbandits.core.registration import ENV_IDS


def _section(out: str, title: str) -> str:
    start = out.index(f"\n{title} ")
    end = out.find("\n\n", out.index("-----", start))
    return out[start:end]


def test_list_shows_agents_with_parameters_and_defaults(capsys):
    assert main(["list"]) == 0
    block = _section(capsys.readouterr().out, "agent")
    for name in agents.available():
        cls = type(agents.make(name))
        assert f"\n{name} " in block and f"{cls.__name__}: " in block
        for p in inspect.signature(cls).parameters.values():
            if p.kind is p.VAR_KEYWORD:
                assert f"**{p.name}" in block
            else:
                assert f"{p.name}={p.default!r}" in block.replace("\n", " ").replace("   ", "")
    assert "alpha=1.4142135623730951" in block and "selector='mgem'" in block


def test_list_shows_environments_with_parameters_and_defaults(capsys):
    assert main(["list", "envs"]) == 0
    out = capsys.readouterr().out
    assert "selector " not in out and "agent " not in out  # only the requested section
    flat = " ".join(out.split())
    for env_id in ENV_IDS:
        assert env_id in out
        creator = gymnasium.spec(env_id).entry_point.split(":")[1]
        assert f"{creator}: " in out
    assert "t_shift=30000" in flat and "horizon=50000" in flat and "arm='gaussian'" in flat
    # a profile default shows its class, not a memory address
    assert "means=SinusoidalDrift(...)" in flat and " at 0x" not in out


PLUGIN = '''
import gymnasium
import agents
from agents.ucb import UCB
from envs.two_armed_shift import TwoArmedShift


class PluginUCB(UCB):
    """A user's agent."""

    def __init__(self, alpha: float = 0.5, bonus: int = 3) -> None:
        super().__init__(alpha=alpha)
        self.bonus = bonus


class PluginEnv(TwoArmedShift):
    """A user's environment."""

    def __init__(self, flavour: str = "mint", **kwargs) -> None:
        super().__init__(**kwargs)


agents.register("plugin_ucb_list_test", PluginUCB, overwrite=True)
if "dpbandits/PluginEnvListTest-v0" not in gymnasium.registry:
    gymnasium.register("dpbandits/PluginEnvListTest-v0", entry_point=PluginEnv,
                       kwargs={"flavour": "lime"})
'''


@pytest.fixture
def plugin(tmp_path):
    path = tmp_path / "list_plugin.py"
    path.write_text(PLUGIN)
    yield str(path)
    gymnasium.registry.pop("dpbandits/PluginEnvListTest-v0", None)


def test_list_shows_plugin_agents_and_environments(plugin, capsys):
    assert main(["list", "--plugin", plugin]) == 0
    out = capsys.readouterr().out
    assert "plugin_ucb_list_test" in out and "PluginUCB: A user's agent." in out
    assert "alpha=0.5 [number > 0], bonus=3" in out  # the rule from the inherited table
    assert "dpbandits/PluginEnvListTest-v0" in out and "PluginEnv: A user's environment." in out
    assert "flavour='lime', **kwargs" in out  # the registered kwargs override the default


def test_list_rejects_an_unknown_section(capsys):
    with pytest.raises(SystemExit) as info:
        main(["list", "policies"])
    assert info.value.code == 2
    assert "invalid choice: 'policies'" in capsys.readouterr().err
