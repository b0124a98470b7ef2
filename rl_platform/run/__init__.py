"""Training orchestration: the run loop, checkpoints, metric sinks, signals and progress."""
