"""Any env in, without glue: a Gymnasium env class, instance or factory goes through
``from_gymnasium`` wherever an env is named (the exports, make_vec_env, every CLI command, the
host), and ``--wrapper`` / ``--drop-key`` are one spelling for every command and the host. Whole
messages where something is refused."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from support import ERA, raises_exactly, require

gymnasium = require("gymnasium")
if ERA == "modern":  # the modern tox env installs MiniGrid (extra gymnasium-envs): missing, it fails here
    import minigrid  # noqa: F401
else:
    minigrid = require("minigrid")

from bridge.adapters.gymnasium.export import to_gymnasium  # noqa: E402
from bridge.adapters.importers.source import ForeignEnv  # noqa: E402
from bridge.adapters.sb3.export import make_vec_env, to_sb3  # noqa: E402

import bridge  # noqa: E402
from bridge.cli import main  # noqa: E402
from bridge.errors import ContractError, SpecError  # noqa: E402
from bridge.loading import Source, resolve  # noqa: E402

# a gymnasium.Env class as SB3's custom-env guide writes it
NEW_CORRIDOR = """
import numpy as np
import gymnasium
from gymnasium import spaces


class NewCorridor(gymnasium.Env):
    metadata = {"render_modes": []}

    def __init__(self, length=5):
        self.length = length
        self.observation_space = spaces.Box(0, length, (1,), np.float32)
        self.action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = int(self.np_random.integers(0, 2))
        return np.array([self.pos], np.float32), {}

    def step(self, action):
        self.pos = max(0, min(self.length, self.pos + (1 if action == 1 else -1)))
        done = self.pos == self.length
        return np.array([self.pos], np.float32), float(done), done, False, {}


def make_short():
    return NewCorridor(length=2)


class Halve(gymnasium.ObservationWrapper):
    def observation(self, obs):
        return obs / 2
"""


@pytest.fixture
def corridor(tmp_path, monkeypatch):
    """newcorridor.py in the current folder (tmp_path); the module and sys.path undone after."""
    (tmp_path / "newcorridor.py").write_text(NEW_CORRIDOR)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", sys.path + [str(tmp_path)])
    monkeypatch.delitem(sys.modules, "newcorridor", raising=False)
    yield tmp_path
    sys.modules.pop("newcorridor", None)


def _module():
    import importlib

    return importlib.import_module("newcorridor")


def test_a_gymnasium_class_instance_and_factory_are_imported_by_every_export(corridor):
    mod = _module()
    for source in (mod.NewCorridor, mod.NewCorridor(), mod.make_short, "newcorridor:NewCorridor"):
        env, built = resolve(source)
        assert isinstance(env, ForeignEnv) and built is not isinstance(source, mod.NewCorridor)
        env.close()
    native = mod.NewCorridor()
    want = native.reset(seed=7)[0]
    for export in (to_gymnasium(mod.NewCorridor), to_sb3(mod.NewCorridor()), to_gymnasium("newcorridor:NewCorridor")):
        np.testing.assert_array_equal(export.reset(seed=7)[0], want)
        export.close()
    vec = make_vec_env(mod.NewCorridor, n_envs=2, seed=7)
    assert vec.reset().shape == (2, 1)
    vec.close()
    assert to_gymnasium(mod.make_short).unwrapped.neutral.env.length == 2


def test_a_class_after_a_scheme_and_its_make_kwargs(corridor):
    env, _ = resolve("gymnasium:newcorridor:NewCorridor", {"length": 3})
    assert isinstance(env, ForeignEnv) and env.env.length == 3


def test_envbridge_check_takes_the_class_as_sb3s_guide_writes_it(corridor, capsys):
    assert main(["check", "newcorridor.py:NewCorridor", "--target", "gymnasium"]) == 0
    out = capsys.readouterr().out
    assert "gymnasium  pass" in out


def test_the_host_imports_the_class_with_the_same_spelling(corridor):
    remote = bridge.remote("newcorridor.py:NewCorridor", wrappers=["newcorridor:Halve"], timeout=60)
    try:
        obs, _ = remote.reset(seed=7)
        want = _module().NewCorridor().reset(seed=7)[0] / 2
        np.testing.assert_array_equal(obs, want)
    finally:
        remote.close()


def test_a_non_env_names_every_kind_of_source():
    msg = (
        "to_gymnasium env must be a bridge.Env, a gym, Gymnasium or dm_env env, its class, a factory, a registered "
        "id, module:attr or path/to/file.py:attr, got int. Pass e.g. 'envbridge/GridWorld-v0', or subclass "
        "bridge.Env."
    )
    with raises_exactly(SpecError, msg):
        to_gymnasium(42)


# -- item 1: wrappers and importer options on the command line ------------------------------------
MINIGRID = "gymnasium:minigrid:MiniGrid-Empty-5x5-v0"


def test_minigrids_mission_is_refused_with_the_command_line_fix(capsys):
    assert main(["check", MINIGRID, "--target", "gymnasium"]) == 2
    assert capsys.readouterr().err == (
        "envbridge check: ConversionError: observation_space['mission'] must be a Box, Discrete, MultiDiscrete, "
        "MultiBinary, Dict or Tuple, got MissionSpace. Wrap the env in an ObservationWrapper that presents "
        "fixed-size arrays instead (MiniGrid: ImgObsWrapper or RGBImgObsWrapper; on the command line --wrapper "
        "minigrid.wrappers:ImgObsWrapper), or pass drop_keys=['mission'] (on the command line --drop-key mission).\n"
    )


@pytest.mark.parametrize(
    "flags",
    [
        ["--drop-key", "mission"],
        ["--wrapper", "minigrid.wrappers:RGBImgPartialObsWrapper", "--wrapper", "minigrid.wrappers:ImgObsWrapper"],
    ],
)
def test_minigrid_on_the_command_line_with_a_drop_key_or_wrappers(flags, capsys):
    assert main(["check", MINIGRID, "--target", "gymnasium", *flags]) == 0
    assert "gymnasium  pass" in capsys.readouterr().out


def test_wrappers_apply_innermost_first():
    env, _ = resolve(
        MINIGRID, wrappers=["minigrid.wrappers:RGBImgPartialObsWrapper", "minigrid.wrappers:ImgObsWrapper"]
    )
    assert env.observation_space == bridge.spaces.Image(56, 56, 3)
    env.close()
    wrong = (
        "from_gymnasium wrapper RGBImgPartialObsWrapper must wrap the env without raising, got AttributeError: 'Box' "
        "object has no attribute 'spaces'. "
        "Check that the wrapper fits the env (and the order: innermost first); the traceback is chained."
    )
    with raises_exactly(ContractError, wrong):
        resolve(MINIGRID, wrappers=["minigrid.wrappers:ImgObsWrapper", "minigrid.wrappers:RGBImgPartialObsWrapper"])


def test_a_missing_package_names_its_extra_and_pip_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "minigrid", None)  # as if not installed
    assert main(["check", MINIGRID]) == 2
    assert capsys.readouterr().err == (
        f"envbridge check: MissingDependencyError: the package 'minigrid' must be installed in {sys.executable} for "
        f"env {MINIGRID}, got ModuleNotFoundError: import of minigrid halted; None in sys.modules. Run: "
        f"{sys.executable} -m pip install 'envbridge[gymnasium-envs]'.\n"
    )


def test_importer_options_refused_for_a_bridge_env():
    msg = (
        "the import options of envbridge/GridWorld-v0 must go with a gym or Gymnasium env, got ['drop_keys']. "
        "Drop them: they are the importers' options (from_gymnasium, from_gym), and this env is a bridge.Env."
    )
    with raises_exactly(SpecError, msg):
        resolve("envbridge/GridWorld-v0", import_options={"drop_keys": ["x"]})


@pytest.mark.parametrize(
    "make, options, clash",
    [
        ({"drop_keys": ["y"]}, {"import_options": {"drop_keys": ["x"]}}, "['drop_keys']"),
        ({"wrappers": [], "render_mode": None}, {"wrappers": ["nosuchmodule:Wrapper"]}, "['wrappers']"),
        (
            {"determinism": "strict", "drop_keys": []},
            {"import_options": {"drop_keys": [], "determinism": "weak"}},
            "['determinism', 'drop_keys']",
        ),
    ],
)
def test_a_make_keyword_that_repeats_an_import_option_is_refused_by_name(make, options, clash):
    msg = (
        f"the make keywords of gymnasium:CartPole-v1 must not repeat an import option of from_gymnasium, got {clash}. "
        "Pass each once, as an import option; a keyword of that name for the env itself goes in a factory of yours."
    )
    with raises_exactly(SpecError, msg):  # before any wrapper is loaded: nosuchmodule is never imported
        resolve("gymnasium:CartPole-v1", make, **options)
    source = Source("gymnasium:CartPole-v1", options.get("wrappers", ()), options.get("import_options"))
    with raises_exactly(SpecError, msg):  # the same through a Source (RLlib's creator, a host)
        source(**make)


def test_a_bridge_wrapper_wraps_a_bridge_env_and_a_gymnasium_one_is_refused():
    class Quiet(bridge.Wrapper):
        pass

    env, built = resolve("envbridge/PointMass-v0", wrappers=[Quiet])
    assert isinstance(env, Quiet) and built
    msg = (
        "wrapper TimeAwareObservation must wrap the env without raising, got AssertionError: Expected env to be a "
        "`gymnasium.Env` but got <class 'bridge.env.TimeLimit'>. Check that it is a bridge.Wrapper (a neutral env "
        "takes no gym or Gymnasium wrapper)."
    )
    with raises_exactly(ContractError, msg):
        resolve("envbridge/PointMass-v0", wrappers=["gymnasium.wrappers:TimeAwareObservation"])


def test_the_command_lines_source_is_plain_data():
    import pickle

    source = Source(MINIGRID, ["minigrid.wrappers:RGBImgPartialObsWrapper"], {"drop_keys": ["mission"]})
    again = pickle.loads(pickle.dumps(source))
    assert (again.name, again.wrappers, again.import_options) == (source.name, source.wrappers, source.import_options)
    env = again()
    assert list(env.observation_space.keys()) == ["direction", "image"]
    assert env.observation_space["image"] == bridge.spaces.Image(56, 56, 3)
    env.close()


def test_the_host_takes_the_command_lines_spelling(capsys):
    """Without the wrapper the host refuses MiniGrid's mission; with it the hosted env passes the core check."""
    argv = ["check", MINIGRID, "--target", "core", "--host-python", sys.executable]
    assert main(argv) == 2 and "got MissionSpace" in capsys.readouterr().err
    assert main([*argv, "--wrapper", "minigrid.wrappers:ImgObsWrapper"]) == 0
    assert "core       pass" in capsys.readouterr().out
