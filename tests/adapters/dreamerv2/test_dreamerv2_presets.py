"""Where a DreamerV2 config comes from: presets, YAML files and pairs, the derived prefill."""

from __future__ import annotations

import pytest
from support import raises_exactly, require

require("gym")
require("tensorflow")
require("dreamerv2")

from bridge.adapters.dreamerv2 import dreamer_config, load_dreamerv2, to_dreamer_ready, train  # noqa: E402
from bridge.adapters.dreamerv2.presets import PRESETS, parse_config_args  # noqa: E402

import bridge  # noqa: E402
from bridge.cli import main  # noqa: E402
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


def test_an_unknown_preset_lists_the_known_ones(ready, capsys):
    with raises_exactly(SpecError, UNKNOWN):
        dreamer_config(ready, preset="huge")
    with raises_exactly(SpecError, UNKNOWN):
        train("envbridge/GridWorld-v0", preset="huge", logdir="/tmp/never")
    assert main(["train", "dreamerv2", "--preset", "huge", "--logdir", "/tmp/never"]) == 2
    assert capsys.readouterr().err == f"envbridge train dreamerv2: SpecError: {UNKNOWN}\n"


def test_default_prefill_is_at_most_half_the_steps(ready):
    # the README's train(env, {"logdir": ..., "steps": 2000}) and a bare `envbridge train dreamerv2` (1000 steps)
    assert dreamer_config(ready, {"steps": 2000}).prefill == 100
    assert dreamer_config(ready, {"steps": 1000}).prefill == 100
    assert dreamer_config(ready, {"steps": 150}).prefill == 75
    cfg = dreamer_config(ready, {"steps": 2000}, preset="default")  # DreamerV2's own prefill is 10000
    assert (cfg.prefill, cfg.log_every, cfg.eval_every) == (1000, 333, 1000)  # fitted to the 1000 steps after it
    assert dreamer_config(ready, {"steps": 2000, "prefill": 5000}).prefill == 5000  # the caller's key stays


def test_config_args_read_yaml_mappings_and_pairs_in_order(tmp_path):
    run = tmp_path / "run.yaml"
    run.write_text("dataset: {batch: 8, length: 16}\nprefill: 50\nencoder.mlp_layers: [16, 16]\n")
    got = parse_config_args(["prefill=20", str(run), "dataset.batch=2"])
    assert got == {"prefill": 50, "dataset.batch": 2, "dataset.length": 16, "encoder.mlp_layers": [16, 16]}


@pytest.mark.parametrize(
    "text, shown",
    [("- prefill: 100\n", "a list"), ("100\n", "a int"), ("", "an empty file"), ("{1: 2}\n", "a dict")],
)
def test_config_file_must_hold_a_mapping(tmp_path, text, shown):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with raises_exactly(
        SpecError,
        f"--config {str(path)!r} must hold a YAML mapping of DreamerV2 config keys, got {shown}. "
        "Write e.g. 'prefill: 100' and 'dataset: {batch: 4}', one key per line.",
    ):
        parse_config_args([str(path)])


def test_config_file_must_exist_and_parse(tmp_path, capsys):
    missing = str(tmp_path / "missing.yml")
    with raises_exactly(
        SpecError,
        f"--config {missing!r} must be a readable YAML file, got FileNotFoundError: No such file or directory. "
        "Check the path.",
    ):
        parse_config_args([missing])
    broken = tmp_path / "broken.yaml"
    broken.write_text("dataset: {batch: 4\n")
    with pytest.raises(
        SpecError, match=rf"^--config {str(broken)!r} must be valid YAML, got \w+: .+\. Fix the file\.$"
    ):
        parse_config_args([str(broken)])
