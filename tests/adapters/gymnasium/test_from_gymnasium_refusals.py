"""from_gymnasium's ordinary mistakes are house messages (issue 35, items 13 and 14): a make kwarg
gymnasium.make asserts on or the env's constructor refuses, an id whose module does not import; a
refused import whose env's close() also raises reports the close error beside the refusal (a note),
never instead of it."""

from __future__ import annotations

import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")

import bridge  # noqa: E402
from bridge.errors import ConversionError, SpecError  # noqa: E402

MAKE_FIX = "Check the keyword arguments (names and values) against the env's constructor and gymnasium.make."


@pytest.mark.parametrize(
    "kwargs, got",
    [
        ({"max_episode_steps": -5}, "AssertionError: Expect the `max_episode_steps` to be positive, actually: -5"),
        (
            {"foo": 1},
            "TypeError: CartPoleEnv.__init__() got an unexpected keyword argument 'foo' was raised from the "
            "environment creator for CartPole-v1 with kwargs ({'foo': 1})",
        ),
    ],
    ids=["max-episode-steps", "unknown-kwarg"],
)
def test_a_make_kwarg_gymnasium_refuses_is_a_spec_error(kwargs, got):
    shown = ", ".join(["'CartPole-v1'"] + [f"{k}={v!r}" for k, v in kwargs.items()])
    text = f"from_gymnasium: gymnasium.make({shown}) must build the env, got {got}. {MAKE_FIX}"
    with raises_exactly(SpecError, text):
        bridge.from_gymnasium("CartPole-v1", **kwargs)


def test_an_id_whose_module_does_not_import_is_a_spec_error():
    text = (
        "from_gymnasium id 'nosuchmodule:Foo-v0' must name a module that imports, got ModuleNotFoundError: "
        "No module named 'nosuchmodule'. Install the package that provides 'nosuchmodule', or check the module "
        "name before ':'."
    )
    with raises_exactly(SpecError, text):
        bridge.from_gymnasium("nosuchmodule:Foo-v0")


class TextObservingCloseRaises(gymnasium.Env):
    observation_space = gymnasium.spaces.Text(5)
    action_space = gymnasium.spaces.Discrete(2)
    closed = []

    def close(self):
        TextObservingCloseRaises.closed.append(True)
        raise RuntimeError("close failed")


def test_a_close_that_raises_after_a_refused_import_is_reported_beside_the_refusal():
    env_id = "SeamsTextCloseRaises-v0"
    gymnasium.register(env_id, entry_point=TextObservingCloseRaises)
    try:
        text = (
            "observation_space must be a Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple, got Text. "
            "Wrap the env in an ObservationWrapper that presents fixed-size arrays instead (MiniGrid: "
            "ImgObsWrapper or RGBImgObsWrapper; on the command line --wrapper minigrid.wrappers:ImgObsWrapper)."
        )
        note = f"Closing the gymnasium env '{env_id}' after this error also failed: RuntimeError: close failed"
        # pytest matches the message and its notes: the refusal, whole, then the close error beside it
        with raises_exactly(ConversionError, f"{text}\n{note}") as refused:
            bridge.from_gymnasium(env_id, disable_env_checker=True)
    finally:
        del gymnasium.registry[env_id]
    assert TextObservingCloseRaises.closed == [True]
    assert str(refused.value) == text and refused.value.__notes__ == [note]


def test_an_id_whose_env_package_is_missing_names_its_extra_and_this_interpreter(monkeypatch):
    import sys

    from bridge import runtimes

    # a package of the table that is not installed here (minigrid, ale_py, ... are, in this tox env)
    monkeypatch.setitem(runtimes.ENV_EXTRAS, "envbridge_absent_envs", "gymnasium-envs")
    text = (
        "from_gymnasium id 'envbridge_absent_envs:Foo-v0' must name a module that imports, got ModuleNotFoundError: "
        f"No module named 'envbridge_absent_envs'. Run: {sys.executable} -m pip install 'envbridge[gymnasium-envs]'."
    )
    with raises_exactly(SpecError, text):
        bridge.from_gymnasium("envbridge_absent_envs:Foo-v0")
