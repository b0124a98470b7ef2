"""Environments, Ray-free: catalog of ids, sources, user envs and our own games (their RLlib
adapters are `rl_platform.env_adapters`)."""
