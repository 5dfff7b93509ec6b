"""agents.base.variant: an agent that is its base class with other defaults and, optionally,
parameters of its own (declared in its parameter table)."""

from __future__ import annotations

import inspect

import pytest

import agents
from agents.base import Agent, variant
from dpbandits.core.params import Param


class Base(Agent):
    parameter_constraints = {
        "a": Param(low=0, doc="a"),
        "b": Param("int", low=1, none=True, doc="b"),
    }

    def __init__(self, a: float = 1.0, b: int | None = None) -> None:
        self.a = a
        self.b = b


@variant(b=3, c="x", before="b")
class WithC(Base):
    parameter_constraints = {
        **Base.parameter_constraints,
        "c": Param("str", options=("x", "y"), doc="c"),
    }


def test_an_added_parameter_takes_its_place_default_and_annotation():
    sig = inspect.signature(WithC)
    assert list(sig.parameters) == ["a", "c", "b"]
    assert str(sig) == "(a: 'float' = 1.0, c: 'str' = 'x', b: 'int | None' = 3) -> 'None'"
    agent = WithC(2.0, "y", 5)
    assert (agent.a, agent.c, agent.b) == (2.0, "y", 5)
    assert repr(WithC(b=None)) == "WithC(a=1.0, c='x', b=None)"
    agent.reset(1, 2)  # the table checks the added parameter as any other


def test_the_call_errors_name_the_class():
    with pytest.raises(TypeError, match=r"^WithC\.__init__\(\) got an unexpected keyword"):
        WithC(d=1)


def test_an_added_parameter_must_be_declared():
    with pytest.raises(TypeError, match=r"\['d'\] are neither parameters of its base"):

        @variant(d=1)
        class Undeclared(Base):
            pass


def test_an_added_parameter_goes_before_a_parameter_of_the_base():
    with pytest.raises(TypeError, match=r"before='z' is not a parameter of its base"):

        @variant(c="x", before="z")
        class Nowhere(WithC):
            pass


@pytest.mark.parametrize(
    ("param", "annotation"),
    [
        (Param(), "float"),
        (Param("int", none=True), "int | None"),
        (Param("str"), "str"),
        (Param("bool"), "bool"),
        (Param("any", none=True), "Any | None"),
    ],
)
def test_param_annotation(param, annotation):
    assert param.annotation == annotation


def test_the_private_shift_families_keep_their_constructors():
    # the CD- family is the SW- family's constructor with delta and a longer window
    assert str(inspect.signature(agents.CDAdaPUCB)) == (
        "(epsilon: 'float' = 1.0, cap: 'int | None' = None, window: 'int' = 64, "
        "forced: 'float' = 0.01, delta: 'float' = 0.01, alpha: 'float' = 1.0) -> 'None'"
    )
    assert str(inspect.signature(agents.SWDPIMED)) == (
        "(epsilon: 'float' = 1.0, cap: 'int | None' = None, window: 'int' = 8, "
        "forced: 'float' = 0.01, alpha: 'float' = 1.0) -> 'None'"
    )
    agent = agents.CDDPKLUCB(0.5, 40, 32, 0.0, 0.05, 2.0)
    assert agent.get_params() == {"epsilon": 0.5, "cap": 40, "window": 32, "forced": 0.0,
                                  "delta": 0.05, "alpha": 2.0}  # fmt: skip


def test_an_added_parameter_goes_before_the_bases_var_keyword():
    class Open(Base):
        parameter_constraints = {**Base.parameter_constraints, "c": Param(doc="c")}

        def __init__(self, a: float = 1.0, **rest: float) -> None:
            self.a = a
            self.rest = rest

    @variant(c=2.0)
    class OpenWithC(Open):
        pass

    assert str(inspect.signature(OpenWithC)) == (
        "(a: 'float' = 1.0, c: 'float' = 2.0, **rest: 'float') -> 'None'"
    )
    agent = OpenWithC(3.0, 4.0, z=5.0)
    assert (agent.a, agent.c, agent.rest) == (3.0, 4.0, {"z": 5.0})


def test_the_call_errors_are_worded_as_a_written_init():
    def written(self, a: float = 1.0, c: str = "x", b: int | None = 3) -> None:
        """WithC's constructor, written out."""

    calls = [((1.0, "y", 5, 6), {}), ((1.0,), {"a": 2.0}), ((), {"d": 1})]
    for args, kwargs in calls:
        with pytest.raises(TypeError) as wrote:
            written(None, *args, **kwargs)
        with pytest.raises(TypeError) as made:
            WithC(*args, **kwargs)
        expected = str(wrote.value).replace(f"{written.__qualname__}()", "WithC.__init__()")
        assert str(made.value) == expected


def test_keep_parameters_stores_the_declared_arguments():
    class Kept(Base):
        c: str

        parameter_constraints = {**Base.parameter_constraints, "c": Param("str", doc="c")}

        def __init__(self, a: float = 1.0, b: int | None = None, c: str = "x") -> None:
            self.keep_parameters(locals())
            super().__init__(a, b)  # (the __class__ cell of super() is not stored)

    agent = Kept(2.0, c="y")
    assert vars(agent) == {"a": 2.0, "b": None, "c": "y"}
    assert repr(agent) == "Kept(a=2.0, b=None, c='y')"

    class Undeclared(Base):
        def __init__(self, a: float = 1.0, d: int = 0) -> None:
            self.keep_parameters(locals())

    with pytest.raises(TypeError, match=r"Undeclared: 'd' is not a parameter declared"):
        Undeclared()


@pytest.mark.parametrize(
    ("cls", "alpha"), [(agents.AdaPUCB, 4), (agents.AdaPKLUCB, 3.5), (agents.DPKLUCB, 3)]
)
def test_a_par_field_named_after_a_parameter_gets_its_value(cls, alpha):
    # AdaP's and DP-KL's alpha: added by variant, passed to the kernels by the skeleton
    agent = cls(0.5, alpha)
    agent.reset(2, 3, rng=0)
    value = agent.par[cls.PAR.alpha]
    assert type(value) is float and value == alpha
    assert agent.par[cls.PAR.eps] == 0.5
