"""Check 15: secret values in a spec (API keys, passwords, tokens, nested or in lists) never reach
the dumped spec, any other file of the run folder, the W&B config, or `rlp validate` output."""

import json

from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.utils.safe_yaml import parse_yaml
from rl_platform.utils.secrets import MASK, mask_secrets
from tests.reliability.support import SECRETS


def _leaks(text: str) -> list[str]:
    return [name for name, value in SECRETS.items() if value in text]


def test_no_file_in_the_run_folder_contains_a_secret(smoke_run):
    files = [p for p in smoke_run.run_dir.rglob("*") if p.is_file()]
    assert len(files) >= 8
    leaking = {
        str(p.relative_to(smoke_run.run_dir)): _leaks(p.read_bytes().decode("latin-1"))
        for p in files
    }
    assert {path: names for path, names in leaking.items() if names} == {}


def test_dumped_spec_masks_secret_values_and_keeps_the_rest(smoke_run):
    dumped = parse_yaml((smoke_run.run_dir / "spec.yaml").read_text())
    kwargs = dumped["env"]["kwargs"]
    assert kwargs["API_KEY"] == MASK
    assert kwargs["database"] == {"host": "db.internal", "DB_PASSWORD": MASK}
    assert kwargs["headers"] == [{"AUTH_TOKEN": MASK}]
    assert kwargs["apiKey"] == MASK  # camelCase secret names too
    assert kwargs["endpoint"] == f"https://svc:{MASK}@db.internal"  # masked by value
    assert dumped["name"] == "reliability_smoke" and dumped["env"]["id"]


def test_wandb_receives_a_masked_config(smoke_run):
    (init,) = smoke_run.wandb.inits
    assert _leaks(json.dumps(init, default=str)) == []
    assert init["config"]["env"]["kwargs"]["API_KEY"] == MASK
    assert init["config"]["env"]["kwargs"]["headers"] == [{"AUTH_TOKEN": MASK}]
    assert smoke_run.wandb.logged, "the fake W&B run received no metrics"
    assert _leaks(json.dumps(smoke_run.wandb.logged)) == []


def test_the_env_still_receives_the_real_values(smoke_run):
    assert smoke_run.env_kwargs_seen, "the test env was never built"
    seen = smoke_run.env_kwargs_seen[0]
    assert seen["API_KEY"] == SECRETS["API_KEY"]
    assert seen["database"]["DB_PASSWORD"] == SECRETS["DB_PASSWORD"]
    assert seen["headers"][0]["AUTH_TOKEN"] == SECRETS["AUTH_TOKEN"]


def test_rlp_validate_output_masks_secrets_including_overrides(smoke_run):
    result = CliRunner().invoke(
        app,
        ["validate", str(smoke_run.spec_path), "--set", "env.kwargs.SERVICE_TOKEN=tok-override-1"],
    )
    assert result.exit_code == 0, result.output
    assert _leaks(result.output) == [] and "tok-override-1" not in result.output
    assert parse_yaml(result.output)["env"]["kwargs"]["SERVICE_TOKEN"] == MASK


def test_mask_secrets_reaches_into_lists_and_tuples():
    data = {"a": [{"API_KEY": "x"}, ({"db": {"PASSWORD": "y"}},)], "keep": [1, "two"]}
    masked = mask_secrets(data)
    assert masked == {"a": [{"API_KEY": MASK}, ({"db": {"PASSWORD": MASK}},)], "keep": [1, "two"]}
    assert data["a"][0]["API_KEY"] == "x"  # the input is untouched


def test_known_secret_values_are_masked_wherever_they_appear(monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "wandb-key-0a1b2c3d")
    data = {"note": "uses wandb-key-0a1b2c3d", "monkey": "banana", "pw": {"passwd": "hunter22"}}
    data["url"] = "postgres://u:hunter22@db"  # a secret under an innocent key elsewhere
    masked = mask_secrets(data)
    assert masked["note"] == f"uses {MASK}"
    assert masked["monkey"] == "banana"  # `monkey` is not a secret key name
    assert masked["pw"] == {"passwd": MASK} and masked["url"] == f"postgres://u:{MASK}@db"


def test_log_messages_mask_known_secret_values(monkeypatch, tmp_path):
    from loguru import logger

    from rl_platform.storage.run_dir import add_file_log

    monkeypatch.setenv("SERVICE_TOKEN", "svc-token-9f8e7d")
    handle = add_file_log(tmp_path)
    try:
        logger.info("connecting with svc-token-9f8e7d")
    finally:
        logger.remove(handle)
    text = (tmp_path / "train.log").read_text()
    assert "connecting with ***" in text and "svc-token-9f8e7d" not in text
