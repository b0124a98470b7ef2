"""Connect four for the array env runner, matching `pettingzoo/connect_four_v3` (no Ray).

`ConnectFourVectorGame` plays N games in numpy; what an agent sees and earns equals PettingZoo's
connect_four_v3 through rl_platform/env_adapters/pettingzoo_adapter.py (see vector_game.py).
"""

from rl_platform.envs.connect_four.vector_game import ConnectFourVectorGame

__all__ = ["ConnectFourVectorGame"]
