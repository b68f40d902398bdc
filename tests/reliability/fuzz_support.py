"""Fuzzing support: generated neutral space trees, the values to push through them, and one
uniform view of every export's lowering (``lower(space, role) -> Lowered`` or ConversionError).

A lowering here is exactly the code an export runs, reached through the adapter's own functions:
``encode`` is the way a value leaves (neutral -> target), ``decode`` the way it comes back
(target -> neutral), ``contains`` the TARGET runtime's own membership test.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from core.strategies import FLOAT_DTYPES, INT_DTYPES, boxes, shapes
from hypothesis import event
from hypothesis import strategies as st

from bridge import spaces as ns

ROLES = ("observation", "action")

# -- generated trees -----------------------------------------------------------------------------
# keys include the characters the exports join nested keys with ("." and "/") and the names
# DreamerV2 reserves, so collisions and reserved keys are generated, not only hand-written
_SPECIAL_KEYS = ["a", "b", "a.b", "a/b", "0", "1", "pos", "action", "reward", "log_x", "is_first"]
KEYS = st.one_of(
    st.sampled_from(_SPECIAL_KEYS), st.sampled_from(_SPECIAL_KEYS), st.text("abc_", min_size=1, max_size=3)
)


@st.composite
def uneven_boxes(draw: st.DrawFn) -> ns.Box:
    """Boxes whose bounds differ per element, with some infinite sides (float) or full ranges (int)."""
    shape = draw(st.sampled_from([(), (1,), (2,), (3,), (2, 2), (1, 3, 2)]))
    dtype = np.dtype(draw(st.sampled_from(FLOAT_DTYPES + INT_DTYPES + [np.uint64])))
    size = int(np.prod(shape))
    if dtype.kind == "f":
        low = draw(st.lists(st.sampled_from([-np.inf, -2.5, -1.0, 0.0, 1e-3]), min_size=size, max_size=size))
        width = draw(st.lists(st.sampled_from([np.inf, 0.25, 1.0, 100.0]), min_size=size, max_size=size))
        low_a, width_a = np.array(low, np.float64).reshape(shape), np.array(width, np.float64).reshape(shape)
        with np.errstate(invalid="ignore"):  # -inf + inf is NaN: such a side takes the width itself
            high_a = np.where(np.isinf(low_a), width_a, low_a + width_a)
        return ns.Box(low_a.astype(dtype), high_a.astype(dtype), shape, dtype)
    info = np.iinfo(dtype)
    choices = [int(info.min), 0, 1, -3 if info.min < 0 else 2]
    lows = draw(st.lists(st.sampled_from(choices), min_size=size, max_size=size))
    highs = [draw(st.sampled_from([lo, lo + 1, lo + 7, int(info.max)])) for lo in lows]
    return ns.Box(np.array(lows, dtype).reshape(shape), np.array(highs, dtype).reshape(shape), shape, dtype)


LEAVES = st.one_of(
    boxes(),
    uneven_boxes(),
    # image-like uint8 [0, 255] Boxes that are not Images
    st.builds(lambda s: ns.Box(0, 255, s, np.uint8), st.sampled_from([(2, 2, 3), (4, 4, 1), (3,)])),
    st.builds(ns.Discrete, st.integers(1, 9), st.integers(-7, 7)),
    st.builds(
        lambda nvec, start: ns.MultiDiscrete(np.array(nvec), np.resize(np.array(start), np.shape(nvec))),
        st.one_of(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.just([[2, 3], [4, 1]])),
        st.one_of(st.just([0, 0, 0, 0]), st.lists(st.integers(-3, 3), min_size=4, max_size=4)),
    ),
    st.builds(ns.MultiBinary, st.one_of(st.integers(1, 6), shapes)),
    st.builds(ns.Image, st.integers(1, 6), st.integers(1, 6), st.sampled_from([1, 2, 3, 4])),
)


def _nested(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.lists(children, min_size=1, max_size=3).map(ns.Tuple),
        st.dictionaries(KEYS, children, min_size=1, max_size=3).map(lambda d: ns.Dict(list(d.items()))),
        # keys that collide once nested keys are joined with "." or "/" (rare by chance alone)
        st.builds(
            lambda sep, a, b, c: ns.Dict([(f"a{sep}b", a), ("a", ns.Dict([("b", b)])), ("0", ns.Tuple([c]))]),
            st.sampled_from([".", "/"]),
            children,
            children,
            children,
        ),
    )


def trees(depth: int = 3) -> st.SearchStrategy:
    """Neutral space trees: a leaf, or Dict/Tuple nesting down to ``depth`` composite levels."""
    level = LEAVES
    for _ in range(depth):
        level = st.one_of(LEAVES, _nested(level))
    return level


# -- values --------------------------------------------------------------------------------------
def corner(space: ns.Space, high: bool, infinite: bool = False) -> Any:
    """The value with every leaf at its lowest (or highest) point: for an infinite bound the dtype's
    largest finite value, or (``infinite``) the infinity itself, which such a Box contains too."""
    if isinstance(space, ns.Dict):
        return {k: corner(s, high, infinite) for k, s in space.items()}
    if isinstance(space, ns.Tuple):
        return tuple(corner(s, high, infinite) for s in space)
    if isinstance(space, ns.Discrete):
        return np.int64(space.start + (space.n - 1 if high else 0))
    if isinstance(space, ns.MultiDiscrete):
        return (space.start + (space.nvec - 1 if high else 0)).astype(np.int64)
    if isinstance(space, ns.MultiBinary):
        return np.full(space.shape, int(high), np.int8)
    bound = space.high if high else space.low
    if space.dtype.kind == "f" and not infinite:
        extreme = np.finfo(space.dtype).max
        bound = np.clip(bound, -extreme, extreme)
    return np.array(bound, dtype=space.dtype).reshape(space.shape)


def values(space: ns.Space, seed: int, n: int = 2) -> List[Any]:
    """Four corners (finite extremes, then infinities) and ``n`` samples, each a value of ``space``."""
    rng = np.random.default_rng(seed)
    corners = [corner(space, high, infinite) for infinite in (False, True) for high in (False, True)]
    out = corners + [space.sample(rng) for _ in range(n)]
    for value in out:
        if not space.contains(value):  # the harness itself must only feed valid values
            raise AssertionError(f"harness value {value!r} is not in {space!r}")
    return out


def assert_identical(got: Any, want: Any, where: str = "value") -> None:
    """Same structure, same types, same dtype and shape, same bytes (NaN and -0.0 included)."""
    if isinstance(want, dict):
        assert type(got) is dict and list(got) == list(want), f"{where}: {got!r} != {want!r}"
        for k in want:
            assert_identical(got[k], want[k], f"{where}[{k!r}]")
        return
    if isinstance(want, tuple):
        assert type(got) is tuple and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_identical(g, w, f"{where}[{i}]")
        return
    numpy = (np.ndarray, np.generic)
    if not (isinstance(got, numpy) and isinstance(want, numpy) and got.shape == want.shape == ()):
        # a numpy scalar and a 0-d array are the same value (Box.sample gives the first for shape ())
        assert type(got) is type(want), f"{where}: type {type(got).__name__} != {type(want).__name__} ({got!r})"
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
    assert got.tobytes() == want.tobytes(), f"{where}: {got!r} != {want!r}"


# -- refusals ------------------------------------------------------------------------------------
HOUSE = re.compile(r"(?s)(?P<subject>.+?) must (?P<expectation>.+), got (?P<actual>.+)\. (?P<fix>[A-Z].+)\.")
PATH = re.compile(r"(?P<role>observation|action)(?P<index>(\[(?:'[^']*'|\d+)\])*)")


def assert_refusal(error: Exception, role: str, space: ns.Space) -> str:
    """A refusal reads as the house sentence, names a path inside ``space`` and says what to do."""
    text = str(error)
    found = HOUSE.fullmatch(text)
    assert found, f"refusal is not '<subject> must <expectation>, got <actual>. <fix>.': {text!r}"
    subject = found.group("subject")
    path = PATH.match(subject)
    assert path and path.group("role") == role, f"refusal subject {subject!r} names no {role} path"
    node = space
    for part in re.findall(r"\[('[^']*'|\d+)\]", path.group("index")):
        if isinstance(node, ns.Dict):
            key = part[1:-1] if part.startswith("'") else part
            assert key in node.keys(), f"refusal path {subject!r}: no key {key!r} in {node!r}"
            node = node[key]
        elif isinstance(node, ns.Tuple):
            assert part.isdigit() and int(part) < len(node), f"refusal path {subject!r}: no entry {part} in {node!r}"
            node = node[int(part)]
        else:
            # a path may end with an element index into an array leaf, e.g. action[0, 1] as [0, 1]
            assert node.shape, f"refusal path {subject!r} indexes into the scalar {node!r}"
            break
    assert len(found.group("fix")) > 3, f"refusal has no fix: {text!r}"
    return subject


class Lowered:
    """One export's way across for one space: encode out, decode back, the target's contains."""

    def __init__(
        self,
        encode: Callable[[Any], Any],
        decode: Callable[[Any], Any],
        contains: Callable[[Any], bool],
        target: Any,
        compare: Optional[Callable[[Any, Any], None]] = None,
    ) -> None:
        self.encode, self.decode, self.contains, self.target = encode, decode, contains, target
        self.compare = compare or assert_identical


def check_values(lowered: Lowered, space: ns.Space, seed: int) -> None:
    """Every value: encoded into the target space, decoded back bit-identical."""
    for value in values(space, seed):
        out = lowered.encode(value)
        assert lowered.contains(out), f"encoded {out!r} (from {value!r}) is not in the target space {lowered.target!r}"
        lowered.compare(lowered.decode(out), value)


Exports = Dict[str, Callable[[ns.Space, str], Lowered]]


def depth(space: ns.Space) -> int:
    """Composite levels above the deepest leaf."""
    if isinstance(space, ns.Dict):
        return 1 + max(depth(s) for s in space.spaces.values()) if len(space) else 1
    if isinstance(space, ns.Tuple):
        return 1 + max(depth(s) for s in space) if len(space) else 1
    return 0


def kinds(space: ns.Space) -> Tuple[str, ...]:
    """The leaf kinds of a tree (for statistics)."""
    if isinstance(space, ns.Dict):
        return tuple(k for s in space.spaces.values() for k in kinds(s))
    if isinstance(space, ns.Tuple):
        return tuple(k for s in space for k in kinds(s))
    return (type(space).__name__,)


# -- a tiny neutral env around any pair of spaces -------------------------------------------------
def tree_env(observation_space: ns.Space, action_space: ns.Space) -> Any:
    """A neutral env that observes ``next_obs`` (a sample by default) and records every action."""
    from bridge.env import Env

    class _TreeEnv(Env):
        open_envs: List[Any] = []

        def __init__(self) -> None:
            self.observation_space, self.action_space = observation_space, action_space
            self.next_obs: Any = None
            self.actions: List[Any] = []
            self.closed = False
            _TreeEnv.open_envs.append(self)

        def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
            super().reset(seed=seed)
            return self._obs(), {}

        def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
            self.actions.append(action)
            return self._obs(), 0.0, False, False, {}

        def _obs(self) -> Any:
            return self.observation_space.sample(self.np_random) if self.next_obs is None else self.next_obs

        def close(self) -> None:
            self.closed = True

    return _TreeEnv


OTHER = {"observation": ns.Box(-1.0, 1.0, (2,), np.float32), "action": ns.Discrete(2)}


def env_for(space: ns.Space, role: str) -> Any:
    """A TreeEnv instance with ``space`` in ``role`` and a plain space in the other role."""
    obs, act = (space, OTHER["action"]) if role == "observation" else (OTHER["observation"], space)
    return tree_env(obs, act)()


def _target_samples(target: Any, seed: int, n: int = 2) -> List[Any]:
    """Values the runtime's own sampler draws (kept only when the runtime itself says they are in)."""
    target.seed(seed)
    drawn = []
    for _ in range(n):
        try:
            drawn.append(target.sample())
        except (ValueError, OverflowError):  # e.g. Gymnasium's Box.sample over a full int64 range
            event("runtime sampler failed (not ours)")
    return [t for t in drawn if target.contains(t)]


# -- the exports, per era -----------------------------------------------------------------------
def gymnasium_export(layout: str) -> Callable[[ns.Space, str], Lowered]:
    """``to_gymnasium``'s lowering (observation and action) in one image layout."""
    from bridge.adapters.gymnasium.lowering import lower

    def lowered(space: ns.Space, role: str) -> Lowered:
        low = lower(space, path=role, options={"image_layout": layout})
        # the export's own per-step action check must accept every encoded valid action too
        check = low.invalid if role == "action" else (lambda y, path: None)
        out = Lowered(low.encode, low.decode, lambda y: low.space.contains(y) and check(y, role) is None, low.space)
        out.batch = (low.encode_batch, low.decode_batch)  # type: ignore[attr-defined]
        out.runtime_samples = lambda seed: _target_samples(low.space, seed)  # type: ignore[attr-defined]
        return out

    return lowered


F32_MAX = float(np.finfo(np.float32).max)


def presented_as_float32(space: ns.Space, value: Any) -> Any:
    """What to_sb3 announces for observations: float64 Box leaves rounded to float32 (a finite value
    saturated at float32's largest finite value, then clipped to the bounds); the rest unchanged."""
    if isinstance(space, ns.Dict):
        return {k: presented_as_float32(s, value[k]) for k, s in space.items()}
    if isinstance(space, ns.Tuple):
        return tuple(presented_as_float32(s, v) for s, v in zip(space, value))
    if isinstance(space, ns.Box) and space.dtype == np.float64:
        # finite values saturate at float32's largest finite value; infinities stay infinite
        saturated = np.where(np.isfinite(value), np.clip(value, -F32_MAX, F32_MAX), value)
        rounded = saturated.astype(np.float32).astype(np.float64)
        return np.asarray(np.clip(rounded, space.low, space.high))
    return value


def sb3_export(float64_as_float32: bool) -> Callable[[ns.Space, str], Lowered]:
    """``to_sb3`` on a tiny env: SB3's refusals, then the Gymnasium lowering SB3 trains through.

    ``float64_as_float32=True`` is to_sb3's default: float64 observations are presented as float32,
    an announced rounding (the "sb3" profile says so); values must come back as that rounding, and
    a finite value must stay finite. ``False`` must be bit-identical like every other export.
    """

    def lowered(space: ns.Space, role: str) -> Lowered:
        from bridge.adapters.sb3 import policy_for, to_sb3
        from stable_baselines3.common.preprocessing import (
            check_for_nested_spaces,
            get_action_dim,
            get_obs_shape,
            is_image_space,
        )

        export = to_sb3(env_for(space, role), float64_as_float32=float64_as_float32)
        low = export.observation_lowering if role == "observation" else export.action_lowering
        # SB3's own space handling must take what the export hands it
        check_for_nested_spaces(export.observation_space)
        get_obs_shape(export.observation_space)
        get_action_dim(export.action_space)
        if role == "observation":
            exported = export.observation_space
            # a neutral Image is a CNN input; so is any 3-D uint8 [0, 255] Box by SB3's own rule
            image = isinstance(space, ns.Image) or is_image_space(exported, check_channels=False)
            composite = isinstance(space, (ns.Dict, ns.Tuple))
            want = "MultiInputPolicy" if composite else "CnnPolicy" if image else "MlpPolicy"
            assert policy_for(exported) == want, f"policy_for({exported!r}) = {policy_for(exported)!r}, want {want!r}"
        check = low.invalid if role == "action" else (lambda y, path: None)
        compare = assert_identical
        if float64_as_float32 and role == "observation":

            def compare(got: Any, want: Any) -> None:
                assert_identical(got, presented_as_float32(space, want))

        contains = lambda y: low.space.contains(y) and check(y, role) is None  # noqa: E731
        out = Lowered(low.encode, low.decode, contains, low.space, compare)
        out.runtime_samples = lambda seed: _target_samples(low.space, seed)  # type: ignore[attr-defined]
        return out

    return lowered


def gym_export(space: ns.Space, role: str) -> Lowered:
    """``to_gym``'s lowering (gym 0.23): observations encoded, actions checked and decoded."""
    from bridge.adapters.gym.lowering import lower

    low = lower(space, path=role, options={})
    check = low.invalid if role == "action" else (lambda y, path: None)
    out = Lowered(low.encode, low.decode, lambda y: low.space.contains(y) and check(y, role) is None, low.space)
    out.runtime_samples = lambda seed: _target_samples(low.space, seed)  # type: ignore[attr-defined]
    return out


def dreamerv2_export(space: ns.Space, role: str) -> Lowered:
    """The Dreamer-ready lowering (``bridge.adapters.dreamerv2``), default size (64, 64): lossless but
    for the announced float32 presentation of float64 observations (as to_sb3's)."""
    from bridge.adapters.dreamerv2.actions import ActionLowering
    from bridge.adapters.dreamerv2.lowering import ObservationLowering

    low = ObservationLowering(space) if role == "observation" else ActionLowering(space)
    compare = assert_identical
    if role == "observation":  # the one float policy: float64 observations presented as float32

        def compare(got: Any, want: Any) -> None:
            assert_identical(got, presented_as_float32(space, want))

    out = Lowered(low.encode, low.decode, low.space.contains, low.space, compare)
    if role == "action":
        out.runtime_samples = lambda seed: _target_samples(low.space, seed)  # type: ignore[attr-defined]
    return out


def matlab_export(space: ns.Space, role: str) -> Lowered:
    """The MATLAB export's lowering (``to_matlab``): neutral values <-> the MATLAB values of the specs
    ``getObservationInfo`` / ``getActionInfo`` describe, through the export's own port."""
    from bridge.adapters.matlab.export import to_matlab

    env = env_for(space, role)
    export = to_matlab(env)
    low = export.observation_lowering if role == "observation" else export.action_lowering
    if role == "observation":

        def encode(x: Any) -> Any:  # neutral -> the MATLAB value reset() hands a MATLAB policy
            env.next_obs = x
            return export.reset()

        return Lowered(encode, low.decode, low.contains, low.space)

    export.reset()

    def decode(y: Any) -> Any:
        export.step(y)  # the port decodes the MATLAB value and hands it to the neutral env
        return env.actions[-1]

    out = Lowered(low.encode, decode, low.contains, low.space)
    # MATLAB's side samples from the facade space of the specs (element indices, [1 1] scalars)
    out.runtime_samples = lambda seed: [  # type: ignore[attr-defined]
        low.encode(space.sample(np.random.default_rng(seed)))
    ]
    return out


def era_exports(era: str) -> Exports:
    """The exports that run in ``era`` ("modern": Gymnasium, SB3, MATLAB; "legacy": gym, DreamerV2, MATLAB)."""
    if era == "modern":
        return {
            "gymnasium-CHW": gymnasium_export("CHW"),
            "gymnasium-HWC": gymnasium_export("HWC"),
            "sb3": sb3_export(True),
            "sb3-float64": sb3_export(False),
            "matlab": matlab_export,
        }
    return {"gym": gym_export, "dreamerv2": dreamerv2_export, "matlab": matlab_export}
