from __future__ import annotations

import sys

from gpu_doctor.cli import main

sys.exit(main())
