"""The words of `gpu-doctor fit`, for the command line and the TUI's fit view alike. argparse only: the parser
is built on every start, so nothing of the estimate is loaded here (fit/request.py turns the words into one)."""

from __future__ import annotations

import argparse
from typing import NoReturn

MODES = (
    ("infer", "run it (the default)"),
    ("train", "full fine-tuning"),
    ("lora", "LoRA fine-tuning (rank 16 on every linear layer)"),
    ("qlora", "QLoRA: a 4-bit base with LoRA adapters"),
)


def add_fit_arguments(fit: argparse.ArgumentParser) -> None:
    fit.add_argument(
        "model", metavar="MODEL", help="a parameter count (7B, 350M, 1.3e9), a config.json or a model folder"
    )
    mode = fit.add_mutually_exclusive_group()
    for name, words in MODES:
        mode.add_argument(f"--{name}", dest="fit_mode", action="store_const", const=name, help=words)
    fit.add_argument(
        "--precision",
        choices=("fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4"),
        help="default: the best every GPU here runs fast (bf16 from Ampere, fp16 on Volta/Turing, else fp32)",
    )
    fit.add_argument("--batch", type=int, default=1, metavar="N", help="batch size per GPU (default 1)")
    fit.add_argument(
        "--seq", type=int, metavar="N", help="sequence length (default 2048, or less if the model's)"
    )
    fit.add_argument("--gpus", type=int, metavar="N", help="shard over N GPUs (default: no sharding)")
    fit.add_argument("--optimizer", choices=("adamw", "adamw8bit", "sgd"), default="adamw")
    fit.add_argument(
        "--checkpointing", action="store_true", help="with activation checkpointing (gradient checkpointing)"
    )


class FitWordsError(ValueError):
    """Words the fit options do not accept: argparse's sentence, without exiting."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise FitWordsError(message)


def parse_fit_words(words: list[str]) -> argparse.Namespace:
    """`7B --train --batch 4` as the command line reads it after `fit` (the TUI's field)."""
    parser = _Parser(prog="fit", add_help=False, allow_abbrev=False)
    add_fit_arguments(parser)
    return parser.parse_args(words)
