"""The `rlp` commands beside `rl_platform/cli.py`: one Typer module per feature, the
error boundary and the shared options.
"""
