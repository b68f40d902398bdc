"""The "dreamerv2" conformance view: neutral tapes through DreamerV2's own chain, decoded back by
the export's own lowerings (images resized by ResizeImage included).

Discrete actions go in as DreamerV2 one-hots through ``OneHotAction`` (exact). Continuous actions
skip ``NormalizeAction``: its float32 rescale of [-1, 1] is lossy by design (``x + 1`` rounds away
small values), so no [-1, 1] input reproduces every recorded float bit for bit. Its mapping is
tested on its own (``check``: -1, 0, 1 land on the bounds; the differential test on a 1/8 grid).
Everything else (GymWrapper, ResizeImage, TimeLimit, the Dreamer-ready lowering) is on the path.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from bridge.adapters.dreamerv2.export import DreamerReadyEnv
from bridge.adapters.dreamerv2.loader import load_dreamerv2
from bridge.adapters.dreamerv2.quiet import built_quietly

from bridge import spaces
from bridge.conformance.replay import StepOut, View
from bridge.env import Env
from bridge.errors import ConversionError, error


class DreamerV2View(View):
    """Drive the chain with neutral actions; terminated = is_terminal, truncated = is_last only."""

    name = "dreamerv2"
    both_flags = False

    def __init__(self, env: Env) -> None:
        common = load_dreamerv2().common
        _refuse_float64_actions(env.action_space)
        self.ready = DreamerReadyEnv(env)
        chain = built_quietly(common.ResizeImage, common.GymWrapper(self.ready))
        self.discrete = self.ready.action_lowering.discrete
        if self.discrete:
            chain = common.OneHotAction(chain)
            self._eye = np.eye(self.ready.action_space.n, dtype=np.float32)
        self.chain = common.TimeLimit(chain, 0)

    def expected(self, obs: Any) -> Any:
        return self.ready.observation_lowering.expected(obs)

    def reset(self, seed: Optional[int]) -> Any:
        self.ready.seed(seed)
        return self.ready.decode_observation(self.chain.reset())

    def step(self, action: Any) -> StepOut:
        inner = self.ready.encode_action(action)
        obs = self.chain.step({"action": self._eye[inner] if self.discrete else inner})
        return (
            self.ready.decode_observation(obs),
            obs["reward"],
            obs["is_terminal"],
            obs["is_last"] and not obs["is_terminal"],
        )

    def clone_state(self) -> Any:
        return self.ready.clone_state()

    def restore_state(self, snapshot: Any) -> None:
        self.ready.restore_state(snapshot)

    def close(self) -> None:
        self.ready.close()


def _refuse_float64_actions(space: spaces.Space) -> None:
    """A tape of float64 actions cannot pass DreamerV2's float32 action space bit for bit."""
    inner = space["action"] if isinstance(space, spaces.Dict) and list(space.keys()) == ["action"] else space
    if isinstance(inner, spaces.Box) and inner.dtype.itemsize > 4:
        raise error(
            ConversionError,
            "the dreamerv2 view's action space",
            "be a Box of float32 or narrower to replay a tape bit for bit (DreamerV2's actions are float32)",
            repr(space),
            "Replay this env's tapes through the other views; DreamerV2 still trains on the env (to_dreamerv2 "
            "decodes every float32 action it sends exactly into the float64 action space)",
        )
