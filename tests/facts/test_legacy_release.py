"""A system without os-release (CentOS/RHEL 6, before systemd) is named from its /etc/<name>-release line,
read through the host like every other file and parsed by the `distro` library.

The lines are what those systems hold: "CentOS release 6.10 (Final)" is the centos:6 image's release line (a
public write-up checked it on centos:5, :6 and :7; a Go OS detector's comment quotes "CentOS release 6.6
(Final)"), and RHEL 6's redhat-release has the same shape with its code name ("... release 6.10 (Santiago)").
"""

from __future__ import annotations

from pathlib import Path

from tests.facts.platform_tree import build
from torch_gpu_doctor.facts.platform import gather_os
from torch_gpu_doctor.unavailable import Unavailable

CENTOS6 = "CentOS release 6.10 (Final)\n"
RHEL6 = "Red Hat Enterprise Linux Server release 6.10 (Santiago)\n"


def test_centos_6_is_named_from_its_release_line(tmp_path: Path) -> None:
    # CentOS ships both files; the more specific one names it
    host = build(tmp_path, files={"/etc/centos-release": CENTOS6, "/etc/redhat-release": CENTOS6})
    facts = gather_os(host)
    assert (facts.distro_id, facts.distro_version) == ("centos", "6.10")
    assert facts.distro_name == "CentOS 6.10 (Final)"


def test_rhel_6_is_named_from_its_release_line(tmp_path: Path) -> None:
    facts = gather_os(build(tmp_path, files={"/etc/redhat-release": RHEL6}))
    assert (facts.distro_id, facts.distro_version) == ("rhel", "6.10")


def test_os_release_wins_over_a_release_line(tmp_path: Path) -> None:
    os_release = 'ID="rocky"\nVERSION_ID="9.3"\nPRETTY_NAME="Rocky Linux 9.3 (Blue Onyx)"\n'
    host = build(tmp_path, files={"/etc/os-release": os_release, "/etc/redhat-release": RHEL6})
    facts = gather_os(host)
    assert (facts.distro_id, facts.distro_version) == ("rocky", "9.3")


def test_neither_leaves_the_distribution_unknown(tmp_path: Path) -> None:
    facts = gather_os(build(tmp_path, files={"/etc/redhat-release": "\n"}))
    assert isinstance(facts.distro_id, Unavailable)
