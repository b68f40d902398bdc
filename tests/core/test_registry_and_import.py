"""Registry behaviour and the promise that ``import bridge`` stays light."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from support import raises_exactly

import bridge
from bridge.errors import SpecError
from bridge.examples import GridWorld


def test_make_builds_a_time_limited_example_with_its_spec():
    env = bridge.make("envbridge/GridWorld-v0", size=7)
    assert isinstance(env, bridge.TimeLimit) and env.max_episode_steps == 100
    assert env.unwrapped.size == 7 and env.unwrapped.spec.id == "envbridge/GridWorld-v0"


def test_register_with_a_callable_and_kwargs():
    bridge.register("test/Grid3-v0", GridWorld, kwargs={"size": 3})
    env = bridge.make("test/Grid3-v0")
    assert not isinstance(env, bridge.TimeLimit) and env.size == 3
    assert bridge.make("test/Grid3-v0", size=4).size == 4


def test_unknown_id_suggests_close_matches():
    with raises_exactly(
        SpecError,
        "env id must be registered, got envbridge/GridWrld-v0. Did you mean 'envbridge/GridWorld-v0', 'envbridge/PixelGrid-v0', 'envbridge/CartPole-v0'?",
    ):
        bridge.make("envbridge/GridWrld-v0")


def test_bad_entry_points_are_explained():
    bridge.register("test/Missing-v0", "bridge.examples.gridworld:Nope")
    with raises_exactly(
        SpecError,
        "entry_point attribute of bridge.examples.gridworld must exist, got Nope. Check the name after the colon.",
    ):
        bridge.make("test/Missing-v0")
    bridge.register("test/NotEnv-v0", lambda: 3)
    with raises_exactly(
        SpecError,
        "entry point of 'test/NotEnv-v0' must return a bridge.Env, got int. Return an instance of a bridge.Env subclass.",
    ):
        bridge.make("test/NotEnv-v0")
    with raises_exactly(
        SpecError, "entry_point must be a callable or 'module:attr', got 'nocolon'. Pass e.g. 'mypkg.envs:MyEnv'."
    ):
        bridge.register("test/X-v0", "nocolon") and bridge.make("test/X-v0")


HEAVY = ["gymnasium", "gym", "torch", "tensorflow", "stable_baselines3", "dreamerv2"]


def test_import_bridge_imports_no_framework():
    code = (
        "import sys, json, bridge, bridge.adapters, bridge.compat, bridge.examples; "
        "bridge.make('envbridge/CartPole-v0').reset(seed=0); "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    # run outside the checkout, so the installed package is imported, not the source folder
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tempfile.gettempdir()
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_a_missing_framework_names_the_pip_command():
    from bridge.compat import optional_import

    with raises_exactly(
        bridge.MissingDependencyError,
        "the package 'no_such_pkg_xyz' must be installed for the golden gate, got ImportError: No module named 'no_such_pkg_xyz'. Run: pip install no_such_pkg_xyz.",
    ):
        optional_import("no_such_pkg_xyz", "the golden gate")


def test_unknown_attribute_is_an_attribute_error():
    assert not hasattr(bridge, "to_nowhere")
    with pytest.raises(AttributeError):
        bridge.to_nowhere  # noqa: B018


def test_examples_render_in_their_modes():
    env = GridWorld(size=3, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert text.count("\n") == 3 and "A" in text and "G" in text
    env = GridWorld(size=3, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (48, 48, 3) and frame.dtype == np.uint8 and (frame != 255).any()
