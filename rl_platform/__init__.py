"""rl_platform: experiments as files on RLlib's new API stack."""
