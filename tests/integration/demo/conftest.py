"""The demo runs on the real single-node Slurm of the session fixture ``slurm`` (tests/integration/conftest.py)."""
