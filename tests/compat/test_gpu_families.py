"""GPU names the model table does not list get their architecture from a family pattern (cuda_matrix.json,
`gpu_families`, a source per row): the names below are as real pastes and nvidia-smi print them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_gpu_doctor.compat import CompatDataError, load_matrix, parse_matrix


@pytest.mark.parametrize(
    ("name", "capability", "architecture"),
    [
        ("NVIDIA H800", "9.0", "Hopper"),  # China-market H100
        ("NVIDIA H20", "9.0", "Hopper"),
        ("Tesla V100S-PCIE-32GB", "7.0", "Volta"),
        ("NVIDIA L40S-48C", "8.9", "Ada Lovelace"),  # a vGPU profile: the board's name and a size
        ("GRID V100D-32C", "7.0", "Volta"),
        ("GeForce 210", "1.2", "Tesla"),  # older than any PyTorch build: certainly unsupported
        ("GeForce GTX 480", "2.0", "Fermi"),
        ("Tesla M2070", "2.0", "Fermi"),
        ("Quadro K2200", "5.0", "Maxwell"),
    ],
)
def test_unlisted_names_get_their_family(name: str, capability: str, architecture: str) -> None:
    model = load_matrix().gpu_by_name(name)
    assert model is not None
    assert (model.compute_capability, model.architecture) == (capability, architecture)
    assert model.source.startswith("http") or "http" in model.source  # every row says where it came from


@pytest.mark.parametrize("name", ["Graphics Device", "NVIDIA", "", "AMD Radeon RX 7900 XTX"])
def test_names_that_say_nothing_stay_unknown(name: str) -> None:
    assert load_matrix().gpu_by_name(name) is None


def test_the_shipped_families_compile_and_match_their_examples() -> None:
    """load_matrix() compiles a pattern only when a name needs it; the shipped rows are proved here."""
    data = json.loads((Path(__file__).parents[2] / "compat" / "cuda_matrix.json").read_text(encoding="utf-8"))
    assert len(parse_matrix(data, prove_patterns=True).families) == len(load_matrix().families) >= 20


def test_a_listed_model_wins_over_its_family() -> None:
    """The table's own row, never a pattern, when both match."""
    model = load_matrix().gpu_by_name("NVIDIA H100 80GB HBM3")
    assert model is not None and model.compute_capability == "9.0"
    assert model.name == "NVIDIA H100"


@pytest.mark.parametrize("examples", [None, [1], "NVIDIA H800", ["NVIDIA A100"]])
def test_a_broken_family_row_is_a_data_error_never_a_crash(examples: object) -> None:
    """Found by tests/test_parsers_property.py: `examples` of the wrong type raised TypeError; a pattern that
    misses its own example is refused too."""
    data = json.loads((Path(__file__).parents[2] / "compat" / "cuda_matrix.json").read_text(encoding="utf-8"))
    data["gpu_families"] = [
        {"pattern": r"\bH800\b", "compute_capability": "9.0", "architecture": "Hopper", "source": "x",
         "examples": examples}
    ]  # fmt: skip
    with pytest.raises(CompatDataError):
        parse_matrix(data)
