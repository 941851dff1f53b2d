# What torch the target interpreter would import, WITHOUT importing torch (fast, cannot crash).
# Reads package metadata and torch/version.py directly. Standard library only; Python 3.7+ syntax.
import json
import os
import site
import sys

try:
    from importlib import metadata
except ImportError:  # Python < 3.8
    metadata = None

WATCHED = ("torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "pytorch-triton-rocm")


def read_version_py(package_dir):
    """torch/version.py is plain assignments (__version__, cuda, hip, debug, git_version)."""
    path = os.path.join(package_dir, "version.py")
    values = {}
    try:
        with open(path, "r") as handle:
            source = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    for line in source.splitlines():
        if "=" not in line or line.startswith((" ", "\t", "#", "from", "import")):
            continue
        name, _, expr = line.partition("=")
        name = name.split(":")[0].strip()
        if name not in ("__version__", "cuda", "hip", "debug", "git_version", "xpu"):
            continue
        expr = expr.strip()
        try:
            import ast

            values[name] = ast.literal_eval(expr)
        except Exception:
            values[name] = None
    return values


def copies_on_path(package):
    """Every sys.path entry holding an importable `package`: more than one means shadowing."""
    found = []
    for entry in sys.path:
        base = entry or os.getcwd()
        candidate = os.path.join(base, package)
        if os.path.isfile(os.path.join(candidate, "__init__.py")):
            found.append(candidate)
    return found


def distributions():
    result = []
    if metadata is None:
        return result
    seen = set()
    for dist in metadata.distributions():
        try:
            name = dist.metadata["Name"] or ""
        except Exception:
            continue
        key = name.lower().replace("_", "-")
        if key in seen or not (key in WATCHED or key.startswith("nvidia-")):
            continue
        seen.add(key)
        try:
            location = str(dist.locate_file(""))
        except Exception:
            location = None
        requires = [r for r in (dist.requires or []) if r.lower().startswith(("nvidia-", "triton", "torch"))]
        result.append({"name": key, "version": dist.version, "location": location, "requires": requires})
    result.sort(key=lambda d: d["name"])
    return result


def main():
    torch_copies = copies_on_path("torch")
    version_info = read_version_py(torch_copies[0]) if torch_copies else None
    companions = {}
    for name in ("torchvision", "torchaudio"):
        copies = copies_on_path(name)
        companions[name] = {"paths": copies, "version_py": read_version_py(copies[0]) if copies else None}
    user_site = site.getusersitepackages() if hasattr(site, "getusersitepackages") else None
    info = {
        "sys_path": list(sys.path),
        "user_site": user_site,
        "user_site_enabled": bool(site.ENABLE_USER_SITE),
        "torch_paths": torch_copies,
        "torch_version_py": version_info,
        "companions": companions,
        "distributions": distributions(),
        "externally_managed": os.path.isfile(
            os.path.join(os.path.dirname(os.__file__), "EXTERNALLY-MANAGED")
        ),
    }
    sys.stdout.write(json.dumps(info))


main()
