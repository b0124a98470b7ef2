"""Seal Tune's experiment state so `rlp search --resume` never unpickles a file it did not write.

Tune restores a search by unpickling `tuner.pkl`, the searcher state and the pickled parts of
`experiment_state-*.json`; a search folder handed over by someone else could carry code in any
of them. So every Tune state file is copied, when Tune writes it, into `.rlp-sealed/` beside an
HMAC-SHA256 manifest keyed by a secret only this user can read (`seal_key_path()`). Resuming
first puts the sealed copies back, moves every other state or pickle file aside into
`.rlp-unsealed/`, and refuses unless every copy matches its HMAC. The sealed state is the one
Tune had when it last saved; Tune resumes from it as it would from its own.
"""

import hashlib
import hmac
import json
import os
import secrets
import shutil
from collections.abc import Iterable
from pathlib import Path

from rl_platform.base.errors import UserError
from rl_platform.storage.run_lock import LOCK_FILE
from rl_platform.utils.atomic import write_bytes_atomic, write_text_atomic

SEALED_DIR = ".rlp-sealed"
QUARANTINE_DIR = ".rlp-unsealed"
MANIFEST = "manifest.json"
KEY_BYTES = 32
# Our own files in a search folder: plain text we never unpickle, so they stay unsealed. The
# lock stays in place above all: moved aside or replaced, a third command could lock anew.
OWN_FILES = frozenset({"spec.yaml", "results.csv", "best.yaml", "search.log", LOCK_FILE})


def seal_key_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "rl_platform" / "seal.key"


def _key() -> bytes:
    path = seal_key_path()
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:  # O_EXCL: two searches starting at once must not write two different keys
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(KEY_BYTES))
    key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise UserError(f"{path}: not a seal key ({len(key)} bytes); delete it to make a new one")
    return key


def _mac(key: bytes, name: str, data: bytes) -> str:
    # The name is part of the message: a sealed file cannot be replayed under another name.
    return hmac.new(key, name.encode() + b"\0" + data, hashlib.sha256).hexdigest()


def _read_manifest(search_dir: Path, key: bytes) -> dict[str, str]:
    path = search_dir / SEALED_DIR / MANIFEST
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
        entries, mac = data["files"], data["mac"]
    except (ValueError, KeyError, TypeError):
        raise UserError(f"{path}: not a seal manifest") from None
    body = json.dumps(entries, sort_keys=True).encode()
    if not isinstance(entries, dict) or not hmac.compare_digest(mac, _mac(key, MANIFEST, body)):
        raise UserError(f"{path}: the manifest's HMAC does not match this user's seal key")
    return entries


def tune_state_files(folder: Path) -> list[Path]:
    """Tune's experiment-level state in `folder`: its top-level files other than ours."""
    return sorted(
        p for p in folder.iterdir() if p.is_file() and p.name not in OWN_FILES | {MANIFEST}
    )


def seal(search_dir: Path, files: Iterable[Path]) -> None:
    """Copy `files` into the sealed folder and record their HMACs (earlier entries stay)."""
    key = _key()
    sealed = search_dir / SEALED_DIR
    sealed.mkdir(exist_ok=True)
    entries = _read_manifest(search_dir, key)
    for path in files:
        data = path.read_bytes()
        write_bytes_atomic(sealed / path.name, data, private=True)  # tuner.pkl holds the spec
        entries[path.name] = _mac(key, path.name, data)
    body = json.dumps(entries, sort_keys=True).encode()
    manifest = {"files": entries, "mac": _mac(key, MANIFEST, body)}
    write_text_atomic(sealed / MANIFEST, json.dumps(manifest, sort_keys=True))


def _quarantine(search_dir: Path, path: Path) -> None:
    target = search_dir / QUARANTINE_DIR / path.relative_to(search_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(path), str(target))


def unseal(search_dir: Path) -> None:
    """Put the sealed state back in place of whatever Tune state the folder holds now; raise
    `UserError` (nothing moved) unless every sealed file matches its HMAC."""
    key = _key()
    entries = _read_manifest(search_dir, key)
    if not entries:
        raise UserError(
            f"--resume {search_dir}: no sealed search state; only searches started by "
            "`rlp search` as this user can be resumed (resuming would unpickle unverified files)"
        )
    sealed = search_dir / SEALED_DIR
    verified: dict[str, bytes] = {}
    for name, mac in entries.items():
        path = sealed / name
        data = path.read_bytes() if path.is_file() else b""
        if not path.is_file() or not hmac.compare_digest(mac, _mac(key, name, data)):
            raise UserError(f"--resume {search_dir}: {path} does not match its seal")
        verified[name] = data
    for path in tune_state_files(search_dir):
        _quarantine(search_dir, path)
    for path in search_dir.rglob("*.pkl"):
        if SEALED_DIR not in path.parts and QUARANTINE_DIR not in path.parts:
            _quarantine(search_dir, path)
    for name, data in verified.items():
        write_bytes_atomic(search_dir / name, data)
