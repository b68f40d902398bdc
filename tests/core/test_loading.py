"""One env loader for every command: ids, ``module:attr``, ``path/file.py:attr``, ``--import``, and
the current folder importable as with ``python -m``. Whole messages."""

from __future__ import annotations

import sys

import pytest
from support import raises_exactly

from bridge.cli import main
from bridge.errors import SpecError
from bridge.examples import CartPoleVector
from bridge.loading import env_source, load_env, resolve
from bridge.registry import registry

TREASURE = """
import numpy as np

import bridge
from bridge import spaces


class TreasureHunt(bridge.Env):
    def __init__(self):
        self.observation_space = spaces.Box(0.0, 9.0, (1,), np.float32)
        self.action_space = spaces.Discrete(2, start=1)
        self.position = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = int(self.np_random.integers(0, 5))
        return np.array([self.position], np.float32), {}

    def step(self, action):
        self.position = min(9, self.position + int(action))
        done = self.position == 9
        return np.array([self.position], np.float32), float(done), done, False, {}

    def get_state(self):
        return {"position": self.position}

    def set_state(self, state):
        self.position = int(state["position"])


def make_hunt():
    return bridge.TimeLimit(TreasureHunt(), 20)


bridge.register("me/Treasure-v0", make_hunt)
"""


@pytest.fixture
def user_folder(tmp_path, monkeypatch):
    """A folder with the user's treasure.py, as the current directory; imports and ids undone after."""
    (tmp_path / "envs").mkdir()
    (tmp_path / "treasure.py").write_text(TREASURE)
    (tmp_path / "envs" / "hunt_file.py").write_text(TREASURE.replace("me/Treasure-v0", "me/HuntFile-v0"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    before = set(registry)
    yield tmp_path
    for name in ("treasure", "hunt_file"):
        sys.modules.pop(name, None)
    for id in set(registry) - before:
        del registry[id]


def test_the_current_folder_is_importable_for_module_attr(user_folder, capsys):
    assert main(["check", "treasure:TreasureHunt", "--target", "core"]) == 0
    assert capsys.readouterr().out.startswith("envbridge check: TreasureHunt\n")


def test_an_id_registered_by_a_user_module_is_reachable_with_import(user_folder, capsys):
    assert main(["check", "me/Treasure-v0", "--import", "treasure", "--target", "core"]) == 0
    assert capsys.readouterr().out.startswith("envbridge check: me/Treasure-v0\n")


def test_a_file_path_names_the_env_and_can_be_imported(user_folder, capsys):
    assert main(["check", "envs/hunt_file.py:make_hunt", "--target", "core"]) == 0
    assert main(["check", "me/HuntFile-v0", "--import", "envs/hunt_file.py", "--target", "core"]) == 0
    env = load_env("envs/hunt_file.py:TreasureHunt")
    assert type(env).__name__ == "TreasureHunt" and env.action_space.start == 1


def test_conform_records_and_verifies_a_user_env_by_file(user_folder, capsys):
    assert main(["conform", "envs/hunt_file.py:make_hunt", "--record", "hunt.npz", "--steps", "40"]) == 0
    assert main(["conform", "envs/hunt_file.py:make_hunt", "--verify", "hunt.npz", "--view", "neutral"]) == 0
    assert "  neutral    agrees" in capsys.readouterr().out


def test_an_unregistered_id_names_both_ways_out(user_folder, capsys):
    assert main(["check", "me/Treasure-v0", "--target", "core"]) == 2
    assert capsys.readouterr().err == (
        "envbridge check: SpecError: env id must be registered, got 'me/Treasure-v0'. Registered ids: "
        f"{sorted(registry)}. If a module of yours registers it, pass --import MODULE; "
        "or name the env as module:attr or path/to/file.py:attr.\n"
    )


def test_a_close_id_is_suggested():
    with pytest.raises(SpecError) as e:
        env_source("envbridge/GridWorld-v1")
    assert str(e.value) == (
        "env id must be registered, got 'envbridge/GridWorld-v1'. Did you mean 'envbridge/GridWorld-v0', "
        "'envbridge/PixelGrid-v0', 'envbridge/CartPole-v0'? If a module "
        "of yours registers it, pass --import MODULE; or name the env as module:attr or path/to/file.py:attr."
    )


@pytest.mark.parametrize(
    "argv, err",
    [
        (
            ["check", "me/Treasure-v0", "--import", "treasur"],
            "SpecError: --import module must be importable, got 'treasur' (No module named 'treasur'). Check the "
            "spelling, run from the folder that holds it, or pass the file as --import path/treasur.py.",
        ),
        (
            ["check", "envs/missing.py:Env"],
            "SpecError: env file must exist, got 'envs/missing.py'. Check the path (relative to the current folder).",
        ),
        (
            ["check", "envs/hunt_file.py:Missing"],
            "SpecError: the attribute of envs/hunt_file.py must exist, got 'Missing'. Check the name after the colon.",
        ),
        (
            ["conform", "treasure:TREASURE_NOTE", "--record", "t.npz"],
            "SpecError: env must be a bridge.Env, got treasure:TREASURE_NOTE gives str. Point at a bridge.Env "
            "subclass, a function that returns one, or an instance.",
        ),
    ],
    ids=["unknown-module", "missing-file", "missing-attribute", "not-an-env"],
)
def test_a_wrong_name_is_refused_with_the_fix(user_folder, capsys, argv, err):
    (user_folder / "treasure.py").write_text(TREASURE + '\nTREASURE_NOTE = "not an env"\n')
    assert main(argv) == 2
    assert capsys.readouterr().err == f"envbridge {argv[0]}: {err}\n"


def test_a_file_whose_name_is_another_module_is_refused(user_folder):
    (user_folder / "json.py").write_text(TREASURE)
    with pytest.raises(SpecError) as e:
        env_source("json.py:TreasureHunt")
    found = sys.modules["json"].__file__
    assert str(e.value) == f"the module name of json.py must be free, got 'json' is already {found}. Rename the file."


class ClosingFails(CartPoleVector):
    def close(self):
        raise RuntimeError("close failed")


def make_closing_fails():
    return ClosingFails(num_envs=2)


def test_a_vector_env_where_one_env_was_wanted_is_refused_and_a_close_error_goes_beside():
    text = (
        "to_gymnasium env must be a bridge.Env, a gym, Gymnasium or dm_env env, its class, a factory, a registered "
        "id, module:attr or path/to/file.py:attr, got a ClosingFails from make_closing_fails(). Pass e.g. 'envbridge/GridWorld-v0', "
        "or subclass bridge.Env."
    )
    note = (
        "Closing the ClosingFails make_closing_fails() built after this error also failed: RuntimeError: close failed"
    )
    with raises_exactly(SpecError, f"{text}\n{note}") as refused:
        resolve(make_closing_fails, subject="to_gymnasium env")
    assert str(refused.value) == text
