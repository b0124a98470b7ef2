"""The array env runner's pure numpy parts (no Ray; docs/vector_games.md): `seat_plan` (who
plays each seat), `rollout` (preallocated arrays cut into per-seat trajectories), `game_stats`
(per-game sums and metrics), `seat_states` (recurrent states per seat), `model_inputs`
(opponent-history windows), `rollout_batch`, `overlap`, `runner_settings`. The RLlib runner
that drives them is `rl_platform.env_runner`.
"""
