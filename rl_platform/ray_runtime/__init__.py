"""Ray's process: starting or joining it, its logs, and how `rlp` exits; and the two seams to
Ray's internals (`ray_internals.py`: Ray core; `rllib_internals.py`: RLlib and Tune), the one
place rl_platform uses them (docs/architecture.md, "Two seams to Ray's internals").
"""
