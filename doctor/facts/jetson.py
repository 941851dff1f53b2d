"""NVIDIA Jetson: which board, which L4T release, and whether its integrated GPU's driver is there.

A Jetson's GPU is part of the Tegra system-on-chip: it is not a PCI device, the desktop driver and NVML do not
cover it (nvidia-smi exists only from JetPack 6, with little in it), and its driver comes with the board's L4T
image. What names the machine is the device tree (`/proc/device-tree/model`, `compatible`: NUL-separated
strings such as `nvidia,p3737-0000+p3701-0000` and `nvidia,tegra234`) and `/etc/nv_tegra_release`, the L4T
release line (`# R35 (release), REVISION: 3.1, GCID: ..., BOARD: t186ref, EABI: aarch64, DATE: ...`).
"""

from __future__ import annotations

from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

MODEL = "/proc/device-tree/model"
COMPATIBLE = "/proc/device-tree/compatible"
TEGRA_RELEASE = "/etc/nv_tegra_release"
# The integrated GPU's driver: the nvgpu module (a built-in driver shows under /sys/module too), and its nodes.
NVGPU_MODULE = "/sys/module/nvgpu"
GPU_NODES = ("/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0")
NOT_JETSON = "not a Jetson: no Tegra device tree and no /etc/nv_tegra_release"
_RELEASE = lazy(r"#\s*R(\d+)\s*\(release\),\s*REVISION:\s*(\d+(?:\.\d+)?)")
_BOARD = lazy(r"BOARD:\s*([^,\s]+)")
_SOC = lazy(r"^nvidia,(tegra\d+)$")
# model names, most specific first ("Orin Nano" is an Orin)
_MODEL_SOC = (
    ("Thor", "tegra264"),
    ("Orin", "tegra234"),
    ("Xavier", "tegra194"),
    ("TX2", "tegra186"),
    ("Nano", "tegra210"),
    ("TX1", "tegra210"),
)


@dataclass(frozen=True)
class JetsonFacts:
    model: str | None  # "NVIDIA Jetson AGX Orin Developer Kit" (the device tree's model)
    compatible: tuple[str, ...]  # the device tree's compatible strings, most specific first
    l4t: str | None  # "35.3.1": R35, REVISION 3.1 (None: /etc/nv_tegra_release unreadable)
    board: str | None  # "t186ref", from the release line
    nvgpu: bool  # the nvgpu driver is loaded (its /sys/module entry or a GPU device node)

    @property
    def soc(self) -> str | None:
        """The SoC ("tegra234": Orin, "tegra194": Xavier, "tegra186": TX2, "tegra210": Nano, TX1): from the
        compatible strings, else from the model's name."""
        found = next((m.group(1) for s in self.compatible if (m := _SOC.match(s))), None)
        if found is not None or self.model is None:
            return found
        return next((soc for word, soc in _MODEL_SOC if word in self.model), None)

    def integrated_gpu(self) -> str:
        """ "Jetson Orin (integrated GPU)": for the header lines, where a Jetson has no PCI or NVML GPU."""
        from torch_gpu_doctor.compat.jetson import load_jetson  # the data loads when a Jetson is described

        soc = load_jetson().soc(self.soc)
        return f"Jetson {soc.name} (integrated GPU)" if soc is not None else "a Jetson's integrated GPU"

    def driver_words(self) -> str:
        """ "L4T 36.4.3 (CUDA 12.6)": a Jetson's driver is its L4T release, its CUDA the release's."""
        from torch_gpu_doctor.compat.jetson import load_jetson  # the data loads when a Jetson is described

        release = load_jetson().release(self.l4t)
        cuda = f" (CUDA {release.cuda})" if release is not None else ""
        return f"L4T {self.l4t}{cuda}" if self.l4t else "L4T (release unknown)"

    @property
    def l4t_major(self) -> int | None:
        return int(self.l4t.split(".")[0]) if self.l4t else None


def parse_tegra_release(text: str) -> tuple[str | None, str | None]:
    """("35.3.1", "t186ref") from `# R35 (release), REVISION: 3.1, GCID: ..., BOARD: t186ref, ...`."""
    release = _RELEASE.search(text)
    board = _BOARD.search(text)
    version = f"{release.group(1)}.{release.group(2)}" if release else None
    return version, board.group(1) if board else None


def _device_tree_text(raw: bytes | Unavailable) -> tuple[str, ...]:
    if isinstance(raw, Unavailable):
        return ()
    return tuple(part.strip() for part in raw.decode("utf-8", errors="replace").split("\x00") if part.strip())


def gather_jetson(host: Host) -> Maybe[JetsonFacts]:
    model = _device_tree_text(host.read_bytes(MODEL))
    compatible = _device_tree_text(host.read_bytes(COMPATIBLE))
    release = host.read_text(TEGRA_RELEASE)
    tegra = any(s.startswith("nvidia,tegra") for s in compatible) or any("Jetson" in m for m in model)
    if not tegra and isinstance(release, Unavailable):
        return Unavailable(Reason.NOT_APPLICABLE, NOT_JETSON)
    l4t, board = parse_tegra_release(release) if not isinstance(release, Unavailable) else (None, None)
    nvgpu = host.is_dir(NVGPU_MODULE) or any(host.exists(node) for node in GPU_NODES)
    return JetsonFacts(
        model=model[0] if model else None, compatible=compatible, l4t=l4t, board=board, nvgpu=nvgpu
    )
