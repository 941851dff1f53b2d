from __future__ import annotations

from torch_gpu_doctor.facts.environment import relevant_env, scrub


def test_only_relevant_names_are_kept_and_secret_names_dropped() -> None:
    env = {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
        "PATH": "/usr/bin",
        "PATHX": "/nope",
        "HOME": "/home/alice",
        "AWS_SECRET_ACCESS_KEY": "abc",
        "NVIDIA_API_TOKEN": "nvapi-123",
        "UV_INDEX": "https://me:ghp_abc@pypi.example/simple",
        "PIP_INDEX_URL": "https://me:pw@pypi.example/simple",
        "TORCH_HOME": "/data/torch",
    }
    assert relevant_env(env) == {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
        "PATH": "/usr/bin",
        "TORCH_HOME": "/data/torch",
    }


def test_credentials_in_url_values_are_scrubbed() -> None:
    assert scrub("https://me:ghp_abc@pypi.example/simple") == "https://***@pypi.example/simple"
    assert scrub("/usr/lib:/opt/x") == "/usr/lib:/opt/x"
    kept = relevant_env({"PYTORCH_MIRROR": "https://u:p@h/x https://v@h2/y"})
    assert kept == {"PYTORCH_MIRROR": "https://***@h/x https://***@h2/y"}
