"""Fix builders: pure functions from facts to a typed Remediation plan. Nothing here runs anything."""
