"""Facts: the frozen snapshot of a machine, gathered through the Host seam."""
