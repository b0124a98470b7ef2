"""Offline league tools: the `rlp league` commands and round-robin tournaments.

They read and extend a run's league on disk while its training is stopped; the league's rules
and state live in the pure `rl_platform.league` package, which knows nothing of these tools.
`tournament.play_tournament` is the one entry point for tournaments: the duel plays in its
vectorized arena (arena_round_robin.py), other two-player envs through the evaluation rollout
(rollout_round_robin.py).
"""
