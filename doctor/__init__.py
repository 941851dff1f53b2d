"""gpu-doctor: will my GPU work with my torch, and if not, what exactly do I type to fix it?"""

from __future__ import annotations

__version__ = "0.1.0"
TOOL_NAME = "gpu-doctor"
