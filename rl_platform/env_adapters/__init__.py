"""Envs as RLlib sees them: registration with Ray, the PettingZoo adapter, a
vector game as a `MultiAgentEnv`, the duel's `MultiAgentEnv`.
"""
