"""Ray's process: starting or joining it, its logs, and how `rlp` exits."""
