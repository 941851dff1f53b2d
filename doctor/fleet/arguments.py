"""The `verify`, `diff` and `summarize` subcommands' options (argparse only: `--version` imports nothing else)."""

from __future__ import annotations

import argparse
from typing import Any


def add_fleet_commands(sub: Any) -> None:
    """Add the three subparsers to `sub`, the `_SubParsersAction` of cli.build_parser."""
    verify: argparse.ArgumentParser = sub.add_parser(
        "verify",
        help="post-install gates (GPU count and name, driver, torch CUDA, PCIe link, smoke test, NCCL) from "
        "flags or a TOML file: exit 0 when every expectation holds, 1 when one does not",
    )
    verify.add_argument("--gpus", type=int, metavar="N", help="exactly N GPUs visible to the driver")
    verify.add_argument("--gpu-name", metavar="TEXT", help="every GPU's name contains TEXT (any case)")
    verify.add_argument("--min-driver", metavar="VER", help="NVIDIA driver VER or newer (e.g. 550.54.15)")
    verify.add_argument(
        "--torch-cuda", metavar="VER", help="torch built for CUDA VER (12.4; 12 accepts any 12.x)"
    )
    verify.add_argument(
        "--min-pcie-gen", type=int, metavar="N", help="each GPU's link can run at PCIe Gen N or faster"
    )
    verify.add_argument(
        "--min-pcie-width", type=int, metavar="N", help="each GPU's link runs at xN lanes or wider"
    )
    verify.add_argument(
        "--smoke", dest="verify_smoke", action="store_true", help="the quick GPU smoke test must pass"
    )
    verify.add_argument(
        "--nccl", action="store_true", help="the smoke test's NCCL all-reduce over every GPU must pass"
    )
    verify.add_argument("--config", metavar="FILE.toml", help="expectations from a TOML file ([expect])")
    verify.add_argument("--root", metavar="DIR", default=argparse.SUPPRESS, help="verify a captured machine")

    diff = sub.add_parser(
        "diff",
        help="what differs between two --json reports that can matter (driver, torch, libraries, "
        "environment, links, container, GPUs, check statuses): exit 0 same, 1 different",
    )
    diff.add_argument("before", metavar="A.json")
    diff.add_argument("after", metavar="B.json")

    summarize = sub.add_parser(
        "summarize",
        help="a fleet table from --json reports: hosts x failing checks, worst hosts first",
    )
    summarize.add_argument("reports", metavar="REPORT.json", nargs="+")
