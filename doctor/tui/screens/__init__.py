"""One screen per file: the main doctor, the dialogs, the smoke test and the setup wizard."""
