"""The Gymnasium vector export against Gymnasium's own SyncVectorEnv over the same exported envs:
identical observations, rewards, flags and infos (dtypes included) in every autoreset mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support import require

import bridge
from bridge import spaces
from bridge.errors import BatchError, ContractError
from bridge.examples import EXAMPLE_IDS
from bridge.registry import load_entry_point

gymnasium = require("gymnasium")

from bridge.adapters.gymnasium import to_gymnasium, to_gymnasium_vector  # noqa: E402

MODES = {"next-step": "NextStep", "same-step": "SameStep", "disabled": "Disabled"}


def same(a: Any, b: Any, path: str = "") -> None:
    """``a == b`` leaf by leaf after flattening dicts, tuples and object arrays; types and dtypes too."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), (path, sorted(a), b)
        for key in a:
            same(a[key], b[key], f"{path}/{key}")
    elif isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and (a.dtype, a.shape) == (b.dtype, b.shape), (path, a, b)
        if a.dtype.kind == "O":
            for i, (x, y) in enumerate(zip(a.ravel(), b.ravel())):
                same(x, y, f"{path}[{i}]")
        else:
            assert np.array_equal(a, b), (path, a, b)
    else:
        assert type(a) is type(b) and (a is b or a == b), (path, a, b)


class Chatty(bridge.Env):
    """Infos of every kind: strings of different widths per env, arrays, nested dicts, None, objects."""

    observation_space = spaces.Dict({"pos": spaces.Box(-10.0, 10.0, (2,)), "n": spaces.Discrete(5)})
    action_space = spaces.Discrete(3)

    def __init__(self, width: int = 1) -> None:
        self.width, self.t = width, 0

    def _info(self) -> dict:
        info = {
            "name": "ab" * self.width,  # env 0 "ab", env 2 "ababab": no truncation to env 0's width
            "arr": np.arange(3, dtype=np.float32) + self.t,
            "nested": {"depth": self.t, "label": "x" * (self.t + 1), "deeper": {"ok": True}},
            "nothing": None,
            "obj": (self.t, "tuple"),
            "step": self.t,
        }
        if self.t % 2:
            info["odd_only"] = 1.5
        return info

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.t = 0
        return {"pos": np.zeros(2, dtype=np.float32), "n": 0}, {"reset_width": "r" * self.width}

    def step(self, action: Any) -> Any:
        self.t += 1
        obs = {"pos": np.full(2, self.t, dtype=np.float32), "n": self.t % 5}
        return obs, float(action), self.t >= 2 + self.width, False, self._info()


def _compare(make_one: Any, mode: str, n: int = 3, steps: int = 14) -> None:
    fns = [lambda i=i: make_one(i) for i in range(n)]
    ref = gymnasium.vector.SyncVectorEnv([lambda f=f: to_gymnasium(f()) for f in fns], autoreset_mode=MODES[mode])
    ours = to_gymnasium_vector(bridge.SyncVectorEnv(fns), autoreset_mode=mode)
    try:
        assert ours.metadata["autoreset_mode"] == ref.metadata["autoreset_mode"]
        same(ref.reset(seed=42), ours.reset(seed=42), "reset")
        assert ours.np_random_seed == tuple(ref.np_random_seed) == (42, 43, 44)[:n]
        ref.action_space.seed(1)
        for t in range(steps):
            actions = ref.action_space.sample()
            want = ref.step(actions)
            same(want, ours.step(actions), f"step {t}")
            ended = want[2] | want[3]
            if mode == "disabled" and ended.any():
                same(ref.reset(options={"reset_mask": ended}), ours.reset(options={"reset_mask": ended}), f"mask {t}")
    finally:
        ref.close()
        ours.close()


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("env_id", list(EXAMPLE_IDS))
def test_every_example_env_gives_gymnasiums_own_vector_layout(env_id: str, mode: str) -> None:
    cls = load_entry_point(EXAMPLE_IDS[env_id][0])
    _compare(lambda i: bridge.TimeLimit(cls(), 6), mode)  # a short cap: ends inside the run


@pytest.mark.parametrize("mode", list(MODES))
def test_infos_of_every_kind_merge_exactly_as_gymnasium_merges_them(mode: str) -> None:
    _compare(lambda i: Chatty(width=i + 1), mode)


def test_same_step_final_keys_appear_only_when_an_env_ended() -> None:
    ours = to_gymnasium_vector(
        bridge.SyncVectorEnv([lambda i=i: Chatty(width=i + 1) for i in range(3)]), autoreset_mode="same-step"
    )
    ours.reset(seed=0)
    for _ in range(2):
        _, _, _, _, infos = ours.step(np.zeros(3, dtype=np.int64))
        assert "final_obs" not in infos and "_final_info" not in infos
    _, _, terminated, _, infos = ours.step(np.zeros(3, dtype=np.int64))  # env 0's episode is 3 steps long
    assert terminated.tolist() == [True, False, False]
    assert infos["_final_obs"].tolist() == [True, False, False] == infos["_final_info"].tolist()
    assert infos["final_obs"][0]["pos"].tolist() == [3.0, 3.0] and infos["final_obs"][1] is None
    assert infos["final_info"]["name"].tolist() == ["ab", None, None]
    assert infos["reset_width"].tolist() == ["r", None, None] and infos["name"].tolist() == [None, "abab", "ababab"]
    ours.close()


def test_strings_keep_their_width_in_every_path() -> None:
    envs = bridge.SyncVectorEnv([lambda i=i: Chatty(width=i + 1) for i in range(3)], autoreset_mode="same-step")
    envs.reset(seed=0)
    envs.step(np.zeros(3, dtype=np.int64))
    envs.step(np.zeros(3, dtype=np.int64))
    _, _, _, _, infos = envs.step(np.zeros(3, dtype=np.int64))  # env 0 ended: its reset info merged in
    assert infos["reset_width"].tolist() == ["r", None, None]
    assert infos["final_info"]["name"].tolist() == ["ab", None, None]
    assert infos["name"].tolist() == [None, "abab", "ababab"]
    envs.close()


def test_a_value_that_does_not_fit_its_column_keeps_its_type_in_an_object_column() -> None:
    from bridge.vector.infos import merge_env_infos

    merged = merge_env_infos([{"x": 1}, {"x": 1.5}, {"x": np.zeros(2)}], 3)
    assert merged["x"].dtype == object and merged["x"][:2].tolist() == [1, 1.5]
    assert merged["x"][2].tolist() == [0.0, 0.0] and merged["_x"].tolist() == [True, True, True]
    merged = merge_env_infos([{"s": "ab"}, None, {"s": "abcdef"}], 3)
    assert merged["s"].tolist() == ["ab", None, "abcdef"] and merged["_s"].tolist() == [True, False, True]


def test_a_dict_where_another_env_reported_a_value_is_refused() -> None:
    from bridge.vector.infos import merge_env_infos

    with pytest.raises(ContractError) as caught:
        merge_env_infos([{"x": 1}, {"x": {"y": 2}}], 2)
    assert str(caught.value) == (
        "env 1 info['x'] must be a non-dict like the other envs' (nested infos merge key by key), got a dict. "
        "Report the same kind of value under a key in every env."
    )


def test_a_wrong_batch_size_is_also_a_value_error() -> None:
    ours = to_gymnasium_vector(bridge.SyncVectorEnv([Chatty] * 3))
    ours.reset(seed=0)
    with pytest.raises(ValueError) as caught:
        ours.step(np.zeros(2, dtype=np.int64))
    assert isinstance(caught.value, BatchError) and isinstance(caught.value, ContractError)
    assert str(caught.value) == (
        "actions must hold one action per env (3), got 2 actions. Pass one action per env, e.g. env.action_space.sample()."
    )
    with pytest.raises(ValueError) as caught:
        ours.set_attr("width", [1, 2])
    assert str(caught.value) == (
        "set_attr('width') values must hold one value per env (3), got 2 values. "
        "Pass one value per env, or a single value (not a list) for all."
    )
    ours.close()


def test_a_torch_tensor_of_actions_is_named_as_not_a_numpy_array_like_the_single_export() -> None:
    torch = require("torch")
    ours = to_gymnasium_vector(bridge.SyncVectorEnv([Chatty] * 2))
    single = to_gymnasium(Chatty())
    ours.reset(seed=0), single.reset(seed=0)
    with pytest.raises(ContractError) as caught:  # it said "must hold one action per env (2), got tensor([0, 1])"
        ours.step(torch.tensor([0, 1]))
    assert str(caught.value) == (
        "actions must be a numpy array of one action per env (2), got tensor([0, 1]). "
        "Pass np.asarray(actions) (a torch tensor: actions.cpu().numpy())."
    )
    with pytest.raises(ContractError) as caught:
        single.step(torch.tensor(0))
    assert str(caught.value).startswith("action must be a numpy array of dtype int64 and shape (), got tensor(0).")
    ours.step(np.array([0, 1])), single.step(0)  # nothing moved: both still take their next step
    ours.close(), single.close()


def test_call_get_attr_and_set_attr_reach_the_sub_envs_like_gymnasiums() -> None:
    fns = [lambda i=i: Chatty(width=i + 1) for i in range(3)]
    ref = gymnasium.vector.SyncVectorEnv([lambda f=f: to_gymnasium(f()) for f in fns])
    ours = to_gymnasium_vector(bridge.SyncVectorEnv(fns))
    ref.reset(seed=0), ours.reset(seed=0)
    assert ours.get_attr("width") == ref.get_attr("width") == (1, 2, 3)
    ours.set_attr("width", [4, 5, 6])
    ref.set_attr("width", [4, 5, 6])
    assert ours.get_attr("width") == ref.get_attr("width") == (4, 5, 6)
    ours.set_attr("width", 7)
    assert ours.call("_info")[2]["name"] == "ab" * 7
    ref.close(), ours.close()


def test_disabled_mode_refuses_a_step_of_an_ended_env_until_it_is_reset() -> None:
    ours = to_gymnasium_vector(
        bridge.SyncVectorEnv([lambda i=i: Chatty(width=i + 1) for i in range(2)]), autoreset_mode="disabled"
    )
    ours.reset(seed=0)
    ours.step(np.zeros(2, dtype=np.int64))
    ours.step(np.zeros(2, dtype=np.int64))
    _, _, terminated, _, _ = ours.step(np.zeros(2, dtype=np.int64))
    assert terminated.tolist() == [True, False]
    with pytest.raises(ContractError) as caught:
        ours.step(np.zeros(2, dtype=np.int64))
    assert str(caught.value) == (
        "SyncVectorEnv step() must step only sub-envs whose episode runs (autoreset_mode='disabled'), "
        "got a step of sub-env(s) [0], whose episode ended. "
        "Reset them first: reset(options={'reset_mask': terminated | truncated})."
    )
    obs, infos = ours.reset(options={"reset_mask": terminated})
    assert obs["n"].tolist() == [0, 3] and infos["reset_width"].tolist() == ["r", None]
    ours.step(np.zeros(2, dtype=np.int64))  # env 1 ends now; env 0 runs its new episode
    ours.close()
