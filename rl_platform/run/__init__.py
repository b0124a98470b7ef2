"""Training orchestration: the one training loop, health checks, resume, metric sinks, signals
and progress. Storage (run folders, checkpoints) lives below it in `rl_platform.storage`."""
