"""Images SB3's default CNN cannot convolve: the "sb3" profile predicts it, `train` refuses it, and
the boundary is NatureCNN's own (36x36 trains, 35x35 does not), checked against the real SB3."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, Optional, Tuple

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")
stable_baselines3 = require("stable_baselines3")

from bridge.adapters.sb3 import make_vec_env  # noqa: E402
from bridge.adapters.sb3.train import train  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402

NATURE_CNN = "the smallest image SB3's NatureCNN convolves: 8x8 stride 4, 4x4 stride 2, 3x3 stride 1"
NOT_NORMALIZE = "normalize_images=False alone does not help (SB3 still builds NatureCNN)."
PPO_TINY = {"n_steps": 8, "batch_size": 8, "n_epochs": 1}


def box_message(size: str, space: str) -> str:
    return (
        f"observation for SB3's 'CnnPolicy' must be at least 36x36 pixels ({NATURE_CNN}), got {size}: {space}. "
        "Resize the image in the env to at least 36x36, pass policy_kwargs={'features_extractor_class': ...} "
        "with a features extractor for small images (envbridge train sb3 --policy-kwargs MODULE:ATTR), "
        f"or use 'MlpPolicy' (--policy MlpPolicy); {NOT_NORMALIZE}"
    )


def dict_message(space: str) -> str:
    return (
        f"observation['image'] for SB3's 'MultiInputPolicy' must be at least 36x36 pixels ({NATURE_CNN}), "
        f"got 16x16: {space}. Resize observation['image'] in the env to at least 36x36, pass "
        "policy_kwargs={'features_extractor_class': ...} with a features extractor for small images "
        f"(envbridge train sb3 --policy-kwargs MODULE:ATTR); {NOT_NORMALIZE}"
    )


class Frames(bridge.Env):
    """A uint8 [0, 255] Box observation of ``shape`` (a frame that brightens), two actions, 5 steps."""

    def __init__(self, shape: Tuple[int, ...] = (16, 16, 3), dtype: Any = np.uint8, high: float = 255) -> None:
        self.observation_space = spaces.Box(0, high, shape, dtype)
        self.action_space = spaces.Discrete(2)
        self.t = 0

    def _obs(self) -> Any:
        return self._frame(self.observation_space)

    def _frame(self, space: spaces.Box) -> np.ndarray:
        return np.full(space.shape, float(space.high.flat[0]) * self.t / 5, space.dtype)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        self.t += 1
        return self._obs(), float(action), self.t == 5, False, {}


class FramesAndVector(Frames):
    """``Dict(image=<Box of shape>, vector=Box(-1, 1, (4,)))``."""

    def __init__(self, shape: Tuple[int, ...] = (16, 16, 3), dtype: Any = np.uint8, high: float = 255) -> None:
        super().__init__(shape, dtype, high)
        self.image_space = self.observation_space
        self.observation_space = spaces.Dict(image=self.image_space, vector=spaces.Box(-1.0, 1.0, (4,), np.float32))

    def _obs(self) -> Any:
        return {"image": self._frame(self.image_space), "vector": np.zeros(4, np.float32)}


def sb3_errors(env: bridge.Env, **options: Any) -> list:
    report = bridge.check(env, targets=["sb3"], options={"sb3": options} if options else None)
    return [p.message + " " + p.fix for p in report.for_target("sb3") if p.severity == "error"]


@pytest.mark.parametrize(
    "shape, space",
    [((16, 16, 3), "Box(0, 255, (16, 16, 3), uint8)"), ((3, 16, 16), "Box(0, 255, (3, 16, 16), uint8)")],
    ids=["channel-last", "channel-first"],
)
def test_a_16x16_box_image_is_an_error_of_the_profile_and_of_train(shape, space):
    assert sb3_errors(Frames(shape)) == [box_message("16x16", space)]
    # the one entry: no "use 'CnnPolicy'" advice beside it, no SB3 warning saying it again
    assert [p.check for p in bridge.check(Frames(shape), targets=["sb3"]).for_target("sb3")] == ["cnn"]
    with raises_exactly(bridge.ConversionError, box_message("16x16", space)):
        train("PPO", lambda: Frames(shape), 16, **PPO_TINY)


def test_the_prediction_is_what_sb3_itself_does():
    vec_env = make_vec_env(lambda: Frames((16, 16, 3)))
    with pytest.raises(RuntimeError, match=r"^Calculated padded input size per channel: \(3 x 3\)"):
        stable_baselines3.PPO("CnnPolicy", vec_env, **PPO_TINY)
    # SB3's MlpPolicy flattens the image: no CNN, no error, and SB3's "minimal resolution" warning
    # (about its CNN) does not apply, so the report stays clean
    report = bridge.check(Frames((16, 16, 3)), targets=["sb3"], options={"sb3": {"policy": "MlpPolicy"}})
    assert [(p.severity, p.check) for p in report.for_target("sb3")] == []
    stable_baselines3.PPO("MlpPolicy", vec_env, **PPO_TINY)


def test_a_dict_with_a_16x16_image_key_names_the_key():
    space = "Box(0, 255, (16, 16, 3), uint8)"
    assert sb3_errors(FramesAndVector()) == [dict_message(space)]
    with raises_exactly(bridge.ConversionError, dict_message(space)):
        train("PPO", FramesAndVector, 16, **PPO_TINY)


def test_normalize_images_false_makes_any_3d_box_an_image_as_in_sb3():
    # a float [0, 1] "image" is flattened by default, but is a CNN input with normalize_images=False
    env = lambda: FramesAndVector((3, 16, 16), np.float32, 1.0)  # noqa: E731
    assert sb3_errors(env()) == []
    kwargs = {"normalize_images": False}
    assert sb3_errors(env(), policy_kwargs=kwargs) == [dict_message("Box(0.0, 1.0, (3, 16, 16), float32)")]
    with pytest.raises(RuntimeError, match=r"^Calculated padded input size per channel"):
        stable_baselines3.PPO("MultiInputPolicy", make_vec_env(env), policy_kwargs=kwargs, **PPO_TINY)


def test_a_custom_features_extractor_is_not_second_guessed():
    from stable_baselines3.common.torch_layers import FlattenExtractor

    assert sb3_errors(Frames(), policy_kwargs={"features_extractor_class": FlattenExtractor}) == []


def test_36x36_is_the_boundary_it_passes_and_trains():
    report = bridge.check(Frames((36, 36, 3)), targets=["sb3"])
    assert report.ok and [p.check for p in report.for_target("sb3")] == ["policy"]
    model = train("PPO", lambda: Frames((36, 36, 3)), 16, **PPO_TINY)
    assert type(model.policy.features_extractor).__name__ == "NatureCNN" and model.num_timesteps == 16


def test_35x35_is_refused():
    space = "Box(0, 255, (35, 35, 3), uint8)"
    assert sb3_errors(Frames((35, 35, 3))) == [box_message("35x35", space)]
    with raises_exactly(bridge.ConversionError, box_message("35x35", space)):
        train("PPO", lambda: Frames((35, 35, 3)), 16, **PPO_TINY)


# `train sb3 --env module:attr` reads the name as an id (train_command), so the child registers one
CLI = """import sys, bridge
from bridge.cli import main
bridge.register("envbridge-test/Frames16-v0", "test_sb3_images:Frames")
sys.exit(main(sys.argv[1:]))"""


def test_cli_train_sb3_prints_the_message_and_no_traceback(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [here, os.path.join(here, "..", ".."), os.environ.get("PYTHONPATH", "")]
    done = subprocess.run(
        [sys.executable, "-c", CLI, "train", "sb3", "--env", "envbridge-test/Frames16-v0"]
        + ["--steps", "16", "--logdir", str(tmp_path), "--no-progress"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)},
        timeout=120,
        cwd=tmp_path,  # outside the checkout, whose bridge/ would shadow the installed package
    )
    assert done.returncode == 2 and done.stdout == ""
    message = box_message("16x16", "Box(0, 255, (16, 16, 3), uint8)")
    assert done.stderr == f"envbridge train sb3: ConversionError: {message}\n"
