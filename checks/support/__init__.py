"""What several checks share: phrasing, catalogues (Xid, CUDA messages) and the smoke test's expected figures. No check is registered here."""
