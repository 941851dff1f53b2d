"""What to do about a program that ran out of GPU memory, by whose memory it was (torch.out_of_memory's fixes)."""

from __future__ import annotations

from torch_gpu_doctor.compat.torch_releases import version_key
from torch_gpu_doctor.model import Command, Remediation, Target

HOLDER_QUERY = ("nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv")
HOLDERS = Command(HOLDER_QUERY, note="lists the processes using GPU memory, with how much each uses")


def holder() -> Remediation:
    return Remediation(
        text="Another program holds a large share of this GPU's memory. See which one, then stop it (or run on another "
        "GPU); in a notebook, a kernel left running from earlier is the usual holder.",
        commands=(HOLDERS,),
        target=Target.SYSTEM,
    )


def invisible_holder() -> Remediation:
    """GPU memory in use while nvidia-smi lists no process: the holder is out of nvidia-smi's sight."""
    return Remediation(
        text="The GPU's memory is held by a process nvidia-smi cannot show: one in another container or PID "
        "namespace, another user's, or one that never exited (a zombie or a stopped job). Find it by the GPU's "
        "device file and stop it; if no process holds the file any more, reset the GPU (nothing may use it) or "
        "reboot.",
        commands=(
            Command(
                ("sudo", "fuser", "-v", "/dev/nvidia0"),
                note="the processes that hold GPU 0 (nvidia1 for GPU 1, ...); on the host of a container",
            ),
        ),
        target=Target.SYSTEM,
    )


def fragmented(share: str | None = None) -> Remediation:
    """`share`: the one request is a large share of the whole GPU ("1.70 GiB of its 6.00 GiB"), so the job is at
    the card's limit and the allocator setting alone rarely carries it (blind set 26: MGFN#35 on a 6 GB card)."""
    limit = (
        f" The job is also at the card's limit (one request is {share}): lower the batch size or the input size "
        "(clip length, resolution) and use mixed precision (torch.autocast), with the setting above as a help."
        if share
        else ""
    )
    return Remediation(
        text="PyTorch's allocator has enough memory reserved but in pieces too small for this allocation. Set "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in the environment of the program (torch ≥ 2.1; "
        "before that, max_split_size_mb:128), and free tensors you no longer need." + limit,
        target=Target.PYTHON_ENV,
    )


# The 16-bit precisions to name: bf16 needs compute capability 8.0 (Ampere); on older GPUs only fp16 is native
HALF = "bf16 or fp16"
HALF_BEFORE_AMPERE = "fp16 (this GPU has no native bf16)"


def half_precision(capabilities: list[str]) -> str:
    """What to call 16-bit training on GPUs of these compute capabilities ("7.5"): fp16 alone where every one
    is older than Ampere (a T4, a V100); both where any is Ampere or newer, or none is known."""
    parsed = [version_key(cc)[:2] for cc in capabilities]
    return HALF_BEFORE_AMPERE if parsed and all(cc < (8, 0) for cc in parsed) else HALF


def too_big(half: str = HALF) -> Remediation:
    return Remediation(
        text="The job needs more GPU memory than this GPU has: lower the batch size (keep the effective batch "
        f"with gradient accumulation), train in {half} with torch.autocast, use activation checkpointing, or "
        "shard the model over several GPUs (FSDP). For inference servers such as vLLM, lower max_model_len or "
        "max_num_seqs; for image-generation UIs start them in their low-memory mode (ComfyUI --lowvram, the "
        "Stable Diffusion web UI --medvram); a diffusers pipeline keeps only the running model on the GPU with "
        "pipe.enable_model_cpu_offload(); or use a smaller or quantized model.",
        target=Target.PYTHON_ENV,
    )


def larger_than_the_gpu(tried: str, total: str) -> Remediation:
    """One allocation larger than the whole GPU: no process to stop, no cache to defragment and no smaller step of
    a loop helps; that one tensor must shrink. Such a tensor is most often the attention scores of a very long
    sequence in unfused (eager) attention, batch x heads x length^2 of them, or an input far beyond what the model
    expects (blind set 25: 124.68 GiB on a 95 GiB GPU, Qwen2.5-Omni over a long video)."""
    return Remediation(
        text=f"A single tensor of {tried} cannot fit on a GPU of {total}, whatever else is freed: that tensor must "
        "shrink. One this large is most often the attention scores of a very long input computed without a fused "
        "kernel (their size grows with the square of its length): use fused attention (torch's "
        'scaled_dot_product_attention; transformers: attn_implementation="sdpa" or "flash_attention_2"), and '
        "shorten the input (fewer video frames, a lower image resolution, a shorter context) or process it in "
        "chunks. Otherwise it is a batch or an input far larger than the program expects.",
        target=Target.PYTHON_ENV,
    )


_LARGE_INPUT = "is a large part of this GPU: a single large input"


def offers_a_smaller_job(fix: Remediation | None) -> bool:
    """The fix is one of those that tell the job to need less (too_big, too_big_beside_a_share,
    one_large_input), whose "smaller batch" a batch of one already rules out."""
    return fix is not None and (fix.text.endswith(too_big().text) or _LARGE_INPUT in fix.text)


def one_large_input(tried: str, half: str = HALF) -> Remediation:
    """One request that is a large part of the GPU, where the job ran before: an input, not the model, grew."""
    return Remediation(
        text=f"One allocation of {tried} {_LARGE_INPUT} (an image at full "
        "resolution, a long sequence, a large batch at once) needs it, rarely the model. Lower the input's size "
        f"(image size or resolution, maximum sequence length; crop or tile large inputs) or the batch, or run in "
        f"{half}. nvidia-smi run after the crash shows the memory free again: the process that held it ended.",
        target=Target.PYTHON_ENV,
    )


def first_allocation(free: str, outside: str) -> Remediation:
    """Out of memory with nothing allocated by PyTorch yet: the program's first step (loading the model, mostly)
    needs more than the GPU has free, so no smaller input helps (blind set 17: an app on a 4 GiB card)."""
    return Remediation(
        text=f"The program had allocated nothing when it failed: its first step, loading the model as a rule, "
        f"needs more than the {free} that was free, so a smaller input or batch does not help. Run it in its "
        "low-memory or offloading mode (ComfyUI and web UIs: --lowvram; diffusers: enable_model_cpu_offload(); "
        'transformers: device_map="auto"), with a smaller, 16-bit or quantized model, on the CPU, or on a GPU '
        f"with more memory; closing what holds the {outside} outside it gives that much more.",
        target=Target.PYTHON_ENV,
    )


def too_big_beside_a_share(outside: str) -> Remediation:
    """The program holds most of a small GPU and about a gigabyte is held outside it: its own CUDA context and,
    on Windows and WSL2, the desktop and other programs, which the program cannot have."""
    return Remediation(
        text=f"The {outside} outside the program is not the program's to use: its CUDA context, and on a desktop "
        "(Windows and WSL2 above all) the display and other programs' windows, browsers and games. Close the "
        "programs that use the GPU, then fit the job into what is left. " + too_big().text,
        target=Target.PYTHON_ENV,
    )


def kv_cache() -> Remediation:
    return Remediation(
        text="vLLM loaded the model but its share of GPU memory leaves no room for the KV cache. Give it more "
        "(--gpu-memory-utilization, default 0.9, up to about 0.95 when nothing else uses the GPU), or need less: "
        "a smaller --max-model-len or --max-num-seqs, a quantized model, or tensor parallelism over more GPUs.",
        target=Target.PYTHON_ENV,
    )


def too_big_at_batch_one(sized: bool, half: str = HALF) -> Remediation:
    """The person says the batch is already 1: no smaller batch exists. Where the error's figures show the
    program itself holds the memory (`sized`), the model or one input is too large; where it states none, what
    holds the memory comes first (a run or notebook kernel left from earlier holds gigabytes unseen)."""
    smaller = (
        f"run it in {half} with torch.autocast, use activation checkpointing, make each input smaller (crop "
        "or tile images, shorter sequences), use a smaller or quantized model, or shard it over several GPUs "
        "(FSDP)."
    )
    if sized:
        return Remediation(
            text="The batch is already 1, so a smaller batch cannot help: the model, or one input, needs more "
            f"memory than this GPU has. To fit it, {smaller}",
            target=Target.PYTHON_ENV,
        )
    return Remediation(
        text="The batch is already 1, so a smaller batch cannot help. First see whether another program holds "
        "this GPU's memory (a run or notebook kernel left from earlier is the usual holder) and stop it; if none "
        f"does, the model or one input does not fit: {smaller}",
        commands=(HOLDERS,),
        target=Target.SYSTEM,
    )


def memory_fraction() -> Remediation:
    """The allocator stopped at the memory fraction the program set, with the GPU itself not full."""
    return Remediation(
        text="The limit is the program's own: it set a memory fraction (torch.cuda.set_per_process_memory_fraction, "
        "or a setting of the application that calls it) below the GPU's memory. Raise or remove that fraction, or "
        "make the job smaller.",
        target=Target.PYTHON_ENV,
    )


def too_big_to_train(model: str, lora_gib: float, qlora_gib: float) -> Remediation:
    """Full fine-tuning of `model` ("7B") cannot fit the GPU at any batch size: adapters, or more GPUs. The
    figures are what LoRA and QLoRA of it need at batch 1 with activation checkpointing (fit's estimate)."""
    return Remediation(
        text="No batch size, precision flag or gradient checkpointing makes full fine-tuning fit: weights, "
        "gradients and AdamW states alone take 16 bytes a parameter. Fine-tune with adapters instead: LoRA "
        f"(PEFT) needs about {lora_gib:.0f} GiB, QLoRA (a 4-bit base, bitsandbytes) about {qlora_gib:.0f} GiB; or "
        "shard full training over GPUs whose memory adds up to it (FSDP or DeepSpeed ZeRO-3, with CPU offload).",
        commands=(
            Command(
                ("gpu-doctor", "fit", model, "--qlora", "--seq", "512", "--checkpointing"),
                note="the parts of QLoRA's estimate; --lora, --gpus N and --seq for other plans",
            ),
        ),
        target=Target.PYTHON_ENV,
    )


def too_big_to_run(model: str, weights_gib: float, gpu_gib: float, int4_gib: float) -> Remediation:
    """A model whose 16-bit weights alone fill the GPU: no serving setting makes room, a smaller form of it does.
    `int4_gib` is what a 4-bit quantized build needs at batch 1 (fit's estimate)."""
    return Remediation(
        text=f"The {model} model's weights alone take about {weights_gib:.1f} GiB in 16-bit precision, and this "
        f"GPU has {gpu_gib:.1f} GiB: no max_model_len, batch or gpu_memory_utilization setting leaves room for "
        "the KV cache and activations. Run a quantized build of it (an AWQ or GPTQ 4-bit checkpoint needs about "
        f"{int4_gib:.0f} GiB; fp8 halves the weights on Ada and Hopper GPUs), a smaller model, or split it over "
        "several GPUs (tensor_parallel_size).",
        commands=(
            Command(
                ("gpu-doctor", "fit", model, "--infer", "--precision", "int4"),
                note="what the 4-bit build needs here; --precision bf16 or --gpus N for other plans",
            ),
        ),
        target=Target.PYTHON_ENV,
    )


def watermark_not_reached(line: int) -> Remediation:
    """The Mac's out-of-memory error still shows its limit where line `line` of the paste lifts it: the setting
    never reached the failing process, and a smaller step comes before lifting it again."""
    return Remediation(
        text=f"Line {line} sets PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0, yet the error still reports a limit (max "
        "allowed): the variable did not reach the process that failed (set in another shell, or after Python "
        "started, or dropped by a launcher or notebook kernel). Lower what one step needs first: a smaller "
        "batch, image size or context length, gradient accumulation, 16-bit weights; lifting the limit lets "
        "macOS swap and can freeze the Mac when far more is needed. If you still lift it, set it where the "
        "program starts and check it from inside:",
        commands=(
            Command(
                ("python", "-c", 'import os; print(os.environ.get("PYTORCH_MPS_HIGH_WATERMARK_RATIO"))'),
                note="run the way the program runs: None means the setting never reaches it",
            ),
        ),
        target=Target.PYTHON_ENV,
    )


_LOAD_LESS = (
    'offload parts of it to the CPU (diffusers: pipe.enable_model_cpu_offload() in place of pipe.to("cuda"), '
    'or enable_sequential_cpu_offload() for the least memory; transformers and accelerate: device_map="auto", '
    "with max_memory), load it quantized (8-bit or 4-bit through bitsandbytes' BitsAndBytesConfig, or a GGUF, "
    "AWQ or GPTQ build) or in 16-bit where it loads in float32 (torch_dtype=torch.bfloat16), or use a smaller "
    "variant of the model; otherwise a GPU with more memory."
)


def weights_do_not_fit(call: str, line: int) -> Remediation:
    """Out of memory while the model's weights move onto the GPU (`pipe.to(device)`, `from_pretrained`,
    `load_state_dict`): the weights alone do not fit, so nothing about batches or training helps (blind set 28:
    FLUX.2-dev's whole pipeline moved to a 48 GB A6000; set 27: a 6 GB card loading a model in a web UI)."""
    return Remediation(
        text=f"It failed while the model's weights were moved onto the GPU (line {line}: {call}), before any "
        "batch ran: the weights alone do not fit in this GPU's memory, so a smaller batch, a shorter input or "
        f"training settings cannot help. Load less onto the GPU: {_LOAD_LESS} Applications have their own "
        "switches for it (ComfyUI --lowvram, the Stable Diffusion web UI --medvram or --lowvram, "
        "text-generation-webui's --load-in-4bit or GPU-layer setting).",
        target=Target.PYTHON_ENV,
    )


def too_big_for_inference(low_memory_line: int | None) -> Remediation:
    """Out of memory running a model (an app, a pipeline, generation), with no sign of training: what loads and
    what one request computes must shrink; batch size and gradient settings are training's levers (blind set 28:
    Hunyuan3D-2's shape, texture and text-to-3D models together on a 16 GB card, --low_vram_mode already on)."""
    tried = (
        f"Its low-memory mode is on already (line {low_memory_line}), so the models it loads together are what "
        "does not fit: run without the optional ones (a texture, refiner or upscaler model, a second pipeline) "
        "or "
        if low_memory_line is not None
        else "Start it in its low-memory mode where it has one (ComfyUI --lowvram, the Stable Diffusion web UI "
        "--medvram or --lowvram, an app's --low_vram_mode), load only the models the task needs, or "
    )
    return Remediation(
        text="The models this program runs, and what one request computes, need more memory than this GPU has: "
        "running a model, not training it, so batch size and gradient settings are not the levers. "
        + tried
        + _LOAD_LESS
        + " Ask less of each request too: fewer images at once, a lower resolution, a shorter context.",
        target=Target.PYTHON_ENV,
    )
