"""verify's expectations: the TOML schema (unknown keys are usage errors), flags over the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.fleet.expectations import (
    ExpectationError,
    Expectations,
    load_expectations,
    parse_expectations,
    with_flags,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "fleet" / "verify.toml"


def test_the_documented_example_loads_every_key() -> None:
    expect = load_expectations(EXAMPLE)
    assert expect == Expectations(
        gpus=8,
        gpu_name="H100",
        min_driver="550.54.15",
        torch_cuda="12.4",
        min_pcie_gen=5,
        min_pcie_width=16,
        smoke=True,
        nccl=True,
    )
    assert expect.needs_smoke


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"expect": {"gpu": 8}}, "unknown key expect.gpu"),
        ({"expect": {"gpus": 8}, "gates": {}}, "unknown table or key 'gates'"),
        ({"gpus": 8}, "unknown table or key 'gpus'"),
        ({}, "no [expect] table"),
        ({"expect": {"gpus": True}}, "gpus must be int"),
        ({"expect": {"gpus": "8"}}, "gpus must be int"),
        ({"expect": {"smoke": "yes"}}, "smoke must be bool"),
        ({"expect": {"min_driver": 550}}, "min_driver must be str"),
        ({"expect": {"min_driver": "550.x"}}, "not a version"),
        ({"expect": {"min_pcie_gen": 9}}, "PCIe generations are 1 to 7"),
        ({"expect": {"gpus": -1}}, "out of range"),
        ({"expect": {"gpu_name": "  "}}, "gpu_name is empty"),
    ],
)
def test_a_bad_document_is_refused_with_the_key(document: dict[str, object], message: str) -> None:
    with pytest.raises(ExpectationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_expectations(document, "gates.toml")


def test_flags_replace_the_files_values_and_unset_flags_keep_them() -> None:
    base = Expectations(gpus=8, min_driver="550.54.15")
    merged = with_flags(base, {"gpus": 4, "min_driver": None, "smoke": False, "nccl": True})
    assert merged == Expectations(gpus=4, min_driver="550.54.15", nccl=True)


def test_a_zero_flag_is_a_value_not_unset() -> None:
    """`verify --gpus 0` overrides `gpus = 8` (0 == False in Python: it must not read as an unset flag)."""
    merged = with_flags(Expectations(gpus=8), {"gpus": 0, "min_pcie_width": 0, "smoke": False})
    assert merged == Expectations(gpus=0, min_pcie_width=0)
    assert not with_flags(Expectations(), {"gpus": 0}).empty


def test_verify_gpus_0_on_a_machine_without_gpus_passes(capsys: pytest.CaptureFixture[str]) -> None:
    root = str(Path(__file__).resolve().parents[1] / "fixtures" / "hosts" / "ci-no-gpu-cuda-toolkit")
    assert main(["--root", root, "verify", "--gpus", "0"]) == 0
    assert "gpus: expected 0, observed 0 — pass" in capsys.readouterr().out


def test_an_unreadable_or_invalid_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ExpectationError, match="No such file"):
        load_expectations(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[expect\ngpus = 8\n")
    with pytest.raises(ExpectationError, match="not valid TOML"):
        load_expectations(broken)


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        ("[expect]\ngpu_count = 8\n", [], "unknown key expect.gpu_count"),
        ("[expect]\n", [], "nothing to verify"),
        ("[expect]\ngpus = 8\n", ["--min-driver", "latest"], "not a version"),
    ],
)
def test_config_problems_are_usage_errors_exit_2_in_text_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, extra: list[str], message: str
) -> None:
    config = tmp_path / "gates.toml"
    config.write_text(content)
    root = str(Path(__file__).resolve().parents[1] / "fixtures" / "hosts" / "rtx4090-workstation-healthy")
    assert main(["--root", root, "verify", "--config", str(config), *extra]) == 2
    out, err = capsys.readouterr()
    assert message in err and out == ""
    assert main(["--root", root, "verify", "--config", str(config), *extra, "--json"]) == 2
    out, _ = capsys.readouterr()
    document = json.loads(out)
    assert document["error"]["kind"] == "usage" and message in document["error"]["message"]
