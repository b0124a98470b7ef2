"""Shared settings of the tests that train on the duel."""

DUEL_SELF_DIM = 32
"""The own half of the duel's 64-float observation."""

TINY_DUEL_TRANSFORMER = {
    "type": "transformer_lstm",
    "history": 4,
    "layers": 1,
    "heads": 2,
    "d_model": 16,
    "obs_encoder": [16],
    "lstm_cell_size": 8,
    "actor": [8],
    "critic": [8],
    "max_seq_len": 4,
    "obs_split": {"self": [0, DUEL_SELF_DIM], "opponent": [DUEL_SELF_DIM, 64]},
}
"""A transformer_lstm small enough to train a few iterations in a test."""
