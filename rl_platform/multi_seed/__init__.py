"""Several seeds of one spec as one experiment (`rlp train SPEC --seeds 3`).

Pure parts: `selection` (what `--seeds` means), `folder` (the parent folder's layout), `stats`
(mean, IQM, bootstrap interval), `summary` (the parent's `trial_metrics.json`). The Ray Tune
adapter is `tuner` (one trial per seed, each a normal `rlp train` run folder).
"""
