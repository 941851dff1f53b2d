from __future__ import annotations

import sys

from torch_gpu_doctor.cli import entry

sys.exit(entry())
