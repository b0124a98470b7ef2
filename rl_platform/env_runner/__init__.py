"""The array env runner for vectorized games (RLlib adapter); its pure parts are
`rl_platform.sampling`.
"""
