"""The names inside a run folder, declared once (every reader and writer imports them).

```
<out>/<name>/<YYYYmmdd-HHMMSS>/
  spec.yaml            the resolved spec (secrets masked)
  metrics.jsonl        one row per iteration
  trial_metrics.json   the run's summary
  train.log            the run's log
  checkpoints/         iter_NNNNNN/ folders and the `latest` pointer
  league/              the league's pool (league runs)
```
"""

SPEC_FILE = "spec.yaml"
METRICS_FILE = "metrics.jsonl"
TRIAL_METRICS_FILE = "trial_metrics.json"
LOG_FILE = "train.log"
CHECKPOINTS_DIR = "checkpoints"
LATEST_FILE = "latest"
LEAGUE_DIR = "league"
