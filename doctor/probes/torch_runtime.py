# Imports torch in the target interpreter and reports what it can do. Standard library only around torch;
# Python 3.7+ syntax. Prints one JSON line per stage BEFORE doing it, so a segfault or a hang is attributed
# to the stage that never finished; the last line is {"result": {...}}.
import json
import os
import re
import sys
import traceback
import warnings

LIB_PATTERN = re.compile(
    r"/(lib(?:cuda|cudart|cudnn[a-z_]*|cublas|cublasLt|nccl|nvJitLink|nvrtc|cusparse|cufft|curand|cusolver"
    r"|nvidia-ml|amdhip64|MIOpen|rccl)\.so[.0-9]*)$"
)


def stage(name):
    sys.stdout.write(json.dumps({"stage": name}) + "\n")
    sys.stdout.flush()


def unique(items):
    return [item for i, item in enumerate(items) if item not in items[:i]]


def mapped_libraries():
    libs = {}
    try:
        with open("/proc/self/maps", "r") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) < 6:
                    continue
                path = parts[-1]
                match = LIB_PATTERN.search(path)
                if match and path not in libs:
                    name = match.group(1)
                    real = os.path.realpath(path)
                    libs[path] = {"name": name.split(".so")[0], "path": path, "realpath": real}
    except OSError:
        return None
    return sorted(libs.values(), key=lambda item: item["path"])


def main():
    result = {"python": sys.executable}
    stage("import")
    import torch

    result["version"] = torch.__version__
    result["file"] = getattr(torch, "__file__", None)
    result["cuda"] = getattr(torch.version, "cuda", None)
    result["hip"] = getattr(torch.version, "hip", None)
    result["debug"] = bool(getattr(torch.version, "debug", False))
    result["git_version"] = getattr(torch.version, "git_version", None)
    # CUDA's first use first: torch.cuda.get_arch_list() calls is_available() in 2.x, so asking it first put
    # the driver's initialisation in the "arch_list" stage and its one-time warning ("CUDA initialization: ...")
    # outside the recording. Every CUDA call below runs inside it: the capability warning comes at lazy init.
    caught = []
    stage("cuda_init")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        available = bool(torch.cuda.is_available())
    caught.extend(seen)
    result["cuda_available"] = available
    result["cuda_init_error"] = None
    if not available and (result["cuda"] or result["hip"]):
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                try:
                    torch.cuda.init()
                finally:
                    caught.extend(seen)
        except Exception as exc:
            result["cuda_init_error"] = "%s: %s" % (type(exc).__name__, exc)
    stage("arch_list")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            result["arch_list"] = list(torch.cuda.get_arch_list())
        except Exception as exc:
            result["arch_list"] = None
            result["arch_list_error"] = "%s: %s" % (type(exc).__name__, exc)
    caught.extend(seen)
    devices = []
    if available:
        stage("devices")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for index in range(torch.cuda.device_count()):
                props = torch.cuda.get_device_properties(index)
                devices.append(
                    {
                        "index": index,
                        "name": props.name,
                        "capability": "%d.%d" % (props.major, props.minor),
                        "total_memory_bytes": int(props.total_memory),
                        "uuid": str(getattr(props, "uuid", "")) or None,
                        "pci_bus_id": getattr(props, "pci_bus_id", None),
                    }
                )
        caught.extend(seen)
    result["cuda_warnings"] = unique([str(w.message) for w in caught])
    result["device_count"] = len(devices)
    result["devices"] = devices
    stage("cudnn")
    try:
        backend = torch.backends.cudnn
        result["cudnn_available"] = bool(backend.is_available())
        result["cudnn_version"] = backend.version() if result["cudnn_available"] else None
    except Exception as exc:
        result["cudnn_available"] = False
        result["cudnn_version"] = None
        result["cudnn_error"] = "%s: %s" % (type(exc).__name__, exc)
    stage("nccl")
    try:
        version = torch.cuda.nccl.version() if available else None
        result["nccl_version"] = ".".join(str(v) for v in version) if isinstance(version, tuple) else version
    except Exception:
        result["nccl_version"] = None
    stage("libraries")
    result["mapped_libraries"] = mapped_libraries()
    sys.stdout.write(json.dumps({"result": result}) + "\n")
    sys.stdout.flush()


try:
    main()
except BaseException as exc:  # report, never a bare traceback
    sys.stdout.write(
        json.dumps({"error": "%s: %s" % (type(exc).__name__, exc), "traceback": traceback.format_exc()})
        + "\n"
    )
    sys.stdout.flush()
    sys.exit(3)
