"""The package version (no stage, no imports): read by ``--version`` without loading numpy."""

MIXRANK_VERSION = "0.1.0"
