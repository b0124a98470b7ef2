"""rl_platform's array env runner for vectorized games (docs/vector_games.md).

Pure numpy parts (no Ray): `choice` (which runner a spec gets), `seat_plan` (who plays each
seat), `rollout` (preallocated arrays cut into per-seat trajectories), `game_stats`
(per-game sums and metrics), `seat_states` (recurrent states per seat), `model_inputs`
(opponent-history windows). RLlib adapters: `vector_env_runner`, `module_actions`,
`episodes`, `bc_rows`, `wiring`.
"""
