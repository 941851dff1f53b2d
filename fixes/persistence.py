"""Keeping the NVIDIA driver initialised between programs: persistence mode and the persistence daemon.

NVIDIA's "Driver Persistence" guide calls persistence mode (`nvidia-smi -pm 1`) legacy, lost at reboot, and
encourages the nvidia-persistenced daemon instead. Some distribution units start the daemon with
`--no-persistence-mode` (the daemon's own default differs between versions), so enabling the service alone may
leave persistence off: `nvidia-smi -pm 1` then asks the running daemon to turn it on.
"""

from __future__ import annotations

from torch_gpu_doctor.model import Command, Remediation, Target


def enable_persistence() -> Remediation:
    return Remediation(
        text="Turn persistence on now, and start NVIDIA's persistence daemon at every boot so it stays on; if "
        "it is off again after a reboot, remove --no-persistence-mode from the daemon's service unit.",
        commands=(
            Command(("sudo", "nvidia-smi", "-pm", "1"), note="now, for every GPU"),
            Command(("sudo", "systemctl", "enable", "--now", "nvidia-persistenced"), note="at every boot"),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )
