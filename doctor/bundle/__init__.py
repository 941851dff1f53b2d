"""Support bundles: a redacted capture in a `.tar.gz` (`gpu-doctor bundle`), and replaying one safely."""
