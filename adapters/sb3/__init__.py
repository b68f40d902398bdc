"""Stable-Baselines3 2.x on neutral envs (modern era): ``to_sb3``, ``make_vec_env``, ``train``.

Inside: ``export`` (``to_sb3`` over the Gymnasium export, ``make_vec_env``), ``vec`` (a batched
VectorEnv as one SB3 VecEnv), ``subproc`` (SB3's SubprocVecEnv with supervised workers),
``lowering`` (what SB3 can train on, its policy, the float policy), ``profile`` (the "sb3" check),
``view`` (its conformance view), ``train`` (``envbridge demo`` and ``envbridge train sb3``).
"""

from __future__ import annotations

from bridge.adapters.sb3.export import make_vec_env, to_sb3
from bridge.adapters.sb3.lowering import policy_for, sb3_refusal
from bridge.adapters.sb3.train import train

__all__ = ["to_sb3", "make_vec_env", "policy_for", "sb3_refusal", "train"]
