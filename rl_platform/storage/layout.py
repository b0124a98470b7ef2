"""The names inside a run folder, declared once (every reader and writer imports them).

```
<out>/<name>/<YYYYmmdd-HHMMSS>/
  spec.yaml            the resolved spec (secrets masked)
  metrics.jsonl        one row per iteration
  trial_metrics.json   the run's summary
  train.log            the run's log
  evaluation.jsonl     one row per evaluation during training (`evaluation:` specs)
  checkpoints/         iter_NNNNNN/ folders, the `latest` pointer, `best.json` and `pins.json`
  league/              the league's pool (league runs)
  manifest.json        what `logging.storage` holds of the run (`rl_platform.storage.run_manifest`)
```
"""

RUNS_DIR = "runs"
"""Where run folders go by default (`rlp train --out`), and where `rlp pull` puts runs."""
SPEC_FILE = "spec.yaml"
METRICS_FILE = "metrics.jsonl"
TRIAL_METRICS_FILE = "trial_metrics.json"
LOG_FILE = "train.log"
CHECKPOINTS_DIR = "checkpoints"
LATEST_FILE = "latest"
BEST_FILE = "best.json"
"""The best evaluated checkpoint: {"checkpoint": "iter_NNNNNN", "metric": key, "value": v}."""
PINS_FILE = "pins.json"
"""Checkpoints retention must keep besides `latest` and `best`: {"iter_NNNNNN": "why"}."""
EVALUATION_FILE = "evaluation.jsonl"
LEAGUE_DIR = "league"
MANIFEST_FILE = "manifest.json"
"""Relative path -> size + sha256 of every file of the run on storage, written last."""
