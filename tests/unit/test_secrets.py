"""mask_secrets hides values under secret-looking keys and leaves everything else alone."""

import pytest

from rl_platform.utils.secrets import MASK, is_secret_key, mask_secrets


@pytest.mark.parametrize(
    "key",
    [
        "WANDB_API_KEY",
        "aws_secret_access_key",
        "RAY_AUTH_TOKEN",
        "github_token",
        "CLIENT_SECRET",
        "DB_PASSWORD",
        "password",
        "MyPasswordFile",
        "auth_token",
        "x-api-key",
    ],
)
def test_secret_keys_are_recognised(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    ["RLP_STOP_GRACE_S", "WANDB_PROJECT", "KEYBOARD", "TOKENIZER", "SECRETARY_NAME", "monkey"],
)
def test_ordinary_keys_are_not_secret(key: str) -> None:
    assert not is_secret_key(key)


def test_mask_secrets_masks_values_including_nested_mappings_and_keeps_input() -> None:
    runtime_env = {
        "working_dir": ".",
        "env_vars": {"WANDB_API_KEY": "abc123", "RLP_STOP_GRACE_S": "60", "my_token": "t0k"},
        "GITHUB_TOKEN": "ghp_x",
    }
    masked = mask_secrets(runtime_env)
    assert masked == {
        "working_dir": ".",
        "env_vars": {"WANDB_API_KEY": MASK, "RLP_STOP_GRACE_S": "60", "my_token": MASK},
        "GITHUB_TOKEN": MASK,
    }
    # The caller's mapping still carries the real values.
    assert runtime_env["env_vars"]["WANDB_API_KEY"] == "abc123"
    assert "abc123" not in repr(masked) and "t0k" not in repr(masked)


def test_mask_secrets_ignores_non_string_keys() -> None:
    assert mask_secrets({1: "one", "PASSWORD": None}) == {1: "one", "PASSWORD": MASK}


def test_mask_secrets_reaches_into_lists_and_tuples() -> None:
    config = {"callbacks": [{"API_KEY": "k1"}, "plain"], "pair": ({"db_password": "p"}, 2)}
    masked = mask_secrets(config)
    assert masked == {"callbacks": [{"API_KEY": MASK}, "plain"], "pair": ({"db_password": MASK}, 2)}
    assert config["callbacks"][0]["API_KEY"] == "k1"
