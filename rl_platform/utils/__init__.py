"""Small helpers shared across rl_platform; none of them imports Ray."""
