"""Where a DreamerV2 config comes from: presets, YAML files and pairs, the derived prefill."""

from __future__ import annotations

import pytest
from support import raises_exactly, require

require("gym")
require("tensorflow")
require("dreamerv2")

from bridge.adapters.dreamerv2 import dreamer_config, load_dreamerv2, to_dreamer_ready, train  # noqa: E402
from bridge.adapters.dreamerv2.presets import PRESETS  # noqa: E402
from bridge.adapters.dreamerv2.schema import check_values  # noqa: E402

import bridge  # noqa: E402
from bridge.cli import main  # noqa: E402
from bridge.config import read as read_config  # noqa: E402
from bridge.errors import SpecError  # noqa: E402

UNKNOWN = (
    "DreamerV2 preset must be one of 'tiny', 'small', 'control', 'default', got 'huge'. "
    "Pass preset='tiny' (CPU-sized) or preset='default' (DreamerV2's own sizes)."
)


@pytest.fixture(scope="module")
def ready():
    return to_dreamer_ready(bridge.make("envbridge/GridWorld-v0"))


def _sizes(cfg):
    return (cfg.rssm.deter, cfg.rssm.hidden, cfg.dataset.batch, cfg.dataset.length, cfg.actor.units)


def test_tiny_is_the_default_and_the_callers_keys_override_it(ready):
    cfg = dreamer_config(ready, {"dataset": {"batch": 2}, "actor.units": 16})
    assert _sizes(cfg) == (32, 32, 2, 8, 16)
    assert _sizes(dreamer_config(ready)) == _sizes(dreamer_config(ready, preset="tiny")) == (32, 32, 4, 8, 32)


def test_small_and_default_presets(ready):
    assert _sizes(dreamer_config(ready, preset="small")) == (200, 200, 8, 32, 128)
    defaults = load_dreamerv2().defaults
    cfg = dreamer_config(ready, preset="default")
    assert _sizes(cfg) == _sizes(defaults) == (1024, 1024, 16, 50, 400)
    assert (cfg.prefill, cfg.train_every, cfg.log_every) == (defaults.prefill, 5, 1e4)  # steps 1e8: nothing capped
    assert PRESETS["default"] == {}


def test_control_preset_sizes_and_learning_settings(ready):
    cfg = dreamer_config(ready, preset="control", steps=10000)
    assert _sizes(cfg) == (64, 64, 16, 16, 64)
    assert (cfg.clip_rewards, cfg.kl.free, cfg.actor_ent, cfg.replay.prioritize_ends) == ("identity", 1.0, 1e-4, False)
    assert (cfg.model_opt.lr, cfg.actor_opt.lr, cfg.critic_opt.lr) == (3e-4, 1e-4, 1e-4)
    assert (cfg.prefill, cfg.train_every, cfg.log_every, cfg.eval_every) == (1000, 5, 1000, 9000)


def test_a_config_object_gets_no_preset_unless_one_is_named(ready):
    own = load_dreamerv2().defaults.update({"rssm.deter": 64})
    assert dreamer_config(ready, own).rssm.deter == 64
    assert dreamer_config(ready, own, preset="tiny").rssm.deter == 32


def test_an_unknown_preset_lists_the_known_ones(ready, capsys, tmp_path):
    with raises_exactly(SpecError, UNKNOWN):
        dreamer_config(ready, preset="huge")
    with raises_exactly(SpecError, UNKNOWN):
        train("envbridge/GridWorld-v0", preset="huge", logdir=str(tmp_path / "never"))
    assert main(["train", "dreamerv2", "--preset", "huge", "--logdir", str(tmp_path / "never")]) == 2
    assert capsys.readouterr().err == f"envbridge train dreamerv2: SpecError: {UNKNOWN}\n"


def test_default_prefill_is_at_most_half_the_steps(ready):
    # the README's train(env, {"logdir": ..., "steps": 2000}) and a bare `envbridge train dreamerv2` (1000 steps)
    assert dreamer_config(ready, {"steps": 2000}).prefill == 100
    assert dreamer_config(ready, {"steps": 1000}).prefill == 100
    # GridWorld's episodes end by step 100: the random prefill runs one whole episode (api.train waits for it)
    assert dreamer_config(ready, {"steps": 150}).prefill == 100
    assert dreamer_config(ready, {"steps": 150}).eval_every == 50
    cfg = dreamer_config(ready, {"steps": 2000}, preset="default")  # DreamerV2's own prefill is 10000
    assert (cfg.prefill, cfg.log_every, cfg.eval_every) == (1000, 333, 1000)  # fitted to the 1000 steps after it
    assert dreamer_config(ready, {"steps": 2000, "prefill": 5000}).prefill == 5000  # the caller's key stays


def test_config_args_are_read_by_the_one_config_reader_in_order(tmp_path):
    run = tmp_path / "run.yaml"
    run.write_text("dataset:\n  batch: 8\n  length: 16\nprefill: 50\nencoder.mlp_layers: [16, 16]\n")
    got = read_config(["prefill=20", str(run), "dataset.batch=2"])
    assert got == {"prefill": 50, "dataset.batch": 2, "dataset.length": 16, "encoder.mlp_layers": [16, 16]}


def test_every_preset_value_passes_the_declared_schema():
    api = load_dreamerv2()
    for layer in PRESETS.values():
        flat = api.defaults._flatten(layer)
        assert check_values(api.defaults, flat) == {k: tuple(v) if isinstance(v, list) else v for k, v in flat.items()}


# (--config value or Python value, key, the whole message): the family, not one instance
BAD_VALUES = [
    ("steps=.nan", "steps", "DreamerV2 config steps must be an int >= 1, got nan. Pass a whole number in range."),
    ("steps=-5", "steps", "DreamerV2 config steps must be an int >= 1, got -5. Pass a whole number in range."),
    ("steps=1e5.5", "steps", "DreamerV2 config steps must be an int >= 1, got '1e5.5'. Pass a whole number in range."),
    (
        "prefill=12.5",
        "prefill",
        "DreamerV2 config prefill must be an int >= 0, got 12.5. Pass a whole number in range.",
    ),
    (
        "jit=no",
        "jit",
        "DreamerV2 config jit must be true or false, got 'no'. Write true or false (yes/no/on/off are not read).",
    ),
    (
        "jit=off",
        "jit",
        "DreamerV2 config jit must be true or false, got 'off'. Write true or false (yes/no/on/off are not read).",
    ),
    (
        "jit=1",
        "jit",
        "DreamerV2 config jit must be true or false, got 1. Write true or false (yes/no/on/off are not read).",
    ),
    (
        "replay.prioritize_ends=yes",
        "replay.prioritize_ends",
        "DreamerV2 config replay.prioritize_ends must be true or false, got 'yes'. "
        "Write true or false (yes/no/on/off are not read).",
    ),
    (
        "dataset.batch=0",
        "dataset.batch",
        "DreamerV2 config dataset.batch must be an int >= 1, got 0. Pass a whole number in range.",
    ),
    (
        "discount=1.5",
        "discount",
        "DreamerV2 config discount must be a finite number in [0.0, 1.0], got 1.5. Pass a number in range.",
    ),
    (
        "discount=.nan",
        "discount",
        "DreamerV2 config discount must be a finite number in [0.0, 1.0], got nan. Pass a number in range.",
    ),
    (
        "model_opt.lr=0",
        "model_opt.lr",
        "DreamerV2 config model_opt.lr must be a finite number in (0.0, inf], got 0. Pass a number in range.",
    ),
    (
        "actor_ent=.inf",
        "actor_ent",
        "DreamerV2 config actor_ent must be a finite number in [0.0, inf], got inf. Pass a number in range.",
    ),
    ("precision=8", "precision", "DreamerV2 config precision must be one of [16, 32], got 8. Pick one."),
    (
        "clip_rewards=clip",
        "clip_rewards",
        "DreamerV2 config clip_rewards must be one of ['identity', 'sign', 'tanh'], got 'clip'. Pick one.",
    ),
    ("task=5", "task", "DreamerV2 config task must be a string, got 5. Quote the value."),
    (
        "encoder.mlp_layers=[32, 0]",
        "encoder.mlp_layers",
        "DreamerV2 config encoder.mlp_layers[1] must be an int >= 1, got 0. Pass a whole number in range.",
    ),
    (
        "encoder.mlp_layers=32",
        "encoder.mlp_layers",
        "DreamerV2 config encoder.mlp_layers must be a list of at least 0 values, got 32. Write e.g. [32, 32].",
    ),
    (
        ".*\\.lr=-1",
        ".*\\.lr",
        "DreamerV2 config .*\\.lr must be a finite number in (0.0, inf], got -1. Pass a number in range.",
    ),
]


@pytest.mark.parametrize("pair, key, text", BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_bad_config_values_are_refused_before_anything_runs(ready, tmp_path, pair, key, text):
    given = read_config([pair])
    with raises_exactly(SpecError, text):
        dreamer_config(ready, given)
    with raises_exactly(SpecError, text):  # the same from Python keywords (no nested key here)
        dreamer_config(ready, {key: given[key]})
    logdir = tmp_path / "run"
    code = main(
        [
            "train",
            "dreamerv2",
            "--env",
            "envbridge/GridWorld-v0",
            "--steps",
            "300",
            "--logdir",
            str(logdir),
            "--config",
            pair,
        ]
    )
    assert code == 2 and not logdir.exists()  # refused before the logdir is made


def test_yaml_aliases_and_flow_mappings_are_refused_without_expanding(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b]\n")
    with raises_exactly(
        SpecError,
        f"--config file {bomb} a must be a plain YAML scalar or a flow list, got '&a [1, 1, 1, 1, 1, 1, 1, 1, 1]'. "
        "Write the value out (anchors, aliases, tags, flow mappings and block strings are not read).",
    ):
        read_config([str(bomb)])
    flow = tmp_path / "flow.yaml"
    flow.write_text("dataset: {batch: 4}\n")
    with raises_exactly(
        SpecError,
        f"--config file {flow} dataset must be a plain YAML scalar or a flow list, got '{{batch: 4}}'. "
        "Write the value out (anchors, aliases, tags, flow mappings and block strings are not read).",
    ):
        read_config([str(flow)])


@pytest.mark.parametrize(
    "text, line, got",
    [
        ("prefill: 10\nprefill: 20\n", 2, "'prefill' again (line 1 sets it too)"),
        ("dataset:\n  batch: 8\nprefill: 5\ndataset:\n  length: 16\n", 4, "'dataset' again (line 1 sets it too)"),
        ("dataset:\n  batch: 8\ndataset.batch: 4\n", 3, "'dataset.batch' again (line 2 sets it too)"),
        ("dataset: 3\ndataset:\n  batch: 4\n", 2, "'dataset' again (line 1 sets it too)"),
        ("rssm:\n  deter: 64\n  deter: 32\n", 3, "'rssm.deter' again (line 2 sets it too)"),
    ],
    ids=["scalar-twice", "mapping-opened-twice", "dotted-and-nested", "scalar-then-mapping", "nested-twice"],
)
def test_a_key_set_twice_in_one_file_is_refused(tmp_path, text, line, got):
    # YAML keys are unique; keeping either value would be a guess (it kept the last: prefill 20)
    run = tmp_path / "run.yaml"
    run.write_text(text)
    with raises_exactly(
        SpecError, f"--config file {run} line {line} must set each key once, got {got}. Keep one of the two lines."
    ):
        read_config([str(run)])
    assert read_config(["prefill=10", "prefill=20"]) == {"prefill": 20}  # across --config values, later wins


@pytest.mark.parametrize(
    "text, line, key",
    [
        ("prefill:\nsteps: 5\n", 1, "prefill"),
        ("dataset:\n  batch:\nsteps: 5\n", 2, "dataset.batch"),
        ("steps: 5\nprefill:\n", 2, "prefill"),
    ],
    ids=["then-a-sibling", "nested", "at-the-end"],
)
def test_a_key_with_neither_a_value_nor_nested_keys_is_refused(tmp_path, text, line, key):
    # it was dropped without a word (YAML reads it as null; the default then ran instead)
    run = tmp_path / "run.yaml"
    run.write_text(text)
    with raises_exactly(
        SpecError,
        f"--config file {run} line {line} must give the key a value or nested keys, got {key!r} with neither. "
        "Write the value after the colon, or indent the nested keys under it.",
    ):
        read_config([str(run)])
