"""Connector pieces (ConnectorV2). Importing this package does not import Ray.

- `history_window`: pure-numpy rolling windows and observation splitting.
- `opponent_history.OpponentHistory`: the env-to-module piece (imports Ray; import it directly
  or build it via `rl_platform.modules.history_connector_for`).
"""
