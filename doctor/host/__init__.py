"""The Host seam: the only layer that reads the machine (DESIGN §1)."""
