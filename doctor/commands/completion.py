"""`gpu-doctor completion bash|zsh|fish`: the shell code that completes gpu-doctor's commands, options and
check ids, from argcomplete (a maintained library; the same parser as the command line, so it never drifts).

    eval "$(gpu-doctor completion bash)"            # in ~/.bashrc
    gpu-doctor completion fish > ~/.config/fish/completions/gpu-doctor.fish
"""

from __future__ import annotations

import argparse
import sys

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.exit_codes import ExitCode

SHELLS = ("bash", "zsh", "fish")


def run(args: argparse.Namespace) -> int:
    from argcomplete.shell_integration import shellcode  # only here and when a shell completes (cli.py)

    sys.stdout.write(shellcode([TOOL_NAME], shell=args.shell))
    return ExitCode.OK
