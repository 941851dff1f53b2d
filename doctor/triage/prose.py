"""What a person says about the machine in words, where no tool output says it.

Bug reports name the hardware in prose or in a tool triage does not parse: "在5060ti上运行报错", "4xRTX 4090",
lshw's `product: GP107 [GeForce GTX 1050 Ti]`, `/proc/driver/nvidia/version`'s `NVRM version: ... Kernel Module
470.223.02`, a `Driver Version: 460.80` under a label of the person's own, "on WSL 2", a macOS home folder
(`/Users/name/...`). Each is a fact the checks need (the GPU's compute capability, the driver's CUDA, the
platform), and a first command that asks for what the paste already says wastes the person's turn. Only what
the paste says once and without contradiction is taken: two different GPU models named, and none is.
"""

from __future__ import annotations

import bisect
import itertools
import re

from torch_gpu_doctor.compat.rocm_gfx import BARE_XT, gfx_of_product
from torch_gpu_doctor.lazy_re import OnLines, lazy
from torch_gpu_doctor.records import dataclass

# NVIDIA's consumer lines, as people write them: "RTX 4090", "rtx4090", "GTX 1050 Ti", "5060ti", "3080 Super".
# A bare number counts only with its Ti/Super suffix (a bare "4090" may be a port or a year). The patterns run
# on the lower-cased text and start with their literals, so that the regex engine skips ahead to them (a
# lookbehind first made it try every position: 8 s on a 100k-line paste); where a match starts is judged in
# _starts_a_name: ASCII only, so "在5060ti" names a card, "4xRTX 4090" four of them, and "0xa100" is hex.
_CONSUMER = lazy(
    r"(?:geforce[ \t]+)?(?P<line>rtx|gtx|gts|gt|mx)[ \t-]?(?P<num>\d{3,4})(?!\d)"
    r"(?:[ \t]?(?P<suf>ti[ \t]super|ti|super)(?![a-z0-9]))?(?:[ \t]?(?P<mobile>laptop|mobile)(?![a-z0-9])|(?P<m>m)(?![a-z0-9.]))?"
    r"|(?P<bare>[1-5]0[5-9]0|16[56]0|[79][5-8]0)[ \t]?(?P<baresuf>ti[ \t]super|ti|super)(?![a-z0-9])"  # "980 TI"
    # a bare number after a word that makes it a card: "on the 5090", "my 3090", "a 2080ti" (never a year or a
    # port alone)
    r"|(?<![a-z])(?:the|my|a|our|new|two|dual|multiple|several|four|eight)[ \t]+(?P<card>[2-5]0[6-9]0)"
    r"(?:[ \t]?(?P<cardsuf>ti[ \t]super|ti|super)(?![a-z0-9]))?(?![\d.:/%-])"
    r"(?![ \t]*(?:mhz|mb|gb|w|rpm|ms|steps?|samples?|images?|iter\w*|epochs?|it/s|tokens?)\b)"
    # a bare number that Chinese calls a card: "一张3090显卡", "两张3090卡", "3090ti显卡"
    r"|(?P<cjk>[2-5]0[6-9]0)(?:[ \t]?(?P<cjksuf>ti[ \t]super|ti|super))?(?=[ \t]*(?:显卡|卡))"
)
# Data-centre and workstation parts by their names; the short ones (T4, L4, A10, P40) only after NVIDIA or Tesla,
# where they cannot be a hex digit pair, a paper size or a row of a table.
_DATACENTER = lazy(
    r"(?P<name>gb10|gb[23]00|gh200|b[12]00|h[12]00|h800|h20|a100|a800|l40s|l40|v100s?|p100|k80"
    r"|rtx[ \t]?(?:pro[ \t])?[456]000(?:[ \t]?(?:ada|pro))?|rtx[ \t]?a\d{4}|titan[ \t](?:rtx|v|xp))(?![\w-])"
    r"|(?<![\w-])(?P<ampere>a[2-6][05]00)(?![\w-])"  # Ampere's workstation cards without their RTX: "A6000"
    r"|(?:nvidia|tesla)[ \t](?P<short>t4|l4|a2|a10g?|a16|a30|a40|p4|p40|m40|m60|k40|k80)\b"
    r"|(?<=[1-9][x×])(?P<counted>t4|l4|a10g?|a16|a30|a40|p40)\b"  # counted, the x against the name: "a 2xT4 machine", "4xA10G"
    # Kepler boards by their full names: "Tesla K40m", "tesla k40m的显卡", "K20Xm", "K40c" (a CJK letter after
    # one is no word boundary to `re`: only ASCII letters and digits may not follow)
    r"|(?:nvidia|tesla)[ \t](?P<kepler>k(?:10|20x?|40|80)(?:m|c)?)(?![a-z0-9])"
)


# A compute capability said in words: "cuda capability 2.1", "compute capability: 6.1", "GT 630M => cuda
# capability 2.1" (torch's own warnings say it too; they are the catalogue's, and agree)
_CAPABILITY = lazy(
    r"\b(?:cuda|compute)[ \t]+capabilit(?:y|ies)[ \t]*(?:of[ \t]+|is[ \t]+|[:=][ \t]*|\(CC\)[ \t]*)?"
    r"(?P<cc>1[0-2]\.\d|[1-9]\.\d)(?![\d.])",
    re.IGNORECASE,
)
# ...unless it is a capability a program needs or supports, not this GPU's ("requires compute capability 7.0 or
# higher", "supports CUDA capability 3.5 and up"): "my old graphics card => cuda capability 2.1" is the GPU's
_CAPABILITY_NEEDED = lazy(
    r"\b(?:requires?|required|needs?|minimum|at[ \t]+least|supports?|supported|min)\b[^\n.]{0,30}$"
    r"|^[ \t]*(?:\+|or[ \t]+(?:newer|later|above|higher)|and[ \t]+(?:up|above|newer|higher))",
    re.IGNORECASE,
)


# Words before a bare card number that make it the card that left: "replaced the 3090", "sold my 2080"
_GONE_CARD = lazy(r"\b(?:replac\w*|swapp\w*|sold|from)[ \t]+(?:the|my|a|our)[ \t]+$")


def _starts_a_name(text: str, at: int, also: str = "") -> bool:
    """Nothing of a word (ASCII letter, digit, _ or -, and `also`) just before `at`, unless a count: "4x", "10x"."""
    before = text[at - 1] if at else " "
    if before in "x×" and at >= 2 and text[at - 2] in "123456789":
        return True
    if before in "x×" and at >= 3 and text[at - 2] == "0" and text[at - 3] in "123456789":
        return True
    return not (before.isascii() and (before.isalnum() or before in "_-" + also))


# The CUDA the person says their machine has, owned ("I have CUDA 11.4 installed", "I am using cuda11.4", "my
# CUDA version is 12.1"), a driver's ("the drivers for that is cuda 11.4", "driver supports CUDA 11.4") or an
# issue template's answer ("* CUDA/cuDNN version: 11.4"); never a build's ("compatible with CUDA 11.3", "torch
# built with CUDA 12.1": no owner before it)
_CUDA_OWNED = OnLines(
    lazy(
        r"(?:\b(?:i|i'm|i've|we|we're|my|our)\b|\b(?:pc|machine|system|server|computer|laptop)\b|\bdrivers?\b)"
        r"[^\n.;?!]{0,40}?\b(?:using|use|have|has|had|installed|running|run|got|is|supports?|for)\b[^\n.;?!]{0,16}?"
        r"\bcuda[ \t_-]?(?:version[ \t]*|toolkit[ \t]*)?(?:is[ \t]+|[:=][ \t]*)?v?(?P<cuda>1[0-3]\.\d)\b(?!\.\d{3})"
        r"|^[ \t*#-]*cuda(?:[ \t]*/[ \t]*cudnn)?[ \t]+version[^\n:：]{0,20}[:：][ \t]*v?(?P<template>1[0-3]\.\d)\b",
        re.IGNORECASE | re.MULTILINE,
    ),
    ("cuda", "version"),
)
# Asking for, or missing, a build for that CUDA ("Could you build one with this version?", "which you do not
# provide install doc on this version cuda", "is CUDA 11.4 supported?", "which torch version should I install")
_ASKS_BUILD = lazy(
    r"\bbuild[ \t]+(?:one|it|pytorch|torch|a[ \t]+(?:version|wheel|binary))[ \t]+(?:with|for)\b"
    r"|\b(?:do(?:es)?[ \t]*n[o']?t|don't|doesn't)[ \t]+(?:provide|have|offer|support|ship)\b[^\n?]{0,40}"
    r"\b(?:this[ \t]+version|cuda)"
    r"|\b(?:is|does|will)[ \t]+(?:pytorch|torch|it)?[ \t]*(?:support(?:ed)?|compatible|available)\b[^\n.?]{0,30}"
    r"\bcuda[ \t_-]?1[0-3]\.\d[^\n.?]{0,20}\?"
    r"|\bwhich[ \t]+(?:pytorch|torch)?[ \t]*(?:version|build|wheel)\b[^\n.?]{0,40}(?:install|use|download)"
    # "the PyTorch just seems compatible with CUDA 11.3 and nothing else", "Build PyTorch to be supported by Cuda"
    r"|\b(?:pytorch|torch)\b[^\n.?]{0,30}\b(?:only|just)\b[^\n.?]{0,20}"
    r"\b(?:compatible|supports?|available|provides?)\b[^\n.?]{0,10}\bcuda"
    r"|\bbuild[ \t]+(?:pytorch|torch)\b[^\n.?]{0,30}\bcuda",
    re.IGNORECASE,
)
# The person says the thing fails, with no error shown: "vllm serve can not work on two 3090", "It turned out
# to errors related to NCCL", "the web UI shows no CUDA support and 0 VRAM", "单机多卡运行报错" (blind set 20: seven
# such pastes got "No problem found" and exit 0)
_FAILS = OnLines(
    lazy(
        r"\b(?:can[ \t]?not|can't|cannot|could[ \t]?not|couldn't|unable[ \t]+to|fails?[ \t]+to|failed[ \t]+to)[ \t]+"
        r"(?:\w+[ \t]+)?(?:work|run|start|load|launch|train|detect|recogni[sz]e|enable|initiali[sz]e|use)\b"
        r"|\b(?:does[ \t]?n[o']?t|doesn't|did[ \t]?n[o']?t|didn't|do[ \t]?n[o']?t|don't|is[ \t]?n[o']?t|isn't)[ \t]+"
        r"(?:being[ \t]+)?(?:work(?:ing)?|run(?:ning)?|detect(?:ed)?|recogni[sz]ed?|available|see|use|using)\b"
        # "it wasn't using GPU", "not using the GPU", "is_available() false when running with accelerate launch"
        r"|\b(?:was|were|is|are)(?:[ \t]+not|n't)[ \t]+using\b|\bnot[ \t]+using[ \t]+(?:the[ \t]+|my[ \t]+)?(?:gpu|cuda)\b"
        r"|\bis_available\(\)[ \t]*(?:is[ \t]+|=[ \t]*|returns?[ \t]+)?false\b"
        r"|\b(?:was|were|is|are)[ \t]+not[ \t]+detected\b"  # "Cuda Environment was not detected"
        # a title's "Accelerate Config Error", "Installation error"
        r"|\b(?:config(?:uration)?|runtime|install(?:ation)?|launch|import)[ \t]+error\b"
        # "Unknown error in configuring multiple GPU", "accelerate Fails with 3 GPUs but Works with 2 GPUs"
        r"|\b(?:unknown|strange|weird|an)[ \t]+error[ \t]+(?:in|when|while|during)\b|\bfails[ \t]+(?:with|on|when|under)\b"
        # "I ran into the problem", never a program's "If you run into issues, please report"
        r"|(?<!if you )(?<!if you've )\b(?:ran|run|running|came)[ \t]+(?:into|across)[ \t]+(?:(?:the|this|a|an|same|similar)[ \t]+)?"
        r"(?:problem|issue|error|bug)s?\b"
        r"|\berrors?[ \t]+(?:related|about|with|when|occur\w*)\b"
        r"|\b(?:get|got|getting|throws?|raises?|gives?|see|shows?|hit|encounter\w*|face)[ \t]+"
        r"(?:an?[ \t]+|the[ \t]+|this[ \t]+|that[ \t]+|some[ \t]+)?(?:[\w-]+[ \t]+)?errors?\b"
        r"|报错|出错|失败|运行不了|跑不起来|无法运行|(?:无法|不能|没法)(?:调用|使用)[ \t]*gpu|调用不了|用不了[ \t]*gpu"
        r"|\b(?:prints?|returns?|gives?|shows?)[ \t]+`?False\b"
        r"|\bno[ \t]+CUDA[ \t]+support\b|(?<![\w.])0[ \t]*VRAM\b",
        re.IGNORECASE,
    ),
    (
        "across",
        "available",
        "can",
        "could",
        "detect",
        "error",
        "fail",
        "false",
        "gpu",
        "into",
        "recogni",
        "run",
        "see",
        "support",
        "unable",
        "use",
        "using",
        "vram",
        "work",
        "出错",
        "失败",
        "报错",
        "无法运行",
        "调用不了",
        "跑不起来",
        "运行不了",
    ),
)
# a failure said of finding the GPU: "GPU not recognized by torch", "my gpu can not enable", "no GPU found", "Ollama
# can not use Nvidia 6000 ada GPU", "it wasn't using GPU", "无法调用gpu"; never what a running job does on it
# ("Training on the GPU fails after 3 epochs")
GPU_NOT_FOUND = lazy(
    r"\b(?:gpu|cuda|device|nvidia)\b[^.\n]{0,40}?(?:\bnot|n't)[ \t]+(?:be(?:ing)?[ \t]+)?(?:detected|recogni[sz]ed"
    r"|found|available|enabled|used|enable|detect|find|use)\b"
    r"|\b(?:no|can'?t[ \t]+(?:find|see|detect|use))[ \t]+(?:the[ \t]+)?(?:gpu|cuda)\b"
    r"|\bcan[ \t]?not[ \t]+(?:find|see|detect|use)[ \t]+(?:the[ \t]+|my[ \t]+)?(?:\w+[ \t]+){0,3}?(?:gpus?|cuda|card)\b"
    r"|(?:\bnot|n't)[ \t]+using[ \t]+(?:the[ \t]+|my[ \t]+)?(?:gpu|cuda)\b|(?:无法|不能|没法)(?:调用|使用)[ \t]*gpu"
    r"|\bis_available\(\)[ \t]*(?:is[ \t]+|=[ \t]*|returns?[ \t]+)?false\b",
    re.IGNORECASE,
)
# what a shown `print(torch.cuda.is_available())` gives, in words: "but pytorch-1.4 prints False"
_PRINTS_FALSE = lazy(r"\b(?:prints?|printed|returns?|returned|gives?|shows?)[ \t]+`?false\b")
# ... never where it says there is none, or only supposes one
_NO_FAILURE = lazy(
    r"\b(?:no|without(?:[ \t]+any)?|zero)[ \t]+errors?\b|\berror[ \t-]?free\b|\bif[ \t]+it[ \t]+fails\b"
    r"|\bworks?[ \t]+(?:fine|well|perfectly)\b"
    r"|\b(?:didn'?t|did[ \t]+not|don'?t|do[ \t]+not|never)[ \t]+(?:get|see|have|hit)[ \t]+(?:any[ \t]+)?errors?\b"
    r"|\bfeature[ \t]+request\b|\bnot[ \t]+a[ \t]+bug\b",
    re.IGNORECASE,
)
# The driver's version, said in words: the kernel module's banner, nvidia-smi's label anywhere, "driver 535.104.05"
_DRIVER = lazy(
    r"Kernel Module(?:[ \t]+for[ \t]+\w+)?[ \t]+(?P<nvrm>\d{3}\.\d{1,3}(?:\.\d{1,3})?)"  # NVRM's line
    r"|Driver Version[ \t]*[:：][ \t]*(?P<smi>\d{3}\.\d{1,3}(?:\.\d{1,3})?)"
    r"|NVIDIA-Linux-(?:x86_64|aarch64)-(?P<run>[1-9]\d{2}\.\d{2,3}(?:\.\d{1,3})?)"  # its .run installer's name
    # "driver 535.54", "- **Driver**: 580.82.09", "**CUDA driver:** 580.105.08": markdown's emphasis around
    # the label or its colon,
    # or around the value ("- Driver: **595.71.05** (open kernel modules)")
    r"|\bdriver(?:[ \t]+version)?(?:\*\*|__)?(?:[ \t]*[:=])?(?:\*\*|__)?[ \t]*(?:\*\*|__|`)?"
    r"(?P<said>[1-9]\d{2}\.\d{2,3}(?:\.\d{1,3})?)\b"
    # an issue template's heading, its answer on a line below ("### NVIDIA Open GPU Kernel Modules Version")
    r"|^\#{2,4}[ \t]+[^\n]*\b(?:Kernel Modules?|Driver) Version[ \t]*\n(?:[ \t]*\n)*[ \t]*"
    r"(?P<heading>[1-9]\d{2}\.\d{2,3}(?:\.\d{1,3})?)[ \t]*$"
    # "the nvidia driver vision of my machine is 381.22": a few words, then "is" and the version
    r"|\bdriver\b[^\n.\d,;]{1,40}?\b(?:is|was)[ \t]+(?P<said2>[1-9]\d{2}\.\d{2,3}(?:\.\d{1,3})?)\b"
    r"(?![ \t]*(?:[KMGT]i?B|%|W|MHz|GHz)\b)",
    re.IGNORECASE | re.MULTILINE,
)
# A Linux distribution named with its release: "on Ubuntu 22.04.5 LTS", "Pop!_OS 24.04 LTS", "- **OS:** Ubuntu
# 24.04" (the first words of triage.facts' distribution table; never an image tag such as ubuntu22.04, nor an
# issue template's example, "OS Platform and Distribution (e.g., Linux Ubuntu 16.04):", blind set 25)
# Ubuntu's own kernel flavours in a kernel release (`uname -r`, `dkms status`, collect_env's platform):
# "5.15.0-86-generic", "6.8.0-45-lowlatency"; Debian's are "-amd64", Fedora's ".fc40", Arch's "-arch1-1". A
# package's version is no release: GCC's "(Ubuntu 14.2.0-4ubuntu2~24.04.1)" (blind set 28: /proc/driver/nvidia/version)
# (blind set 26: a misspelt "Ubunutu" beside `dkms status` lines, tseliot/nvidia-graphics-drivers#62)
_UBUNTU_KERNEL = lazy(r"(?<![\w.])\d+\.\d+\.\d+-\d+-(?:generic|lowlatency)\b")
_DISTRO = lazy(
    r"(?<![\w/:.-])(?<!e\.g\.,[ \t]Linux[ \t])(?<!e\.g\.[ \t]Linux[ \t])(?<!e\.g\.,[ \t])(?<!e\.g\.[ \t])"
    r"(?P<name>Ubuntu|Debian(?:[ \t]+GNU/Linux)?|Fedora(?:[ \t]+Linux)?|Pop!_OS|Linux[ \t]+Mint"
    r"|Rocky[ \t]+Linux|AlmaLinux|CentOS(?:[ \t]+Stream|[ \t]+Linux)?|Red[ \t]+Hat[ \t]+Enterprise[ \t]+Linux"
    r"(?:[ \t]+Server)?|openSUSE[ \t]+Leap)[ \t]*(?P<version>\d{1,2}(?:\.\d{1,2}){0,2})(?![\w.-])"
    r"(?:[ \t]+LTS)?",
    re.IGNORECASE,
)
# Ubuntu by a cloud image's name: "Ubuntu-2404-lts-amd64", "ubuntu-2204-lts", "ubuntu-minimal-2404-lts"
_UBUNTU_IMAGE = lazy(
    r"(?<![\w/:.-])ubuntu(?:-minimal|-accelerator|-pro)?[-_](?P<yy>1[4-9]|2\d)(?P<mm>04|10)"
    r"(?:[-_](?:lts|amd64|arm64|noble|jammy|focal|v\d+)\b|(?![\w.-]))",
    re.IGNORECASE,
)
# A Jetson by its name or its software: "Jetson orin agx", "AGX Orin", "Jetpack 6.2", "L4T R35.3.1"
_JETSON = lazy(
    r"\bJetson[ \t_-]+(?:AGX[ \t_-]+|NX[ \t_-]+)?(?P<model>Orin|Xavier|Nano|TX2|TX1|Thor)\b"  # a host name too
    r"|\b(?P<kit>JetBot|Jetracer)\b"  # NVIDIA's robot kits, on a Jetson Nano
    r"|\bJetson[ \t]+(?P<family>AGX|NX)\b"  # "jetson NX": the Xavier NX, "Jetson AGX": the AGX Xavier
    r"|\b(?:AGX|NX)[ \t]+(?P<model2>Orin|Xavier|Thor)\b"
    r"|\bJet[Pp]ack(?:[ \t]+Version)?[ \t*:]*(?P<jetpack>\d+(?:\.\d+){0,2})"  # "**JetPack Version:** 5.1.2"
    # `apt show nvidia-jetpack`: "Package: nvidia-jetpack", then "Version: 4.6-b199"
    r"|\bnvidia-jetpack[ \t]*\r?\n[ \t]*Version:[ \t]*(?P<jetpack2>\d+(?:\.\d+){0,2})"
    r"|\b(?:on|my|a|the|with)[ \t]+(?P<model3>TX2|TX1)\b"  # "I'm running on Tx2 Devboard": only Jetsons
    r"|\bJet[Pp]ack[ \t]*(?:[<>]=?|v(?=\d))[ \t]*\d"  # "Jetpack<6": a Jetson, its release not said
    r"|\bL4T(?:[ \t]+Release)?[ \t*:]*R?(?P<l4t>\d{2}\.\d+(?:\.\d+)?)"  # "**L4T Release:** R35.4.1"
    # NVIDIA's L4T container images by their tag ("nvcr.io/nvidia/l4t-pytorch:r32.4.2-pth1.5-py3"): a Jetson,
    # and the L4T release the image was built for, which need not be the host's
    # (dustynv's own images put the release after their name: "ros:noetic-pytorch-l4t-r32.5.0")
    r"|\bl4t-(?:[a-z0-9-]+:)?r(?P<image>\d{2}\.\d+(?:\.\d+)?)",
    re.IGNORECASE | re.ASCII,  # ASCII word edges: "我的Xavier是JETPACK5.1.5" names JetPack beside CJK letters
)
# The boards by how they are written ("jetson NX" is the Xavier NX; an AGX without its chip, the AGX Xavier)
_JETSON_MODELS = {
    "orin": "Orin", "xavier": "Xavier", "nano": "Nano", "tx2": "TX2", "tx1": "TX1", "thor": "Thor",
    "nx": "Xavier NX", "agx": "AGX Xavier",
}  # fmt: skip
# An AMD card by name, for its gfx target (compat.rocm_gfx.PRODUCT_TARGETS knows which): "amd rx6600"
_AMD = lazy(
    r"(?<![A-Za-z0-9])(?:RX[ \t]?\d{4}|Radeon[ \t]?\d{3,4}[MS]?|Strix[ \t]?(?:Halo|Point)|Ryzen[ \t]?AI[ \t]?Max"
    r"|Navi[ \t]?[1-4]\d"  # the chip's code name ("navi10")
    r"|gfx1[0-2][0-9a-f]{2}|gfx9[0-9a-f]{2})(?![0-9a-f])"  # or the gfx target itself, said ("gfx1010:xnack-")
    rf"|{BARE_XT}",  # "5700XT", "7900 XTX": a Radeon by its number and suffix alone
    re.IGNORECASE,
)
# The person says the machine has no NVIDIA GPU: "I don't have any NVIDIA adapter", an integrated Intel GPU,
# Iris Xe, Arc, "我使用的是cpu". Never an error's own words ("No CUDA GPUs are available"), never "I don't have
# another GPU to test with", never "works when I'm running on CPU".
_NO_NVIDIA = OnLines(
    lazy(
        # never what a program says of the machine ("torch says I have no GPU"), nor "no GPU memory left", "didn't
        # have GPU issues before"
        r"(?<!says )(?<!that )(?<!thinks )\bI[ \t]+(?:do[ \t]*n[o']?t|don'?t|dont|did[ \t]*n[o']?t|didn'?t)[ \t]+have[ \t]+(?:an?[ \t]+|any[ \t]+)?(?:n(?:vidia|ivida|vida|videa|vdia)[ \t]+|dedicated[ \t]+|discrete[ \t]+)?"
        r"(?:gpus?|graphics[ \t]+cards?|adapters?|cards?)\b(?![ \t]+(?:issues?|problems?|errors?|memory|acceleration|support))"
        r"|(?<!says )(?<!that )(?<!thinks )\bI[ \t]+have[ \t]+no[ \t]+(?:n(?:vidia|ivida|vida|videa|vdia)[ \t]+|dedicated[ \t]+|discrete[ \t]+)?"
        r"(?:gpus?|graphics[ \t]+cards?|adapters?|cards?)\b(?![ \t]+(?:issues?|problems?|errors?|memory|acceleration|support))"
        # "my system doesn't have Nvidia GPU", "this laptop has no dedicated GPU", "there is no NVIDIA card"
        r"|(?<!says )(?<!that )\b(?:my|this|the|our)[ \t]+(?:system|machine|computer|laptop|pc|server|device|box)[ \t]+"
        r"(?:does[ \t]*n[o']?t[ \t]+have|doesn'?t[ \t]+have|has[ \t]+no|lacks)[ \t]+(?:an?[ \t]+|any[ \t]+)?"
        r"(?:n(?:vidia|ivida|vida|videa|vdia)[ \t]+|dedicated[ \t]+|discrete[ \t]+)?(?:gpus?|graphics[ \t]+cards?|cards?)\b"
        r"(?![ \t]+(?:issues?|problems?|errors?|memory|acceleration|support|drivers?|installed|visible|detected|found))"
        # "my Laptop since it doesn't have an NVIDIA graphics card" (blind set 29: a WSL laptop)
        r"|\b(?:since|as|because)[ \t]+it[ \t]+(?:does[ \t]*n[o']?t[ \t]+have|doesn'?t[ \t]+have|has[ \t]+no)[ \t]+"
        r"(?:an?[ \t]+|any[ \t]+)?(?:n(?:vidia|ivida|vida|videa|vdia)[ \t]+|dedicated[ \t]+|discrete[ \t]+)?"
        r"(?:gpus?|graphics[ \t]+cards?|cards?)\b"
        r"(?![ \t]+(?:issues?|problems?|errors?|memory|acceleration|support|drivers?|installed|visible|detected|found|passed))"
        r"|(?<!says )(?<!that )\bthere[ \t]+is[ \t]+no[ \t]+(?:n(?:vidia|ivida|vida|videa|vdia)|dedicated|discrete)[ \t]+(?:gpu|graphics[ \t]+card|card)\b"
        r"(?![ \t]+(?:drivers?|installed|visible|detected|found))"
        r"|\b(?:integrated|only(?:[ \t]+an?)?)[ \t]+intel[ \t]+(?:gpu|iris|uhd|hd[ \t]+graphics|arc)\b|\biris[ \t]+xe\b|\bintel[ \t]+arc\b"
        r"|使用的?是[ \t]*cpu|用的是[ \t]*cpu|没有(?:独立|nvidia[ \t]*)?显卡"
        # or the person asks for the CPU: "How can i run this code on CPU", "I want to train on the cpu" (not "it is
        # running on CPU", the complaint of someone who wants the GPU)
        r"|(?P<cpu>\b(?:how[ \t]+(?:can|do|could|to)|want[ \t]+to|wish[ \t]+to|like[ \t]+to|need[ \t]+to)\b"
        r"(?:(?!gpu|cuda|\bnot\b)[^.\n?]){0,40}?\bon[ \t]+(?:the[ \t]+|my[ \t]+)?cpu\b"
        # "since im running code on cpu windows 10 and disabled cuda()": the CPU on purpose
        r"|\b(?:since|as|because)[ \t]+(?:i'?m|i[ \t]+am|we'?re|we[ \t]+are)[ \t]+running\b(?:(?!gpu|cuda|\bnot\b)[^.\n?]){0,30}?"
        r"\bon[ \t]+(?:the[ \t]+|a[ \t]+)?cpu\b|\bdisabled[ \t]+(?:the[ \t]+|all[ \t]+)?\.?cuda\(?\)?"
        # "(I am using CPU only)", "we're on a CPU-only machine": the CPU said as the setup, not as a complaint ("I'm
        # running on CPU only even though I have a 3090")
        r"|\b(?:i'?m|i[ \t]+am|we'?re|we[ \t]+are)[ \t]+(?:using|running[ \t]+on|on)[ \t]+(?:the[ \t]+|a[ \t]+)?cpu[ \t-]+only\b"
        r"(?![^\n]{0,50}\b(?:but|though|although|even|instead|despite|gpu|cuda)\b)"
        # (never torch's own "If you are running on a CPU-only machine, please use torch.load with map_location")
        r"|(?<!running on a )\bcpu[ \t-]+only[ \t]+(?:machine|system|computer|pc|laptop|server|box)\b"
        r"(?![^\n]{0,50}\b(?:but|though|although|even|instead|despite)\b))",
        re.IGNORECASE,
    ),
    ("cpu", "disabled", "does", "has", "have", "intel", "iris", "lacks", "only", "running", "there", "没有"),
)
# A laptop's second GPU, said so ("NVIDIA GPU" alone is not: torch's own error says "you have an NVIDIA GPU")
_DUAL = lazy(r"geforce|quadro|\b[rg]tx[ \t]?\d|dedicated[ \t]+gpu|discrete[ \t]+gpu|\bdgpu\b|optimus")
# CUDA unavailable, said in words: "torch.cuda.is_available() returns False", "is_available()\ni get false",
# "Cuda available: False", "cuda device is not avaliable"; or the process killed by an illegal instruction
_TORCH_FAILS = lazy(
    # "false" without \b: in "为false" the CJK letter before it is a word character to `re`
    r"(?<![A-Za-z0-9_.])(?:torch\.)?(?:cuda\.)?is_available\(\)[^\n]{0,60}?(?<![a-z])false\b"
    r"|(?<![A-Za-z0-9_.])(?:torch\.)?cuda\.is_available(?![\w(])[^\n]{0,60}?(?<![a-z])false\b"  # without ()
    # the answer on a line of its own, after the call's line ends ("...is_available())\"" then "False"), or a
    # few lines below (a fenced `print(...)` and then `False`)
    r"|is_available\(\)[ \t]*\n[^\n]{0,40}?(?<![a-z])false\b"  # "torch.cuda.is_available()" / "i get false"
    r"|is_available\(\)[^\n]{0,24}(?:\n[^\n]{0,80}){0,3}?\n[ \t`>*]*false\b"
    r"|\bcuda[ \t]+(?:device[ \t]+)?(?:is[ \t]+)?not[ \t]+avai?l|\bno[ \t]+cuda[ \t]+(?:is[ \t]+)?avai?lable"
    r"|\bcuda[ \t]+(?:is[ \t]+|was[ \t]+|stays[ \t]+|remains[ \t]+)?unavailable\b"  # "torch shows 2.8.0+cpu and CUDA unavailable"
    # "No CUDA Environment found", "no cuda device detected": never "CUDA toolkit not found" (nvcc, a build)
    r"|\bno[ \t]+cuda[ \t]+(?:environment|devices?|gpus?)[ \t]+(?:was[ \t]+|were[ \t]+)?(?:found|detected)\b"
    # "I'm not able to train on GPU", "can't use the GPU", "unable to run it on cuda"
    # the GPU as the clause's end, not "cannot use CUDA graphs", "unable to use GPU 1", "cannot use cuda:1"
    r"|\b(?:not[ \t]+able[ \t]+to|unable[ \t]+to|can'?t|cannot)[ \t]+(?:use|train[ \t]+on|run[ \t]+(?:it[ \t]+)?on)"
    r"[ \t]+(?:the[ \t]+|my[ \t]+)?(?:gpu|cuda)(?=[ \t]*(?:[.,;!?)]|$)|[ \t]+(?:at[ \t]+all|anymore|with|in|on|when|"
    r"while|and|but|getting|even)\b)"
    r"|(?<!is )\bcuda[ \t]+available[ \t]*[:=]?[ \t]*false\b"  # not collect_env's own "Is CUDA available: False"
    # "when attempting to activate CUDA, it shows as 0 or false", "device_count() returns 0"
    r"|\bcuda\b[^.\n]{0,40}?\b(?:shows?|showing|returns?|returning|gives?|says?)[ \t]+(?:as[ \t]+)?(?:0[ \t]+or[ \t]+)?false\b"
    r"|device_count\(\)[^\n]{0,30}?(?:\b(?:returns?|is|gives?|shows?)|=+)[ \t]*0\b"
    # the answer said before the question: "from an empty notebook - I get False." above `torch.cuda.is_available()`
    r"|\bi[ \t]+(?:get|got|am[ \t]+getting)[ \t]+(?:a[ \t]+)?false\b(?=[\s\S]{0,200}?is_available\(\))"
    r"|(?P<illegal>illegal[ \t]+instruction)"
)
# A model fully fine-tuned, said with its size: the size in its name or words ("llama-7b-hf", "Llama-2-13b",
# "Qwen2.5-14B-Instruct", "a 7B model", "7 billion parameters"; never "bf16", "sm_80" or "q4_0.bin"), fine-tuning
# words or a training script's flags, and no LoRA, QLoRA or PEFT named (training size: triage/sizing.py)
_MODEL_SIZE = lazy(
    r"(?<![\w.])(?:[A-Za-z][A-Za-z0-9.]*[-_])+(?:[A-Za-z0-9.]+[-_])*?(?P<n>\d{1,3}(?:\.\d{1,2})?)[bB](?![A-Za-z0-9])"
    r"|(?<![\w.])(?P<n2>\d{1,3}(?:\.\d{1,2})?)[ \t]?(?:[bB]|billion)[ \t]+(?:param|model|llm)",
)
_TRAINING = lazy(
    r"fine[- ]?tun|full[- ]parameter|\btrain(?:ing)?\.py\b|--do_train\b|微调|全量|全参", re.IGNORECASE
)
_ADAPTERS = lazy(r"\b(?:q?lora|peft|adapters?)\b|--use_lora|--lora_", re.IGNORECASE)
# the job is inference, whatever was trained before: "loading the fine-tuned checkpoint for inference"
_INFERENCE = lazy(r"\binference\b|\bgenerat(?:e|ion)\b|\bserv(?:e|ing)\b|推理", re.IGNORECASE)
# The model is run, not trained: vLLM's LLM(...) or `vllm serve`, transformers' from_pretrained or pipeline (or
# _INFERENCE's words); a quantized model (AWQ, GPTQ, GGUF, 4-bit, fp8) is sized by its own format, so it is left out
_RUNS_MODEL = lazy(r"\bLLM\(|\bvllm[ \t]+serve\b|\bfrom_pretrained\(|\bpipeline\(", re.IGNORECASE)
_QUANTIZED = lazy(
    r"awq|gptq|gguf|\bint[48]\b|(?<!\d)[48][- ]?bit|bnb|bitsandbytes|\bfp8\b|\bq[2-8]_|quantiz|\bexl2\b",  # not "64-bit"
    re.IGNORECASE,
)
# the machine was updated before it broke: "after recent ubuntu update", "ran some updates", "apt upgrade"
# (not an update of torch or another package: those are pip's)
_UPDATED = lazy(
    r"\bafter[ \t]+(?:an?[ \t]+|the[ \t]+|my[ \t]+|some[ \t]+)?(?:recent[ \t]+)?"
    r"(?:ubuntu|system|apt|os|driver|kernel|nvidia|security|software)[ \t]+(?:update|upgrade)s?\b"
    r"|\bran[ \t]+(?:some[ \t]+)?updates?[ \t]+(?:in|on)[ \t]+(?:ubuntu|linux|debian|the system)\b"
    r"|\bapt(?:-get)?[ \t]+(?:dist-|full-)?upgrade\b|\bsystem[ \t]+(?:update|upgrade)[ \t]+(?:broke|yesterday)"
    # "before I reinstall the Nvidia driver", "after updating my nvidia driver"
    r"|\b(?:re-?install(?:ed|ing)?|updat(?:e|ed|ing)|upgrad(?:e|ed|ing))[ \t]+(?:the[ \t]+|my[ \t]+)?(?:nvidia[ \t]+)?"
    r"(?:gpu[ \t]+)?drivers?\b",
    re.IGNORECASE,
)
# A machine whose driver its user cannot change: a batch scheduler's words or commands, `module load` (as written),
# and, in the lowered text, the words of a cluster or of no root ("no sudo", "can't update the driver")
_SCHEDULER = lazy(r"\b(?:SLURM|srun|sbatch|salloc|qsub|PBS|LSF|bsub|HPC)\b|\bmodule[ \t]+load\b")
_SHARED_SAID = OnLines(
    lazy(
        r"\b(?:(?:computing|compute|university|school|lab'?s?|shared)[ \t]+(?:cluster|server|node)s?|cluster[ \t]+node)\b"
        r"|\b(?:no|without)[ \t]+(?:root|sudo|admin)\b|\b(?:can'?t|cannot|can[ \t]+not|unable[ \t]+to|not[ \t]+allowed[ \t]+to)"
        r"[ \t]+(?:update|upgrade|change|install)[ \t]+(?:the|my|our|its)[ \t]+(?:(?:nvidia|gpu|host|server)'?s?[ \t]+)*drivers?"
        r"|\bdriver[ \t]+(?:can'?t|cannot|can[ \t]+not)[ \t]+be[ \t]+(?:updated|upgraded|changed)"
        # Chinese: "没办法更新机器GPU驱动" (no way to update the machine's GPU driver, Kronos#71), "无法升级驱动",
        # "不能更新驱动", "没有root/sudo权限"
        r"|(?:没办法|没有办法|无法|不能|没法)(?:更新|升级|更换|安装)[^\n，。,.]{0,12}驱动|没有[ \t]*(?:root|sudo|管理员)[ \t]*权限"
    ),
    ("admin", "cluster", "driver", "node", "root", "server", "sudo", "没有", "驱动"),
)
_SCHEDULER_WORDS = ("slurm", "srun", "sbatch", "salloc", "qsub", "pbs", "lsf", "bsub", "hpc", "module load")
# the job spans machines and one of them alone works: "works on 1 node", "single node is fine", "two nodes"
_ACROSS_NODES = lazy(
    r"\b(?:multi[- \t]?nodes?|multiple[ \t]+(?:nodes|machines|servers)|(?:two|2|several)[ \t]+(?:nodes?|machines|servers)"
    r"|across[ \t]+(?:nodes|machines)|--nnodes[= ]?[2-9]|nnodes[ \t]*=[ \t]*[2-9])",
    re.IGNORECASE,
)
# the failure came back, or came on another card too: "happened again", "both cards", "又停了", "两张3090"
_RECURS = lazy(
    r"\b(?:happen(?:s|ed)?[ \t]+again|again[ \t]+and[ \t]+again|keeps?[ \t]+(?:happening|crashing|dropping)|"
    r"both[ \t]+(?:gpus|cards)|(?:the[ \t]+)?other[ \t]+(?:gpu|card)[ \t]+(?:too|as[ \t]+well)|"
    r"on[ \t]+(?:every|each)[ \t]+(?:gpu|card))\b|又(?:停|挂|掉|出现)|再次出现|两张\S{0,6}卡|两张\d{4}",
    re.IGNORECASE,
)
_RECURS_WORDS = ("again", "both", "other", "every", "each", "keep", "又", "再次", "两张")  # one is needed
# the person finds work between GPUs slow: what a pasted topology matrix may explain
_SLOW = lazy(
    r"\b(?:slow(?:er|ly|s|down)?|performance|bandwidth|throughput|(?:inference|training)[ \t]+speed|bottleneck|"
    r"degrad\w*)\b|很慢|变慢|性能",
    re.IGNORECASE,
)
_SLOW_WORDS = ("slow", "perform", "bandwidth", "throughput", "speed", "bottleneck", "degrad", "慢", "性能")
# GPU memory asked about in words: "how much GPU memory need to fine tuning", "显存不够", "OOM"
_MEMORY_WORDS = lazy(
    r"\b(?:gpu|cuda|video|graphics)[ \t]+memory\b|\bvram\b|显存|\boom\b|out[ \t]+of[ \t]+memory|how[ \t]+much[ \t]+memory",
    re.IGNORECASE,
)


def line_number(text: str, found: re.Match[str]) -> int:
    """The 1-based line of the text a match starts on."""
    return text.count("\n", 0, found.start()) + 1


def line_around(text: str, found: re.Match[str]) -> str:
    """The whole line of the text a match is in."""
    end = text.find("\n", found.end())
    return text[text.rfind("\n", 0, found.start()) + 1 : end if end >= 0 else len(text)]


# A CPU build installed on purpose: an install command of torch's CPU build ("torch==1.5.1+cpu", the /whl/cpu
# index, conda's cpuonly), beside words that make the CPU the goal ("(cpu only)", "CPU training", "train on CPU"),
# outside an install line (blind set 15: detectron2 trained on the CPU, stopped by its default device 'cuda')
_CPU_INSTALL = lazy(
    r"\b(?:pip3?|conda|mamba|uv)\b[^\n]*\binstall\b[^\n]*(?:torch[^\s]*\+cpu\b|/whl/cpu\b|\bcpuonly\b)",
    re.IGNORECASE,
)
# the CPU build as what went wrong: "keeps giving me the cpu only version", "my torch is the cpu version"
_CPU_COMPLAINT = lazy(
    r"\b(?:giv(?:es|ing)|install(?:s|ed|ing)?|got|gets?|download(?:s|ed|ing)|pull(?:s|ed)|is|was|still|wrong)\b[^\n]{0,14}\Z"
    # or denied, or past: "I don't want CPU only", "Earlier I did CPU training"
    r"|\b(?:don'?t|do[ \t]+not|not|no[ \t]+longer|instead[ \t]+of|earlier|before|previously|at[ \t]+first|used[ \t]+to)\b[^\n.]{0,20}\Z",
    re.IGNORECASE,
)
# the words want the GPU: "I want my GPU", "want to train on it" after "the new GPU is in", "use cuda"
_GPU_WANTED = lazy(
    r"\b(?:want|wants|wanted|trying|try|need|needs|like)\b[^.\n]{0,30}?\b(?:gpu|cuda|nvidia)\b|\bnew[ \t]+gpu\b"
    r"|\bon[ \t]+(?:the|my)[ \t]+gpu\b",
    re.IGNORECASE,
)
_CPU_GOAL = lazy(
    r"\bcpu[ \t/-]*(?:only|training|version|mode)\b|\b(?:train|run)(?:ing)?[ \t]+(?:it[ \t]+)?on[ \t]+(?:the[ \t]+)?cpu\b",
    re.IGNORECASE,
)
# torch's CPU-only build said in words: "发现pytorch版本是cpu版本", "pytorch版本还是cpu", "torch is the CPU version",
# "pip installed the cpu-only build of torch" (never "instead of / not the CPU version", the build they avoided)
_CPU_BUILD_SAID = lazy(
    r"(?:py)?torch[^\n。，,；;]{0,20}?(?:是|为|还是|仍是|变成了?|装成了?)[ \t]*cpu(?![a-z])"
    r"|cpu[ \t]*版本?的?[ \t]*(?:py)?torch"
    r"|(?<![a-z])(?:py)?torch(?![a-z])[^\n.]{0,30}?(?<![a-z])(?:is|was|got|installed|installs|downloaded)[ \t]+"
    r"(?:the[ \t]+|a[ \t]+|only[ \t]+(?:the[ \t]+|a[ \t]+)?)?cpu(?:[ \t-]*only)?[ \t]+(?:version|build|wheel)\b"
    r"|(?<![a-z])(?:installed|got|downloaded|installs)[ \t]+(?:the[ \t]+|a[ \t]+)?cpu(?:[ \t-]*only)?[ \t]+"
    r"(?:version|build|wheel)[ \t]+of[ \t]+(?:py)?torch\b"
)
_SENTENCE_STOP = lazy(r"[.?!。？\n]")
_ASKED = lazy(r"\b(?:whether|if|how|check)\b[^\n.]*$|是否|吗")
_NOT_THE_CPU_BUILD = lazy(
    r"(?:instead[ \t]+of|not|rather[ \t]+than|avoid|uninstall(?:ed)?|remove[ds]?|不是|而不是)[^\n]{0,12}$"
)
# torch's version said by the person or an app's system-info block: "torch version 1.5.0", "PyTorch 2.1",
# "pyTorch version (v1.10.1)", "- **PyTorch:** 2.9.1+cu130", "Torch: 2.0.1+cu118". Never `torch==X` (an install
# command typed is not what is installed) nor "torchvision 0.16" (the lookbehind and the word's end).
_TORCH_SAID = lazy(
    r"(?<![\w./=-])(?:py)?torch(?![\w.-])(?:[ \t]+version)?[ \t]*\**[ \t]*(?:[:：][ \t]*\**[ \t]*|is[ \t]+|[ \t]*\.{3,}[ \t]*|[ \t]|\(v?"
    # "torch shows 2.8.0+cpu": a verb only before a whole version or a tagged one (never "torch reports 2.5 GB")
    r"|[ \t]+(?:still[ \t]+|always[ \t]+)?(?:shows?|says|reports|prints|returns)[ \t]+"
    r"(?=`?v?[12]\.\d{1,2}(?:\.\d{1,2}|\+[a-z]))"
    r")"
    r"`?v?(?P<version>[12]\.\d{1,2}(?:\.\d{1,2})?(?:(?:a|b|rc|\.dev)\d+)?(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*"
    r"|[ \t]\+[ \t](?:cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*)(?![\w.]))?)"
    r"(?:(?=(?:with|and|on|in|for)\b)|(?!\w|\.\w))",  # "PyTorch 2.8.0 + cu129" too; "pytorch 1.3.1with conda"
    re.IGNORECASE,
)
# xFormers' "built for" line: "PyTorch 2.9.0+cu128 with CUDA 1208 (you have 2.10.0+cu128)": the torch named first
# is the one xFormers was built for, the one in brackets the installed one (blind set 27: ltx-desktop#23)
# (triage/built_for.py moves a torch install to the build it names)
XFORMERS_BUILT_FOR = lazy(
    r"^[ \t]*(?P<torch>PyTorch)[ \t]+(?P<version>\d+\.\d+\.\d+)(?:\+(?P<variant>[a-z0-9]+))?[ \t]+with[ \t]+CUDA"
    r"[ \t]+\d+[ \t]+\(you[ \t]+have[ \t]+(?P<have>[12]\.\d{1,2}\.\d{1,2}(?:\+[a-z0-9]+)?)\)",
    re.MULTILINE | re.IGNORECASE,
)
# a torch wheel's file name, as a URL writes it ("torch-2.6.0.dev20241016%2Brocm6.2-cp312-..."): its version and
# build tag, where nothing else says which torch was installed
_TORCH_WHEEL = lazy(
    r"(?<![\w-])torch-(?P<version>[12]\.\d{1,2}\.\d{1,2}(?:\.dev\d+)?)(?:%2B|\+)(?P<tag>cu\d{2,3}|cpu|rocm\d+(?:\.\d+){0,2})"
    r"-cp\d+",
    re.IGNORECASE,
)
# what a package was built against, not what is installed: DeepSpeed's ds_report "deepspeed wheel compiled w.
# ...... torch 1.9, cuda 11.1"
_BUILT_AGAINST = lazy(r"\b(?:compiled|built)[ \t]+(?:w\.|with|against)[ \t.]*$", re.IGNORECASE)
# A pin with its build's tag, in words or a requirements line: "The requirement in the txt file,
# torch==1.7.1+cu101, is too low for this card". The tag names the build the project installs; an untagged pin
# does not (its build is the index's), and a pin in an install command is what was typed, not what is there.
_TORCH_PINNED = lazy(
    r"(?<![\w.-])torch[ \t]*==[ \t]*(?P<version>[12]\.\d{1,2}\.\d{1,2}\+(?:cu\d{2,3}|cpu|rocm\d+(?:\.\d+){1,2}))(?![\w.])",
    re.IGNORECASE,
)
# torch's version named a few words after it, tagged with its build: "checking the torch version reveals
# 2.0.0+cpu", "torch.__version__ returns 1.13.1+cu117" (the tag keeps a date or another package's number out)
_TORCH_TOLD = lazy(
    r"(?<![\w./=-])(?:py)?torch(?:\.__version__|[ \t]+version)\b[^\n.]{0,30}?(?<![\w.])"
    r"(?P<version>[12]\.\d{1,2}\.\d{1,2}\+(?:cu\d{2,3}|cpu|rocm\d+(?:\.\d+){1,2}))(?![\w.])",
    re.IGNORECASE,
)
# ... unless its line says the pin was not what got installed: "the requirements pin torch==1.7.1+cu101, but I
# ignored that", "the pin in environment.yml did not work"
_PIN_UNUSED = lazy(
    r"\b(?:ignor\w*|instead|did(?:n'?t| not)|does(?:n'?t| not)|not work\w*|fail\w*|tried)\b", re.I
)
_INSTALL_LINE = lazy(r"\b(?:pip3?|conda|mamba|uv)\b[^\n]*\binstall\b", re.IGNORECASE)
# Python's platform.platform() in an app's system-info block: "OS: Windows-11-10.0.26200-SP0"
# The GPU line of an environment report other than torch's (llamafactory-cli env, accelerate env, a template):
# "- GPU type: NVIDIA A100-PCIE-40GB", "- `GPU type`: Tesla V100", "- GPU: Quadro RTX 8000"; the name as NVML
# gives it
_TOOL_GPU = lazy(
    r"^[ \t>*-]*`?GPU(?:[ \t]+(?:type|name|model))?`?[ \t]*[:：][ \t]*(?P<name>(?:NVIDIA|Tesla|Quadro|GeForce)[ \t][^\n,;()]{1,60}?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
# Python's platform string of a Linux machine, as environment reports print it: "Linux-3.10.0-1160.102.1.el7.
# x86_64-x86_64-with-glibc2.17", "Linux-5.15.153.1-microsoft-standard-WSL2-x86_64-with-glibc2.35"
_LINUX_PLATFORM = lazy(
    r"\bLinux-(?P<kernel>\d+\.\d+\.\d+[\w.+-]*?)-(?:x86_64|aarch64|ppc64le)-with-(?:glibc|libc)"
)
_WINDOWS_PLATFORM = lazy(r"\bWindows-(?:10|11|2016Server|2019Server|2022Server)-10\.0\.\d{5}")
# `nvcc --version` of Windows' CUDA toolkit names its build's time zone in full ("Built on Fri_Jun_14_16:44:19_
# Pacific_Daylight_Time_2024"); Linux's abbreviates it ("..._PDT_2024")
_WINDOWS_NVCC = lazy(
    r"^Built on \w+_\w+_+\d+_[\d:]+_(?:Pacific|Eastern|Central|Mountain)_(?:Daylight|Standard)_Time_\d{4}$",
    re.M,
)
# Windows 10 or 11 named in words: "I am running windows 10", "本地win10机器" (a CJK letter before it is fine)
_WINDOWS_WORDS = lazy(r"(?<![A-Za-z0-9_-])(?:windows|win)[ \t]?(?:10|11)(?![A-Za-z0-9_.])", re.IGNORECASE)
# CUDA working, said in words: "got True when I run ... torch.cuda.is_available()", "is_available() returns True",
# "CUDA is available": beside a program's error, a contrast (the program hides what the shell sees)
_TORCH_WORKS = lazy(
    r"(?m)is_available\(\)[^\n]{0,60}?(?<![a-z])true\b|\bgot[ \t]+true\b[^\n]{0,60}?is_available"
    r"|(?<![a-z])(?<!not )\bcuda[ \t]+is[ \t]+available\b"
    r"|^[ \t>]*is[ \t]+cuda[ \t]+available[ \t]*:[ \t]*true\b"  # a print's label: "Is CUDA available: True"
    # a shown `print(torch.cuda.is_available())` whose first printed True or False, a few lines on, is True
    r"|print\([^\n]{0,40}?cuda\.is_available\(\)\)[^\n]*\n(?:(?![ \t\"'`>]*(?:true|false)[ \t\"'`]*$)[^\n]{0,30}\n){0,5}?"
    r"[ \t\"'`>]*true[ \t\"'`]*$"
)
# Windows' version with its build: "Microsoft Windows [Version 10.0.19042.1052]", "OS: Windows 10 (10.0.19041)"
_WINDOWS_BUILD = lazy(
    r"\b10\.0\.(?P<build>1\d{4}|2\d{4})(?:\.\d+)?\b"
    # "Windows 10 19042.928", "Windows 10 build 19045"
    r"|\bWindows[ \t]?1[01][ \t,]+(?:(?:OS[ \t]+)?build[ \t]+)?(?P<build2>1\d{4}|2\d{4})(?:\.\d+)?\b",
    re.IGNORECASE,
)
_WSL_WORDS = lazy(
    r"\bWSL[ \t]?2?\b|microsoft-standard-WSL|\bWindows[ \t]+Subsystem[ \t]+for[ \t]+Linux\b", re.IGNORECASE
)
# WSL 1 said: never an issue template's choice ("Are you using WSL 1 or WSL 2?", "WSL version 1/2", an unticked
# "- [ ] WSL 1", "on WSL 2 and/or WSL 1") nor WSL's own release ("WSL version: 1.2.5")
_WSL1_SAID = lazy(
    r"^(?![ \t]*[-*][ \t]*\[[ \t]\])[^\n]*?(?:(?<!or )\bWSL[ \t]?1|\bWSL[ \t]+version[ \t]*:?[ \t]*1)\b(?![.,/]\d)"
    r"(?![ \t]*(?:/|or\b|and\b|vs\b))",
    re.IGNORECASE | re.MULTILINE,
)
# A macOS home folder (`/Users/name/`, not `C:/Users/name/`), or the system named
_MACOS = lazy(
    r"(?<![A-Za-z]:)(?<![\w.])/Users/[^/\s]+/|\bmacOS\b|\bMac\s?OS\s?X\b"
    r"|(?i:\bmacbook\b|\b(?:my|a|on)\s+mac\b(?!\s+address)|\bapple\s+silicon\b|\bM[1-4]\s+(?:Pro|Max|Ultra|chip)\b"
    r"|(?<![A-Za-z0-9])mac(?:\s?mini|\s?studio)?\s?M[1-4](?![A-Za-z0-9])(?!\s*address))"  # "Mac M1", "在Mac M1上面" (a CJK letter after it)
    # Python's banner when Apple's clang built it: "[Clang 15.0.0 (clang-1500.0.40.1)]" (Xcode's build number;
    # LLVM's own clang has none): a Python of macOS (blind set 27: A1111#15192)
    r"|\[Clang[ \t]\d+\.\d+\.\d+[ \t]\(clang-\d{3,4}(?:\.\d+){1,3}\)\]"
)
# A Linux machine's own paths: a macOS word beside them is about another machine ("on macOS it runs on MPS")
_LINUX_PATHS = lazy(r"(?<![\w.])/(?:home|usr|opt|srv|root|workspace|mnt)/")
_MAC_SITE_PACKAGES = lazy(r"(?<![A-Za-z]:)(?<![\w.])/Users/[^/\s]+/\S*?/site-packages/")
# Words that put a name on another machine or another time: "worked on my old RTX 3090", "under WSL2 it works,
# but on our server...", "no access to A100s", "needs driver 525.60.13 or newer"
_ELSEWHERE = lazy(
    r"(?<!to )\b(?:work(?:s|ed|ing)?|old|previous(?:ly)?|instead|vs\.?|versus|compared?|other|another|similar|used[ \t]+to"
    r"|before|unlike|access|requires?|required|needs?|minimum|at[ \t]+least|or[ \t]+(?:newer|later|above)|upgrad\w*|updat\w*"
    r"|buy|buying|purchas\w*)\b"  # "I would buy a 3090 if ...": not the card it runs on
)


# The same work runs on another system of this machine, or every program fails alike: "this is working fine under
# windows", "works in Windows 11", "runs fine with the 550 driver", "any program that uses the GPU crashes"
_ELSEWHERE_SYSTEM = (
    r"(?:on|under|in|with)[ \t]+(?:the[ \t]+)?(?:windows|win[ \t]?1[01]\b|(?:an?[ \t]+)?(?:older|previous|earlier"
    r"|other|another|different)[ \t]+(?:driver|kernel)\b|driver[ \t]+\d{3}\b|\d{3}(?:\.\d+)*[ \t]+driver\b"
    r"|kernel[ \t]+\d\.\d)"
)
_FINE = (
    r"(?:fine|well|perfectly|normally|ok(?:ay)?|flawlessly"
    r"|without[ \t]+(?:any[ \t]+)?(?:issues?|problems?|errors?|crash\w*))"
)
# ... always as a contrast: the work said to run fine there ("It does not work on Windows either", "running
# with driver 550" are no such thing); every program failing alike, never "other programs work fine"
_FINE_ELSEWHERE = OnLines(
    lazy(
        rf"\b(?:works?|working|worked|runs?|running|ran)[ \t]+{_FINE}\b[^.\n]{{0,25}}?\b{_ELSEWHERE_SYSTEM}"
        rf"|\b(?:works?|working|worked|runs?|running|ran)[ \t]+{_ELSEWHERE_SYSTEM}[^.\n]{{0,25}}?\b{_FINE}"
        r"|\b(?:every|all|any|several|multiple|different)[ \t]+(?:cuda[ \t]+|gpu[ \t]+)?(?:programs?|applications?"
        r"|apps)\b[^.\n]{0,40}?\b(?:crash\w*|fail\w*|errors?|freez\w*|hang\w*)\b",
        re.IGNORECASE,
    ),
    ("application", "apps", "program", "ran", "run", "work"),
)


# The person already rebooted, and it did not help: "Tried rebooting the system, but still doesn't work",
# "even after a reboot", "rebooted twice, same error"
_REBOOTED = lazy(
    # the machine rebooted (never "restarted the jupyter kernel"), and not "haven't rebooted yet"
    r"(?<!n't )(?<!not )(?<!never )\b(?:tried|even[ \t]+after|after)[ \t]+(?:a[ \t]+|several[ \t]+|multiple[ \t]+)?"
    r"reboot\w*[^.\n]{0,60}?\b(?:still|same|no[ \t]+luck|(?:does|did|do)(?:n'?t|[ \t]+not))\b"
    r"|(?<!n't )(?<!not )(?<!never )\brebooted\b(?![ \t]+yet)[^.\n]{0,60}?\b(?:still|same|no[ \t]+luck|(?:does|did|do)(?:n'?t|[ \t]+not))\b"
    r"|\bstill\b[^.\n]{0,40}?\bafter[ \t]+(?:a[ \t]+)?reboot",
    re.IGNORECASE,
)
# a reboot, a restart or reloading the module clears it: "if we reboot the node the mismatch error disappears", "a
# solution is to restart", "another fix is to reload the kernel modules" (never "rebooted, still the same")
_RESTART_CURES = lazy(
    r"\b(?:if|when|after|once)[ \t]+(?:we[ \t]+|i[ \t]+)?(?:reboot|restart|reload)\w*\b[^.\n]{0,80}?"
    r"\b(?:disappears?|goes[ \t]+away|is[ \t]+gone|works?[ \t]+(?:again|fine)|fixe[sd]|solve[sd]|resolve[sd])\b"
    r"|\b(?:reboot\w*|restart\w*|reload\w*)\b[^.\n]{0,40}?\b(?:fixes|fixed|solves|solved|resolves|resolved|cures|clears)"
    r"[ \t]+(?:it|this|the[ \t]+(?:issue|problem|error))\b"
    r"|\b(?:solution|fix|workaround)[ \t]+is[ \t]+to[ \t]+[`'\"]?(?:reboot|restart|reload)",
    re.IGNORECASE,
)
_DENIED = lazy(r"\b(?:not|never|still|no[ \t]+longer|neither|nor)\b|n't\b|n’t\b", re.IGNORECASE)
# another package's install replaced torch, said ("Installing lightning changes my pytorch version from cuda118 to
# cpu", "it seems to uninstall the torch-2.11.0+cu128 and replace it") or in pip's log ("Found existing
# installation: torch 2.0.0+cu118"); triage/replaced_torch.py answers it
_REPLACED_TORCH = lazy(
    r"^(?=[^\n]*\binstall)(?![ \t]*(?:should|do|does|can|could|how|why|will|would|is|are|must)\b)[^\n]*?"
    r"(?<!without[ \t])\b(?:uninstall\w*|replac\w*|chang\w*|overwr\w*"
    r"|downgrad\w*|swap\w*)(?:[ \t]+(?:my|the|our|its|existing|installed|gpu|cuda|previous|old|current))*[ \t]+"
    r"[`'\"]?(?:py)?torch\b"
    # pip's log: a GPU build uninstalled, and the torch it installed in its place untagged or +cpu
    r"|Found existing installation: torch \d+\.\d+\.\d+\+(?:cu\d{2,3}|rocm[\d.]+)[^\0]{0,3000}?"
    r"Successfully installed[^\n]*?\btorch-\d+\.\d+\.\d+(?:\+cpu)?(?=[ \t]|$)",
    re.IGNORECASE | re.MULTILINE,
)
# the person says the work runs on the CPU, or the GPU stays unused: "Fresh install running only on CPU radically
# slow", "it is not using my GPU", "GPU usage is 0%" (never a wish to run there: asks_for_cpu)
_ON_THE_CPU = lazy(
    r"\b(?:runs?|running|ran|only|stuck)\b[^\n.]{0,30}?\bon[ \t]+(?:the[ \t]+)?cpu\b(?![^\n.]{0,40}\b(?:but|while|whereas)\b)"
    r"|\b(?:not|isn'?t|doesn'?t|does[ \t]+not|never)[ \t]+(?:using|use|utili[sz]ing|utili[sz]e)[ \t]+(?:the[ \t]+|my[ \t]+)?gpu\b"
    r"|\bgpu[ \t-]*(?:util\w*|usage|load)\b[^\n.]{0,20}?(?<![\d.])0[ \t]*%",
    re.IGNORECASE,
)
# torch was installed again, and nothing changed: "I have installed a ton of new pytorch builds and yet it doesn't
# work", "reinstalled torch several times, same error", "重装了好几次还是" (the install went to another Python)
_REINSTALLED = lazy(
    # torch itself installed again (never the driver or CUDA), then that it did not help (never "don't know")
    r"\b(?:re-?install\w*[ \t]+(?:(?:py)?torch|it|them|the[ \t]+(?:py)?torch)\b|installed[ \t]+(?:(?:py)?torch[ \t]+)?(?:again|(?:a[ \t]+)?(?:ton|lot|bunch|number)[ \t]+of"
    r"|many|several|numerous|multiple|different|various|every)\b(?:[^.\n]{0,20}?\b(?:py)?torch)?)"
    r"(?![^.\n]{0,40}?\b(?:driver|cuda[ \t]+toolkit|nvidia)\b)[^.\n]{0,80}?"
    r"\b(?:still|same|yet[ \t]+it|no[ \t]+(?:luck|change|difference)|nothing[ \t]+changed"
    r"|(?:does|did|do)(?:n'?t|[ \t]+not)[ \t]+(?:help|work|change|fix))\b"
    r"|重装了?[^。\n]{0,20}?(?:还是|依然|仍然|没用)"
    # a build for the GPU said to be installed already, while the paste still fails: "I already installed the
    # nightly cu128", "已经试过...更换torch...至最新的nightly版本" (RVC#2636: sm_120 warned, get_arch_list() has it)
    r"|\balready[ \t]+(?:re-?installed|installed|upgraded|updated|switched)\b[^.\n]{0,40}?"
    r"\b(?:nightly|cu1[2-3]\d|(?:py)?torch[ \t]*2\.\d)"
    r"|已经?(?:试过|尝试过?)[^。\n]{0,40}?(?:更换|重装|安装|升级)[^。\n]{0,30}?(?:py)?torch",
    re.IGNORECASE,
)
# The batch is already one, said in words or a command's flag: "batch size is 1", "--batch_size 1", "bs=1",
# "a batch of 1", "batch size设置为1", "배치 사이즈는 1로", "バッチサイズを1に" (never "batch size 16", never 1.5)
_BATCH_ONE = lazy(
    r"(?:(?:(?<![A-Za-z0-9_])(?:(?:per_device_)?train_|micro_)?batch[ \t_-]?size|(?<![A-Za-z0-9_])bs(?=[ \t]*=)|배치[ \t]?사이즈|バッチサイズ|批(?:次|处理)?大小)"
    r"[ \t]*(?:[:=：]|\bis\b|\bwas\b|\bof\b|\bto\b|\bset[ \t]+to\b|\bas\b|\bequals?\b"
    r"|设置?为|设成|改为|改成|调到|调为|为|是|[는은가를をはが])?"
    r"|(?<![A-Za-z0-9_])batch[ \t]+of)"  # "a batch of 1"; never a log's "batch 1/500" (a CJK letter before: ok)
    r"[ \t]*(?:(?:only|just|already|even)[ \t]+)?(?:1|one)(?![\d.,]?\d|[a-z]|[ \t]*/)",
    re.IGNORECASE,
)
# A larger batch size stated beside it: "with batch size 1 it is fine, with batch size 8 I get OOM", "batch size 1
# takes 3 hours, so I use batch size 64": the OOM is the larger one's
_BATCH_MORE = lazy(
    r"(?<![A-Za-z0-9_])(?:(?:per_device_)?train_|micro_)?batch[ \t_-]?size[ \t]*(?:[:=]|is|of|to|was)?[ \t]*"
    r"(?:[2-9]|[1-9]\d+)(?![\d.])",
    re.IGNORECASE,
)
_SENTENCE_END = lazy(r"[.!?。！？](?:\s|$)")


@dataclass(frozen=True)
class Said:
    """One thing the paste says, and the line (1-based) that says it."""

    value: str
    line: int


@dataclass(frozen=True)
class ProseFacts:
    """What the paste's words say of the machine (None: not said, or said two ways)."""

    gpu: Said | None = None  # a GPU model, as the GPU table spells it ("GeForce RTX 5060 Ti", "H100")
    gpu_cc: Said | None = None  # the GPU's compute capability said in words ("cuda capability 2.1")
    gpus: tuple[Said, ...] = ()  # every model named, where the words name two or more ("A6000 and GT1030")
    driver: Said | None = None  # the NVIDIA driver's version ("470.223.02")
    cuda: Said | None = None  # the CUDA the person says the machine has ("11.4"): theirs, not a build's
    asks_build: int | None = None  # the line that asks for (or misses) a torch build for a CUDA version
    fails: Said | None = None  # the first line that says the thing fails, in words (its text): no error shown
    wsl: int | None = None  # the line that says WSL
    wsl1: int | None = None  # the line that says it is WSL 1 (no GPU at all)
    macos: int | None = None  # the line with a macOS path or name
    jetson: Said | None = None  # the Jetson's model as written ("Jetson orin agx"), or "Jetson"
    jetpack: Said | None = None  # its JetPack version ("6.2")
    l4t: Said | None = None  # or its L4T release ("35.3.1")
    l4t_image: Said | None = (
        None  # the L4T release of an L4T container image run ("32.4.2" of l4t-pytorch:r32.4.2)
    )
    amd_gpu: Said | None = None  # an AMD card as written ("rx6600", "Radeon 780M")
    distro: Said | None = None  # a Linux distribution with its release ("Ubuntu 22.04", "Pop!_OS 24.04")
    no_nvidia: Said | None = None  # the person says there is no NVIDIA GPU ("integrated Intel GPU", "on CPU")
    asks_for_cpu: bool = (
        False  # what no_nvidia says is a request to run on the CPU ("how can I run it on CPU")
    )
    # torch fails in words: "cuda_unavailable" ("is_available() returns False", "cuda device is not available"),
    # "cpu_build" (torch said to be the CPU version) or "illegal_instruction" (an instruction the CPU lacks)
    torch_fails: Said | None = None
    windows_build: Said | None = None  # Windows 10/11's build number ("19042" of "Version 10.0.19042.1052")
    torch: Said | None = None  # torch's version said in words or a system-info line ("1.5.0", "2.9.1+cu130")
    tool_gpu: Said | None = None  # an environment report's own GPU line ("- GPU type: NVIDIA A100-PCIE-40GB")
    linux_kernel: Said | None = None  # Python's platform string of a Linux machine: its kernel release
    torch_works: int | None = None  # the line that says is_available() is True (in some shell, some time)
    # the line that says the job runs on Windows: Python's platform string of a Windows machine, or Windows 10/11
    # named in words (not beside Linux or ssh)
    runs_on_windows: int | None = None
    rebooted: int | None = None  # the line that says a reboot was tried and did not help
    # the line that says a reboot, a restart or a module reload clears it (and so it comes back)
    restart_cures: int | None = None
    reinstalled: int | None = None  # the line that says installing torch again changed nothing
    replaced_torch: int | None = None  # the line that says another package's install replaced torch
    on_the_cpu: int | None = None  # the line that says the work runs on the CPU, the GPU unused
    batch_one: int | None = None  # the line that says the batch size is already 1
    runs_model: Said | None = (
        None  # a model run (not trained) in 16-bit, by its size in billions ("8"), and where
    )
    trains_model: Said | None = None  # a model fully fine-tuned, by its size in billions ("7"), and where
    memory_asked: bool = False  # the words are about GPU memory
    slow: int | None = None  # the line that says the work is slow (or its bandwidth, its performance)
    updated: int | None = None  # the line that says the system or its driver was updated before it broke
    across_nodes: int | None = None  # the line that says the job spans several machines
    shared: int | None = None  # the line that shows a shared machine whose driver is not the person's (SLURM)
    recurs: int | None = None  # the line that says the failure came back, or on another GPU too
    # the line that says the same work runs on another system of the machine (Windows, another driver or kernel),
    # or that every program fails alike: what fails is below the programs
    fine_elsewhere: int | None = None


MAX_LINE = 2000  # a longer line is a flood (a base64 blob, a minified file), not a person's words
MAX_LINES = 5000  # a person's words come before the log they paste: a 100k-line log is not read for them
MAX_CHARS = 512 * 1024  # nor a log of few, long lines


def read_prose(lines: list[str]) -> ProseFacts:
    """One pass of each pattern over the whole text (not one per line: a 100k-line paste is read in 0.1 s),
    each pattern only where a word it needs appears at all; lines are told by their offsets."""
    kept, size = [], 0
    for line in lines[:MAX_LINES]:  # at most MAX_CHARS of lines shorter than MAX_LINE
        size += len(line) + 1
        if size > MAX_CHARS:
            break
        kept.append(line if len(line) <= MAX_LINE else "")
    text = "\n".join(kept)
    lowered = text.lower()
    starts = list(itertools.accumulate((len(line) + 1 for line in kept[:-1]), initial=0))

    def line_of(found: re.Match[str]) -> int:
        return bisect.bisect_right(starts, found.start())

    gpus: dict[str, int] = {}

    elsewhere: dict[tuple[int, int], bool] = {}  # sentence -> whether it puts what it names elsewhere

    def here(found: re.Match[str]) -> bool:
        """The match's sentence (its line, cut at ". " and the like: one-line posts hold many) does not put it
        on another machine or another time."""
        line = line_of(found)
        line_end = lowered.find("\n", found.start())
        line_end = line_end if line_end >= 0 else len(lowered)
        before = [m.end() for m in _SENTENCE_END.finditer(lowered, starts[line - 1], found.start())]
        after = _SENTENCE_END.search(lowered, found.end(), line_end)
        sentence = (before[-1] if before else starts[line - 1], after.start() if after else line_end)
        if sentence not in elsewhere:
            elsewhere[sentence] = _ELSEWHERE.search(lowered, *sentence) is not None
        return not elsewhere[sentence]

    for found in _CONSUMER.finditer(lowered):
        name = _consumer_name(found)
        if found["card"] and _GONE_CARD.search(
            lowered, max(0, found.start("card") - 24), found.start("card")
        ):
            continue  # "I replaced the 3090 with an RTX 5090": the bare number is the card that left
        if (
            name is not None
            and _starts_a_name(lowered, found.start(), "." if found["bare"] else "")
            and here(found)
        ):
            gpus.setdefault(name, line_of(found))
    for found in _DATACENTER.finditer(lowered):
        if _starts_a_name(lowered, found.start()) and here(found):
            gpus.setdefault(_datacenter_name(found), line_of(found))
    drivers: dict[str, int] = {}
    if "river" in lowered or "nvrm" in lowered or "kernel module" in lowered:
        for found in _DRIVER.finditer(text):
            if (found["said"] is None and found["said2"] is None) or here(found):  # a tool's label: installed
                drivers.setdefault(next(v for v in found.groups() if v is not None), line_of(found))
    jetson: dict[str, dict[str, int]] = {"model": {}, "jetpack": {}, "l4t": {}, "image": {}}
    if any(word in lowered for word in ("jet", "l4t", "orin", "xavier", "tx2", "tx1")):
        for found in _JETSON.finditer(text):
            if found["image"]:
                jetson["image"].setdefault(found["image"], line_of(found))
            elif found["jetpack"] or found["jetpack2"] or found["l4t"]:
                kind = "l4t" if found["l4t"] else "jetpack"
                jetson[kind].setdefault(found[kind] or found["jetpack2"], line_of(found))
            else:
                said = (
                    found["model"]
                    or found["model2"]
                    or found["model3"]
                    or found["family"]
                    or ("nano" if found["kit"] else "")
                )
                model = _JETSON_MODELS.get(said.lower())
                jetson["model"].setdefault(model or "Jetson", line_of(found))
    amd: dict[str, int] = {}
    if any(word in lowered for word in ("rx", "radeon", "strix", "ryzen", "gfx", "navi", "xt")):
        for found in _AMD.finditer(text):
            amd.setdefault(re.sub(r"\s+", " ", found[0]), line_of(found))
        amd = _one_chip(amd)
    no_nvidia, asks_for_cpu = None, False
    if any(
        word in lowered
        for word in ("have", "intel", "iris", "cpu", "显卡", "disabled cuda", "disabled .cuda")
    ):
        said = _NO_NVIDIA.search(text, lowered)
        no_nvidia = Said(said[0], line_of(said)) if said is not None else None
        if (
            said is not None
            and ("intel" in said[0].lower() or "iris" in said[0].lower())
            and _DUAL.search(lowered)
        ):
            no_nvidia = None  # a laptop's Intel GPU beside its NVIDIA one
        asks_for_cpu = no_nvidia is not None and said is not None and said["cpu"] is not None
    typed = _CPU_INSTALL.search(text, 0, MAX_CHARS) if no_nvidia is None and "cpu" in lowered else None
    if typed is not None and _GPU_WANTED.search(text, 0, MAX_CHARS) is None:
        # a CPU build installed on purpose, and the CPU as the goal (never where the words want the GPU)
        goals = _CPU_GOAL.finditer(text, 0, MAX_CHARS)
        goal = next(
            (
                g
                for g in goals
                if _INSTALL_LINE.search(line_around(text, g)) is None
                and _CPU_COMPLAINT.search(text, max(0, g.start() - 24), g.start()) is None
            ),
            None,
        )
        if goal is not None and here(goal):
            no_nvidia, asks_for_cpu = Said(goal[0], line_of(goal)), True
    torch_fails = None
    if any(
        word in lowered
        for word in (
            "avail",
            "illegal",
            "able to",
            "can't",
            "cant",
            "cannot",
            "false",
            "count",
            "found",
            "detected",
        )
    ):
        fails = _TORCH_FAILS.search(lowered)
        if fails is not None:
            torch_fails = Said(
                "illegal_instruction" if fails["illegal"] else "cuda_unavailable", line_of(fails)
            )
        elif "cuda.is_available" in lowered:  # `print(torch.cuda.is_available())` shown, then "prints False"
            printed = next(
                (p for p in _PRINTS_FALSE.finditer(lowered) if "mps" not in kept[line_of(p) - 1].lower()),
                None,
            )  # never what another backend's call prints ("mps.is_available() returns False")
            torch_fails = Said("cuda_unavailable", line_of(printed)) if printed is not None else None
    if "cpu" in lowered and "torch" in lowered:  # the build said: that is why CUDA is not available
        for found in _CPU_BUILD_SAID.finditer(lowered):
            before = lowered[max(0, found.start() - 24) : found.start()]
            ends = _SENTENCE_STOP.search(lowered, found.end())
            asked = (
                (ends is not None and ends[0] in "?？")
                or _ASKED.search(before) is not None
                or lowered[found.end() : found.end() + 2].lstrip().startswith(("吗", "嗎", "么", "麼"))
            )  # "安装的是cpu版本的torch吗": Chinese asks with a particle, often with no question mark
            if here(found) and _NOT_THE_CPU_BUILD.search(before) is None and not asked:
                torch_fails = Said(
                    "cpu_build", line_of(found)
                )  # said, never asked ("how can I tell whether...?")
                break
    windows_build = None
    if "windows" in lowered:
        builds = {f["build"] or f["build2"]: line_of(f) for f in _WINDOWS_BUILD.finditer(text)}
        windows_build = _one(builds)
    torch: dict[str, int] = {}
    if "torch" in lowered:
        built_for = (
            {b.start("torch"): b["have"] for b in XFORMERS_BUILT_FOR.finditer(text, 0, MAX_CHARS)}
            if "you have" in lowered
            else {}
        )
        for found in _TORCH_SAID.finditer(text):
            if _BUILT_AGAINST.search(text, max(0, found.start() - 40), found.start()):
                continue  # ds_report's "deepspeed wheel compiled w. ...... torch 1.9": not the one installed
            if (
                found.start() in built_for
            ):  # what xFormers was built for; the installed torch is in the brackets
                torch.setdefault(built_for[found.start()].lower(), line_of(found))
                continue
            if here(found) or ":" in found[0] or "：" in found[0] or "..." in found[0]:  # a label: installed
                torch.setdefault(found["version"].lower().replace(" ", "").replace("\t", ""), line_of(found))
    if "torch" in lowered and ("+cpu" in lowered or "+cu" in lowered or "+rocm" in lowered) and not torch:
        for found in _TORCH_TOLD.finditer(text):
            if here(found):
                torch.setdefault(found["version"].lower(), line_of(found))
    if "torch-" in lowered and not torch:
        for found in _TORCH_WHEEL.finditer(text, 0, MAX_CHARS):
            torch.setdefault(f"{found['version']}+{found['tag']}".lower(), line_of(found))
    if "torch==" in lowered.replace(" ", "") and not torch:
        for found in _TORCH_PINNED.finditer(text):
            at = line_of(found)
            line = kept[at - 1]
            if not _INSTALL_LINE.search(line) and not _PIN_UNUSED.search(line) and here(found):
                torch.setdefault(found["version"].lower(), at)
    tool_gpus = (
        {f["name"]: line_of(f) for f in _TOOL_GPU.finditer(text, 0, MAX_CHARS)} if "gpu" in lowered else {}
    )
    kernels = (
        {f["kernel"]: line_of(f) for f in _LINUX_PLATFORM.finditer(text, 0, MAX_CHARS)}
        if "linux-" in lowered
        else {}
    )
    said_failing: Said | None = None
    for found in _FAILS.finditer(text, lowered):
        line = kept[line_of(found) - 1]
        if not _NO_FAILURE.search(line):
            said_failing = Said(line.strip(), line_of(found))
            break
    cudas: dict[str, int] = {}
    asked_build = None
    if "cuda" in lowered:
        for found in _CUDA_OWNED.finditer(text, lowered):  # what it is used for is asked below
            cudas.setdefault(found["cuda"] or found["template"], line_of(found))
        asked_build = _ASKS_BUILD.search(text, 0, MAX_CHARS) if cudas else None
    torch_works = None
    if "true" in lowered or "cuda is available" in lowered:
        works = _TORCH_WORKS.search(lowered)
        torch_works = line_of(works) if works is not None else None
    distros: dict[str, int] = {}
    if any(
        w in lowered
        for w in (
            "ubuntu",
            "debian",
            "fedora",
            "pop!_os",
            "mint",
            "rocky",
            "alma",
            "centos",
            "red hat",
            "opensuse",
        )
    ):
        for found in _DISTRO.finditer(text):
            if here(found):
                name = re.sub(r"\s+", " ", found["name"])
                distros.setdefault(f"{name} {found['version']}", line_of(found))
    if not distros and "ubuntu" in lowered:
        image = next((f for f in _UBUNTU_IMAGE.finditer(text, 0, MAX_CHARS) if here(f)), None)
        if image is not None:
            distros[f"Ubuntu {image['yy']}.{image['mm']}"] = line_of(image)
    # Ubuntu's kernel, where no name says the distribution
    if not distros and ("-generic" in lowered or "-lowlatency" in lowered):
        ubuntu = _UBUNTU_KERNEL.search(text, 0, MAX_CHARS)
        if ubuntu is not None:
            distros["Ubuntu"] = line_of(ubuntu)
    windows = None
    if "windows-" in lowered:
        said_windows = _WINDOWS_PLATFORM.search(text)
        windows = line_of(said_windows) if said_windows is not None else None
    if (
        windows is None and "_time_" in lowered
    ):  # nvcc built for Windows: "Built on ..._Pacific_Daylight_Time_2024"
        nvcc = _WINDOWS_NVCC.search(text)
        windows = line_of(nvcc) if nvcc is not None else None
    linux_named = any(w in lowered for w in ("linux", "ubuntu", "centos", "debian", "ssh ")) or bool(
        _LINUX_PATHS.search(text)
    )  # "I only use my Windows 10 laptop to ssh in": the job runs on Linux
    if windows is None and "win" in lowered and "wsl" not in lowered and not linux_named:  # "本地win10机器"
        named = (f for f in _WINDOWS_WORDS.finditer(text) if here(f))
        windows = next((line_of(f) for f in named), None)
    wsl = None
    if "wsl" in lowered or "subsystem for linux" in lowered:
        wsl_said = (  # never libnvidia-container's own probe ("attempting to load dxcore to see if we are running
            # under Windows Subsystem for Linux (WSL)", then "continuing assuming a non-WSL environment")
            f
            for f in _WSL_WORDS.finditer(text)
            if ("microsoft-standard" in f[0].lower() or here(f)) and "dxcore" not in line_around(text, f)
        )
        wsl = next((line_of(f) for f in wsl_said), None)
    wsl1 = None
    if (
        wsl is not None
    ):  # "I'm using wsl 1 on windows 10", "WSL version 1"; never WSL's own release ("WSL 1.2.5")
        said1 = (f for f in _WSL1_SAID.finditer(text) if here(f))
        wsl1 = next((line_of(f) for f in said1), None)
    macos = None
    mac_words = ("/users/", "mac", "apple", "m1 ", "m2 ", "m3 ", "m4 ", "(clang-")
    # a container's Linux paths beside "on my Mac" are Docker on that Mac, which passes no GPU (blind set 27:
    # "spinning up this image on my Mac M1", ai-dock/comfyui#6)
    in_docker = "docker" in lowered or "image" in lowered or "container" in lowered
    # a Python environment under a macOS home folder ("/Users/x/venv/lib/python3.10/site-packages/...") is a Mac
    # whatever Linux folders a tool's report names beside it (bitsandbytes' "/usr/local CUDA PATHS")
    mac_env = "/users/" in lowered and _MAC_SITE_PACKAGES.search(text, 0, MAX_CHARS) is not None
    if any(w in lowered for w in mac_words) and (in_docker or mac_env or not _LINUX_PATHS.search(text)):
        mac_said = (f for f in _MACOS.finditer(text) if f[0].startswith(("/", "[Clang")) or here(f))
        macos = next((line_of(f) for f in mac_said), None)
    rebooted = restart_cures = None
    if "reboot" in lowered:
        tried = _REBOOTED.search(text)
        rebooted = line_of(tried) if tried is not None else None
    if rebooted is None and any(w in lowered for w in ("reboot", "restart", "reload", "modprobe")):
        # never a sentence that denies it ("rebooting has not fixed the issue", "even after reloading, not solved")
        cured = next(
            (f for f in _RESTART_CURES.finditer(text, 0, MAX_CHARS) if not _DENIED.search(f[0])), None
        )
        restart_cures = line_of(cured) if cured is not None else None
    reinstalled = replaced_torch = None
    if "install" in lowered or "重装" in lowered:
        again = _REINSTALLED.search(text, 0, MAX_CHARS)
        reinstalled = line_of(again) if again is not None else None
        replaced = _REPLACED_TORCH.search(text, 0, MAX_CHARS) if "torch" in lowered else None
        replaced_torch = line_of(replaced) if replaced is not None else None
    on_cpu = _ON_THE_CPU.search(text, 0, MAX_CHARS) if "cpu" in lowered or "gpu" in lowered else None
    on_the_cpu = line_of(on_cpu) if on_cpu is not None and not asks_for_cpu else None
    batch_one = None
    if any(word in lowered for word in ("batch", "bs", "배치", "バッチ", "批")) and not _BATCH_MORE.search(
        text
    ):
        one = (f for f in _BATCH_ONE.finditer(text) if here(f))  # not "batch 1 works, 4 does not"
        batch_one = next((line_of(f) for f in one), None)
    trains_model = None
    trained = ("tun", "train", "full", "全量", "全参", "微调")  # most pastes have none: no scan
    if (
        any(word in lowered for word in trained)
        and _TRAINING.search(text, 0, MAX_CHARS) is not None
        and _ADAPTERS.search(text, 0, MAX_CHARS) is None
        and _INFERENCE.search(text, 0, MAX_CHARS) is None
    ):
        sized = _MODEL_SIZE.search(text, 0, MAX_CHARS)
        trains_model = Said(sized["n"] or sized["n2"], line_of(sized)) if sized is not None else None
    memory_asked = trains_model is not None and _MEMORY_WORDS.search(text, 0, MAX_CHARS) is not None
    runs_model = None
    if (
        trains_model is None
        and "memory" in lowered
        and (_RUNS_MODEL.search(text, 0, MAX_CHARS) or _INFERENCE.search(text, 0, MAX_CHARS)) is not None
        and _TRAINING.search(text, 0, MAX_CHARS) is None
        and _QUANTIZED.search(text, 0, MAX_CHARS) is None
    ):
        sized = _MODEL_SIZE.search(text, 0, MAX_CHARS)
        runs_model = Said(sized["n"] or sized["n2"], line_of(sized)) if sized is not None else None
    slow = _SLOW.search(text, 0, MAX_CHARS) if any(w in lowered for w in _SLOW_WORDS) else None
    recurs = _RECURS.search(text, 0, MAX_CHARS) if any(w in lowered for w in _RECURS_WORDS) else None
    updated = (
        _UPDATED.search(text, 0, MAX_CHARS)
        if "updat" in lowered or "upgrad" in lowered or "install" in lowered
        else None
    )
    nodes = _ACROSS_NODES.search(text, 0, MAX_CHARS) if "node" in lowered or "machine" in lowered else None
    shared = (
        _SCHEDULER.search(text, 0, MAX_CHARS) if any(w in lowered for w in _SCHEDULER_WORDS) else None
    ) or (_SHARED_SAID.search(lowered, lowered))
    fine = (
        _FINE_ELSEWHERE.search(text, lowered)
        if any(w in lowered for w in ("windows", "driver", "kernel", "program", "app"))
        else None
    )
    capabilities: dict[str, int] = {}
    if "capabilit" in lowered:
        for found in _CAPABILITY.finditer(text, 0, MAX_CHARS):
            before = text[max(0, found.start() - 40) : found.start()]
            after = text[found.end() : found.end() + 20]  # match(), not search(text, pos): "^" is its start
            if not (_CAPABILITY_NEEDED.search(before) or _CAPABILITY_NEEDED.match(after)):
                capabilities.setdefault(found["cc"], line_of(found))
    return ProseFacts(  # by name: a field added in the middle cannot shift the others
        gpu=_one(gpus),
        gpu_cc=_one(capabilities),
        gpus=tuple(Said(name, line) for name, line in gpus.items()) if len(gpus) > 1 else (),
        driver=_one(drivers),
        wsl=wsl,
        wsl1=wsl1,
        macos=macos,
        jetson=_one(jetson["model"])
        or (Said("Jetson", min(jetson["jetpack"].values())) if jetson["jetpack"] else None)
        or (Said("Jetson", min(jetson["image"].values())) if jetson["image"] else None)  # an L4T image
        or (
            Said("Jetson", min(jetson["l4t"].values())) if jetson["l4t"] else None
        ),  # L4T runs only on Jetsons
        jetpack=_one(jetson["jetpack"]),
        l4t=_one(jetson["l4t"]),
        l4t_image=_one(jetson["image"]),
        amd_gpu=_one(amd),
        distro=_one(distros),
        no_nvidia=no_nvidia,
        asks_for_cpu=asks_for_cpu,
        torch_fails=torch_fails,
        windows_build=windows_build,
        torch=_one_version(torch),
        tool_gpu=_one(tool_gpus),
        linux_kernel=_one(kernels),
        torch_works=torch_works,
        cuda=_one(cudas),
        fails=said_failing,
        asks_build=line_of(asked_build) if asked_build is not None else None,
        runs_on_windows=windows,
        rebooted=rebooted,
        restart_cures=restart_cures,
        reinstalled=reinstalled,
        replaced_torch=replaced_torch,
        on_the_cpu=on_the_cpu,
        batch_one=batch_one,
        trains_model=trains_model,
        runs_model=runs_model,
        memory_asked=memory_asked,
        slow=line_of(slow) if slow is not None else None,
        updated=line_of(updated) if updated is not None else None,
        across_nodes=line_of(nodes) if nodes is not None else None,
        shared=line_of(shared) if shared is not None else None,
        recurs=line_of(recurs) if recurs is not None else None,
        fine_elsewhere=line_of(fine) if fine is not None else None,
    )


def _one_chip(amd: dict[str, int]) -> dict[str, int]:
    """Names of one chip (lspci's "Radeon 8050S Graphics / Radeon 8060S Graphics", "Strix Halo", a card beside
    its own gfx target: "RX 6600 (...gfx1032") count once."""
    targets = {name.lower() if name.lower().startswith("gfx") else gfx_of_product(name) for name in amd}
    if len(amd) > 1 and len(targets) == 1 and None not in targets:
        first = min(amd, key=amd.__getitem__)
        return {first: amd[first]}
    said = {name: line for name, line in amd.items() if name.lower().startswith("gfx")}
    if len(amd) > 1 and len({name.lower() for name in said}) == 1:
        return said  # rocminfo's own target ("amdgcn-amd-amdhsa--gfx1102") over a product name's table guess
    return amd


def _same_release(a: str, b: str) -> bool:
    """ "2.8" and "2.8.0+cu128" name one release (the shorter says less); "2.8.0+cu128" and "2.8.0+cu126" do not."""
    (base_a, _, tag_a), (base_b, _, tag_b) = a.partition("+"), b.partition("+")
    if tag_a and tag_b and tag_a != tag_b:
        return False
    return f"{base_a}.".startswith(f"{base_b}.") or f"{base_b}.".startswith(f"{base_a}.")


def _one_version(said: dict[str, int]) -> Said | None:
    """One torch version, where every version said names the same release: the most specific of them ("the
    default is PyTorch 2.8" beside "PyTorch：2.8.0+cu128")."""
    if not said:
        return None
    fullest = max(said, key=len)
    if not all(_same_release(fullest, other) for other in said):
        return None
    return Said(fullest, said[fullest])


def _one(said: dict[str, int]) -> Said | None:
    if len(said) != 1:
        return None
    value, line = next(iter(said.items()))
    return Said(value, line)


def _consumer_name(found: re.Match[str]) -> str | None:
    if found["bare"]:
        line = "GTX" if found["bare"].startswith("1") or len(found["bare"]) == 3 else "RTX"
        return f"GeForce {line} {found['bare']} {_suffix(found['baresuf'])}"
    if found["card"]:
        return f"GeForce RTX {found['card']}" + (f" {_suffix(found['cardsuf'])}" if found["cardsuf"] else "")
    if found["cjk"]:
        return f"GeForce RTX {found['cjk']}" + (f" {_suffix(found['cjksuf'])}" if found["cjksuf"] else "")
    line, num = found["line"].upper(), found["num"]
    if line == "RTX" and num in {"4000", "5000", "6000", "8000"}:  # workstation parts (_DATACENTER's)
        return None
    suffix = f" {_suffix(found['suf'])}" if found["suf"] else ""
    mobile = "M" if found["m"] else " Laptop GPU" if found["mobile"] else ""
    spaced = "" if line == "MX" else " "  # the MX parts are written MX150
    return f"GeForce {line}{spaced}{num}{suffix}{mobile}"


def _datacenter_name(found: re.Match[str]) -> str:
    if found["kepler"]:  # the GPU table knows these as NVIDIA writes them: "Tesla K40m"
        board = found["kepler"]
        model = board.rstrip("mc")
        return f"Tesla {model.upper()}{board[len(model) :]}"
    if found["ampere"]:
        return f"RTX {found['ampere'].upper()}"
    name = re.sub(r"\s+", " ", found["name"] or found["short"] or found["counted"]).upper()
    pro = re.fullmatch(r"RTX ?([456]000) ?PRO", name)  # "RTX 6000 Pro", as people say the RTX PRO 6000
    if pro is not None:
        return f"RTX PRO {pro[1]}"
    return name.replace("ADA", "Ada").replace("XP", "Xp").replace("RTXA", "RTX A")


def _suffix(text: str) -> str:
    return {"ti": "Ti", "super": "SUPER"}.get(text.lower(), "Ti SUPER")
