# Describes the interpreter that runs it. Standard library only; Python 3.7+ syntax.
import json
import os
import platform
import site
import sys


def main():
    # CONDA_PREFIX counts only when it is this interpreter's own prefix: a venv started from a shell with a
    # conda environment active inherits the variable without being a conda environment
    conda = os.environ.get("CONDA_PREFIX")
    if conda and os.path.realpath(conda) != os.path.realpath(sys.prefix):
        conda = None
    if not conda and os.path.isdir(os.path.join(sys.prefix, "conda-meta")):
        conda = sys.prefix
    info = {
        "executable": sys.executable,
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "system": platform.system(),
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "in_virtualenv": getattr(sys, "base_prefix", sys.prefix) != sys.prefix,
        "conda_prefix": conda,
        "user_site_enabled": bool(site.ENABLE_USER_SITE),
    }
    sys.stdout.write(json.dumps(info))


main()
