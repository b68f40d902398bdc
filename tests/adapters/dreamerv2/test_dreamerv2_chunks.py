"""api.train runs whole chunks of eval_every steps after the prefill: derived values fit the run,
a value the caller set that does not fit is refused with one that does. Whole messages."""

from __future__ import annotations

import pytest
from support import raises_exactly, require

require("dreamerv2")

from bridge.adapters.dreamerv2 import dreamer_config, to_dreamer_ready  # noqa: E402

from bridge.errors import SpecError  # noqa: E402
from bridge.examples import GridWorld  # noqa: E402


@pytest.fixture(scope="module")
def ready():
    return to_dreamer_ready(GridWorld())


@pytest.mark.parametrize(
    "steps, prefill, eval_every",
    [(300, 100, 200), (4000, 100, 3900), (1_000_000, 100, 99_990), (307, 100, 207)],
)
def test_derived_chunks_end_at_steps(ready, steps, prefill, eval_every):
    cfg = dreamer_config(ready, {"steps": steps})
    assert (cfg.prefill, cfg.eval_every) == (prefill, eval_every)
    span = steps - prefill
    assert span % cfg.eval_every == 0 and cfg.train_every <= span // 2 and cfg.log_every <= span // 3


def test_an_eval_every_that_overruns_is_refused_with_a_divisor(ready):
    # the run: steps 4000 ran to 60k because eval_every was larger than the run
    with raises_exactly(
        SpecError,
        "DreamerV2 config 'eval_every' must split the 3500 steps after the prefill into whole chunks (api.train "
        "runs eval_every steps at a time, so this run would end at step 10500, not 4000), got eval_every=10000 "
        "with steps=4000, prefill=500. Pass eval_every=3500, or leave eval_every to the preset.",
    ):
        dreamer_config(ready, {"steps": 4000, "prefill": 500, "eval_every": 10_000})


def test_an_eval_every_without_a_whole_divisor_suggests_the_steps(ready):
    with raises_exactly(
        SpecError,
        "DreamerV2 config 'eval_every' must split the 1201 steps after the prefill into whole chunks (api.train "
        "runs eval_every steps at a time, so this run would end at step 1700, not 1301), got eval_every=400 "
        "with steps=1301, prefill=100. Pass steps=1700, or leave eval_every to the preset.",
    ):
        dreamer_config(ready, {"steps": 1301, "prefill": 100, "eval_every": 400})


def test_a_fitting_eval_every_is_kept(ready):
    assert dreamer_config(ready, {"steps": 4100, "prefill": 100, "eval_every": 1000}).eval_every == 1000


@pytest.mark.parametrize(
    "key, what",
    [("train_every", "train the agent"), ("log_every", "print the losses")],
)
def test_a_train_or_log_interval_past_the_run_is_refused(ready, key, what):
    with raises_exactly(
        SpecError,
        f"DreamerV2 config '{key}' must be less than the 200 steps after the prefill (else api.train would "
        f"{what} only once, at the first step), got {key}=500 with steps=300, prefill=100. Pass {key}=66, or "
        f"leave {key} to the preset.",
    ):
        dreamer_config(ready, {"steps": 300, key: 500})
