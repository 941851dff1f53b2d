"""ROCm facts from small captured trees built in tmp_path. Where each value comes from:

- KFD node properties: MI300X node from makodevai/gpuq tests/test_hip_runtime.py @c09be6f87da7 (CPU node and GPU
  node, `device_id 29857` = 0x74a1, the device id of the MI300X in ../shared/reference/samples/rocm/
  thamada-MI300X_smi-out.txt, `location_id 18176` = bus 0x47); gfx_target_version values and their names from
  hardware.md §6 (kfd_device.c): 90402 gfx942, 90010 gfx90a, 100300 gfx1030, 110000 gfx1100, 110501 gfx1151.
- ROCm version file: `/opt/rocm/.info/version` (hardware.md §6, values 7.1.1 / 7.2.4; `/opt/rocm` often a
  symlink to `/opt/rocm-X.Y.Z`); the `6.2.0-66` form (build suffix) as an operator reported it for ROCm 6.2.0.
- /sys/module/amdgpu/version: DKMS value 6.16.6 (hardware.md §6); absent for the in-tree driver.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.facts.platform_tree import build
from torch_gpu_doctor.facts.rocm import (
    RocmFacts,
    agent_from_properties,
    gather_rocm,
    gfx_target_name,
    gfx_version_tuple,
    parse_kfd_properties,
    parse_version_file,
)
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

CPU_NODE = """\
cpu_cores_count 96
simd_count 0
mem_banks_count 1
caches_count 0
io_links_count 5
p2p_links_count 3
cpu_core_id_base 0
simd_id_base 0
max_waves_per_simd 0
lds_size_in_kb 0
gds_size_in_kb 0
num_gws 0
wave_front_size 0
array_count 0
simd_arrays_per_engine 0
cu_per_simd_array 0
simd_per_cu 0
max_slots_scratch_cu 0
gfx_target_version 0
vendor_id 0
device_id 0
location_id 0
domain 0
drm_render_minor 0
hive_id 0
num_sdma_engines 0
num_sdma_xgmi_engines 0
num_sdma_queues_per_engine 0
num_cp_queues 0
max_engine_clk_ccompute 2400
"""

MI300X_NODE = """\
cpu_cores_count 0
simd_count 1216
mem_banks_count 1
caches_count 626
io_links_count 7
p2p_links_count 1
cpu_core_id_base 0
simd_id_base 2147487784
max_waves_per_simd 8
lds_size_in_kb 64
gds_size_in_kb 0
num_gws 64
wave_front_size 64
array_count 32
simd_arrays_per_engine 1
cu_per_simd_array 10
simd_per_cu 4
max_slots_scratch_cu 32
gfx_target_version 90402
vendor_id 4098
device_id 29857
location_id 18176
domain 0
drm_render_minor 128
hive_id 10631624818852212319
num_sdma_engines 2
num_sdma_xgmi_engines 14
num_sdma_queues_per_engine 8
num_cp_queues 24
max_engine_clk_fcompute 2100
local_mem_size 0
fw_version 166
capability 746037888
debug_prop 1511
sdma_fw_version 22
unique_id 4376936076086227261
num_xcc 8
max_engine_clk_ccompute 2400
"""

NODES = "sys/class/kfd/kfd/topology/nodes"


def mi300x_files(version: str = "6.2.0-66\n") -> dict[str, str]:
    return {
        "opt/rocm-6.2.0/.info/version": version,
        f"{NODES}/0/properties": CPU_NODE,
        f"{NODES}/1/properties": CPU_NODE,
        f"{NODES}/2/properties": MI300X_NODE,
        "sys/module/amdgpu/initstate": "live\n",
        "dev/kfd": "",
        "dev/dri/renderD128": "",
        "dev/dri/card0": "",
    }


def reason(value: object) -> Reason:
    assert isinstance(value, Unavailable), value
    return value.reason


@pytest.mark.parametrize(
    ("number", "name"),
    [
        *[(90402, "gfx942"), (90010, "gfx90a"), (90500, "gfx950"), (100300, "gfx1030"), (110000, "gfx1100")],
        *[(110501, "gfx1151"), (120001, "gfx1201"), (0, None), (-5, None), (91600, None)],
    ],
)
def test_gfx_target_version_decodes_with_hex_minor_and_stepping(number: int, name: str | None) -> None:
    assert gfx_target_name(number) == name
    if name is not None:
        major, minor, stepping = gfx_version_tuple(name) or (0, 0, 0)
        assert major * 10000 + minor * 100 + stepping == number


@pytest.mark.parametrize(
    ("text", "version"),
    [
        *[("7.1.1\n", "7.1.1"), ("6.2.0-66\n", "6.2.0"), ("7.2.4", "7.2.4"), ("6.4\n", "6.4")],
        *[("", None), ("rocm\n", None), ("\x00\x01garbage", None)],
    ],
)
def test_version_file(text: str, version: str | None) -> None:
    assert parse_version_file(text) == version


def test_properties_parser_ignores_odd_lines_and_refuses_garbage() -> None:
    assert parse_kfd_properties("gfx_target_version 90402\nnot a line\nvendor_id 4098\n") == {
        "gfx_target_version": 90402,
        "vendor_id": 4098,
    }
    assert parse_kfd_properties("\x7fELF binary junk") is None


def test_agent_from_a_cpu_node_is_none_and_bdf_comes_from_location_id() -> None:
    assert agent_from_properties(0, parse_kfd_properties(CPU_NODE) or {}, "n0") is None
    agent = agent_from_properties(2, parse_kfd_properties(MI300X_NODE) or {}, "n2")
    assert agent is not None
    assert agent.bdf == "0000:47:00.0" and agent.device_id == 0x74A1 and agent.drm_render_minor == 128


def test_mi300x_tree(tmp_path: Path) -> None:
    host = build(tmp_path, files=mi300x_files(), links={"opt/rocm": "rocm-6.2.0"})
    rocm = gather_rocm(host)
    assert rocm.version == "6.2.0" and rocm.version_source == "/opt/rocm/.info/version"
    assert [i.path for i in rocm.installs] == ["/opt/rocm", "/opt/rocm-6.2.0"]
    assert rocm.amdgpu_loaded is True
    assert reason(rocm.amdgpu_version) is Reason.NOT_FOUND  # in-tree driver: no version file
    assert rocm.kfd_present is True and rocm.render_nodes == ("renderD128",)
    assert not isinstance(rocm.agents, Unavailable)
    assert [(a.node, a.gfx_target, a.bdf) for a in rocm.agents] == [(2, "gfx942", "0000:47:00.0")]
    assert from_json(RocmFacts, to_json(rocm)) == rocm


def test_without_opt_rocm_the_newest_versioned_tree_wins(tmp_path: Path) -> None:
    files = mi300x_files() | {
        "opt/rocm-6.10.1/.info/version": "6.10.1\n",
        "sys/module/amdgpu/version": "6.16.6\n",
    }
    rocm = gather_rocm(build(tmp_path, files=files))
    assert rocm.version == "6.10.1" and rocm.version_source == "/opt/rocm-6.10.1/.info/version"
    assert rocm.amdgpu_version == "6.16.6"


def test_a_tree_without_the_version_file_is_named_by_its_folder(tmp_path: Path) -> None:
    rocm = gather_rocm(build(tmp_path, dirs=("opt/rocm-7.2.4/lib", "dev")))
    assert rocm.version == "7.2.4" and rocm.version_source is None


def test_nvidia_machine_has_no_rocm_and_no_kfd(tmp_path: Path) -> None:
    host = build(
        tmp_path, files={"dev/nvidia0": "", "sys/module/nvidia/initstate": "live\n"}, dirs=("opt/conda",)
    )
    rocm = gather_rocm(host)
    assert reason(rocm.version) is Reason.NOT_FOUND and rocm.installs == ()
    assert rocm.amdgpu_loaded is False and rocm.kfd_present is False and rocm.render_nodes == ()
    assert reason(rocm.agents) is Reason.NOT_FOUND


def test_permission_denied_and_garbled_inputs_stay_unavailable(tmp_path: Path) -> None:
    files = mi300x_files(version="not a version\n") | {f"{NODES}/3/properties": "\x00\x00"}
    host = build(tmp_path, files=files, file_errors={f"/{NODES}/2/properties": "permission_denied"})
    rocm = gather_rocm(host)
    assert reason(rocm.version) is Reason.UNPARSEABLE
    # Every node was unreadable or a CPU: the first reason is kept, not an empty "no GPU".
    assert reason(rocm.agents) is Reason.PERMISSION_DENIED


def test_unreadable_version_file_is_not_a_missing_rocm(tmp_path: Path) -> None:
    host = build(
        tmp_path, files=mi300x_files(), file_errors={"/opt/rocm-6.2.0/.info/version": "permission_denied"}
    )
    rocm = gather_rocm(host)
    assert reason(rocm.version) is Reason.PERMISSION_DENIED
    assert rocm.installs[0].path == "/opt/rocm-6.2.0"


def test_other_vendors_kfd_nodes_are_left_out(tmp_path: Path) -> None:
    files = {
        f"{NODES}/0/properties": CPU_NODE,
        f"{NODES}/1/properties": "vendor_id 4318\ngfx_target_version 110000\n",
    }
    rocm = gather_rocm(build(tmp_path, files=files))
    assert rocm.agents == ()
    assert reason(rocm.kfd_present) is Reason.NOT_FOUND  # a capture without /dev: not "absent"
