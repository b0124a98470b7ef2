"""The keys of observation dicts, declared once: envs, teachers, connectors, modules, the
learner and the array env runner all read them.

RLlib's action-masking convention (an env's Dict observation, see
ray/rllib/examples/rl_modules/classes/action_masking_rlm.py):
"""

ACTION_MASK_KEY = "action_mask"
"""The legal actions, 1.0 where allowed."""
MASKED_OBS_KEY = "observations"
"""The observation proper, beside `ACTION_MASK_KEY`."""

# The opponent-history model's input dict (`connectors/opponent_history.py` builds it in the
# env-to-module pipeline, `sampling/model_inputs.py` in the array env runner).
SELF_KEY = "obs"
"""The agent's own features."""
HISTORY_KEY = "opponent_history"
"""The opponent's last frames, [H, D] (`nets/history_window.py`)."""
MASK_KEY = "history_mask"
"""[H], 1.0 where `HISTORY_KEY` holds a real frame."""
