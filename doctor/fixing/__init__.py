"""Planning the fixes of a report and applying the ones gpu-doctor may run (after a confirmation)."""
