"""One configuration for CLI and nodes: ROS-parameter YAML, dotted names, clear errors."""

import pytest

from vlkng_ros.core.config import VlkngConfig, load_config


def test_every_parameter_has_a_default_and_a_description():
    params = list(VlkngConfig().iter_parameters())
    assert len(params) > 40
    for name, value, help_text in params:
        assert value is not None and help_text, name


def test_ros_yaml_sections_and_overrides(tmp_path):
    p = tmp_path / "p.yaml"
    p.write_text("/**:\n  ros__parameters:\n    chunk_size: 6\n    use_sim_time: true\n"
                 "    stoa:\n      threshold: 0.7\n"
                 "vlkng_merger:\n  ros__parameters:\n    stoa.shortlist_k: 5\n")
    cfg = load_config(p, {"perception.noise": "0"})
    assert cfg.chunk_size == 6 and cfg.stoa.threshold == 0.7 and cfg.stoa.shortlist_k == 5
    assert cfg.perception.noise == 0.0


def test_bad_values_are_clear_errors():
    with pytest.raises(KeyError, match="nope"):
        load_config(None, {"stoa.nope": 1})
    with pytest.raises(ValueError, match="chunk_size"):
        load_config(None, {"chunk_size": "eight"})


def test_shipped_yaml_lists_every_parameter_with_its_default():
    import yaml
    from pathlib import Path

    doc = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "vlkng.yaml").read_text())
    shipped = load_config(Path(__file__).resolve().parents[1] / "config" / "vlkng.yaml")
    flat = dict(_flatten(doc["/**"]["ros__parameters"]))
    for name, default, _ in VlkngConfig().iter_parameters():
        assert name in flat, f"config/vlkng.yaml lacks {name}"
    assert shipped.to_dict() == VlkngConfig().to_dict(), "the shipped YAML differs from the code defaults"


def _flatten(d, prefix=""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _flatten(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v
