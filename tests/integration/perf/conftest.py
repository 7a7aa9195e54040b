"""The performance tests use torch_installed (tests/integration/conftest.py): the pinned CPU torch, installed once per
run."""
