"""Scripts run by the *target* interpreter in a child process (never imported by gpu-doctor itself).

Each prints one JSON object on stdout. They use only the standard library and stay compatible with old
Pythons (3.7+) because the environment being diagnosed may be old.
"""
