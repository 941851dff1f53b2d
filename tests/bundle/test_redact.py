"""Redaction is pure: secrets in every shape are dropped, identifiers become stable pseudonyms, whole tokens only."""

from __future__ import annotations

import pytest

from torch_gpu_doctor.bundle.identifiers import Identifier, Kind, is_placeholder, parse_passwd
from torch_gpu_doctor.bundle.redact import Redactor
from torch_gpu_doctor.bundle.secrets import looks_secret, redact_secrets
from torch_gpu_doctor.facts.environment import relevant_env

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("PIP_INDEX_URL=https://alice:s3cr3tpw@pypi.example.com/simple", "s3cr3tpw"),
        (
            "index-url = https://__token__:pypi-AgEIcHlwaS5vcmc@pypi.example.com/simple",
            "pypi-AgEIcHlwaS5vcmc",
        ),
        ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz12\x00CUDA_HOME=/usr/local/cuda", "hf_abcdefghijklmnop"),
        ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
        ("key id AKIAIOSFODNN7EXAMPLE in a log", "AKIAIOSFODNN7EXAMPLE"),
        (f"CUDA_FOO={GHP}", GHP),
        ("token github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_11ABCDEFG"),
        ("slack xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012"),
        ("OPENAI sk-proj-abcdefghijklmnopqrstuvwx", "sk-proj-abcdefghij"),
        ("glpat-abcdefghij0123456789", "glpat-abcdefghij0123456789"),
        ("machine pypi.example.com login alice password hunter2hunter2", "hunter2hunter2"),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abc123", "eyJhbGciOiJIUzI1NiJ9abc123"),
        ('"api_key": "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"', "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"),
        ("password = correct-horse", "correct-horse"),
        (f"CUDA_FOO=tok_{GHP}", GHP),  # `_` before the token: no `\\b` there
        ("password: hunter2", "hunter2"),  # a short YAML value
        ("db:\n  passwd: 'hunter2'\n", "hunter2"),
    ],
)
def test_every_secret_shape_is_dropped(text: str, secret: str) -> None:
    cleaned, found = redact_secrets(text)
    assert secret not in cleaned
    assert found >= 1
    assert redact_secrets(cleaned)[1] == 0  # a second pass finds nothing left


@pytest.mark.parametrize(
    "text",
    [
        "   ├─ authflags:     none",  # boltctl output: not a secret, must survive for the egpu checks
        "authorized: yes",
        "spec_store_bypass_disable=on iommu=pt",
        "https://download.pytorch.org/whl/cu126",
        "CUDA_VISIBLE_DEVICES=0,1",
        "iommu.passthrough=1 intel_iommu=on",  # the IOMMU facts read this: `pass` is not a whole word here
        "    Node Index                        : N/A",  # nvidia-smi -q
        "token: null",
        "key: no",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_secrets(text) == (text, 0)


def test_secret_environment_variables() -> None:
    assert looks_secret("HF_TOKEN", "x")
    assert looks_secret("CUDA_FOO", GHP)
    assert looks_secret("PIP_INDEX_URL", "https://u:t@host/simple")
    assert not looks_secret("CUDA_HOME", "/usr/local/cuda")


@pytest.mark.parametrize(
    "name",
    [
        "CUDA_HOME",
        "CUDA_SESSION_ID",
        "NCCL_AUTH_TOKEN",
        "CUDA_USER",
        "PYTORCH_INDEX",
        "CUDA_APIKEY",
        "NCCL_PASSWD",
    ],
)
def test_one_secret_name_rule_for_the_environment_and_bundles(name: str) -> None:
    """A name `gather` keeps is one a bundle keeps, and the other way round (torch_gpu_doctor.facts.environment)."""
    assert looks_secret(name, "1") == (name not in relevant_env({name: "1"}))


def _redactor() -> Redactor:
    return Redactor(
        (
            Identifier(Kind.HOSTNAME, "vm"),
            Identifier(Kind.USER, "alice"),
            Identifier(Kind.HOME, "/data/alice.smith", owner="alice"),
            Identifier(Kind.MAC, "02:fc:00:00:00:01"),
            Identifier(Kind.IP, "192.0.2.2"),
            Identifier(Kind.GPU_UUID, "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1"),
        )
    )


def test_pseudonyms_are_stable_and_whole_tokens_only() -> None:
    redactor = _redactor()
    text = (
        "alice@vm:/home/alice$ kvm /proc/sys/vm/swappiness VM MAC 02:FC:00:00:00:01 ip 192.0.2.2 "
        "not 192.0.2.20 /data/alice.smith/x GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1 alicex"
    )
    result = redactor.text(text)
    assert result.text == (
        "user-1@host-1:/home/user-1$ kvm /proc/sys/vm/swappiness VM MAC mac-1 ip ip-1 "
        "not 192.0.2.20 /data/user-1/x GPU-uuid-1 alicex"
    )
    assert result.kinds == {"hostname", "user", "home", "mac", "ip", "gpu_uuid"}
    assert redactor.text("vm alice").text == "host-1 user-1"  # same value, same pseudonym, every time
    assert redactor.path("root/home/alice/.netrc") == "root/home/user-1/.netrc"


def test_an_ipv4_address_with_a_port_is_replaced() -> None:
    redactor = Redactor((Identifier(Kind.IP, "10.1.2.3"), Identifier(Kind.IP, "fd00::2")))
    assert redactor.text("NCCL_COMM_ID=10.1.2.3:29500 [fd00::2]:22 10.1.2.30 10.1.2.3.4").text == (
        "NCCL_COMM_ID=ip-1:29500 [ip-2]:22 10.1.2.30 10.1.2.3.4"
    )


def test_json_keys_values_and_env_maps() -> None:
    kinds: set[str] = set()
    document = {"env": {"CUDA_FOO": GHP, "CUDA_HOME": "/home/alice/cuda"}, "/home/alice": ["vm"]}
    assert _redactor().json(document, kinds) == {
        "env": {"CUDA_HOME": "/home/user-1/cuda"},
        "/home/user-1": ["host-1"],
    }
    assert kinds == {"secret", "user", "hostname"}


def test_no_identifiers_still_drops_secrets() -> None:
    result = Redactor(()).text(f"vm alice CUDA_FOO={GHP}")
    assert result.text == "vm alice CUDA_FOO=<secret>"
    assert result.kinds == {"secret"}


def test_passwd_and_placeholders() -> None:
    passwd = "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\ngarbled line\n"
    assert parse_passwd(passwd) == [("root", 0, "/root"), ("alice", 1000, "/home/alice")]
    for filler in ("To Be Filled By O.E.M.", "Default string", "0", "00000000", "Not Specified", "None"):
        assert is_placeholder(filler)
    assert not is_placeholder("PF2ABCDE")


def test_a_machine_like_host_name_is_found_in_any_case_a_word_like_one_only_as_written() -> None:
    redactor = Redactor((Identifier(Kind.HOSTNAME, "GPU-Node-07"), Identifier(Kind.HOSTNAME, "titan")))
    text = redactor.text("gpu-node-07.lab GPU-NODE-07 GPU-Node-07 titan NVIDIA TITAN Xp Titan").text
    assert "node-07" not in text.lower()
    assert text.count("host-1") == 3
    # a plain word: only as written, or "NVIDIA TITAN" in a GPU name would become a pseudonym
    assert text.endswith("host-2 NVIDIA TITAN Xp Titan")
