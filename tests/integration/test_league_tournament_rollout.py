"""`rlp league tournament` in a two-player env other than the duel (connect four).

The duel plays in its vectorized arena; other envs go through the evaluation rollout with
`league://RUN/ID` policies (rl_platform/tournament/rollout_round_robin.py).
"""

import json

from typer.testing import CliRunner

from rl_platform import load_spec, train
from rl_platform.commands.league import league_app
from rl_platform.league import LeaguePool
from rl_platform.run.export import export_policy
from tests.conftest import EXPERIMENTS

TINY = [
    "stop.iterations=2",
    "stop.env_steps=null",
    "checkpoint.every_iterations=1",
    "training.train_batch_size=200",
    "training.minibatch_size=100",
    "training.num_epochs=1",
    "model.hidden=[16]",
    "env.envs_per_runner=2",
    "league.snapshot_every=1",
    "logging.wandb=off",
    "logging.tensorboard=false",
]


def test_connect_four_tournament_rates_members_and_writes_the_matrix(ray_local, tmp_path):
    spec = load_spec(EXPERIMENTS / "connect_four_selfplay.yaml", overrides=TINY)
    run_dir = train(spec, out_dir=tmp_path).run_dir
    league_dir = run_dir / "league"
    before = {m.id: m for m in LeaguePool.open(league_dir)[0].members}

    exported = tmp_path / "main.safetensors"
    export_policy(run_dir, exported, module_id="main")

    games = 6
    args = ["tournament", str(run_dir), "--games", str(games)]
    args += ["-m", "main", "-m", "main_v1", "-m", "one_ply", "-m", "random"]
    args += ["--guest", f"policy://{exported}"]  # a player from outside the league
    played = CliRunner().invoke(league_app, args)
    assert played.exit_code == 0, played.output

    matrix = json.loads((league_dir / "tournament.json").read_text())
    assert matrix["ids"] == ["main", "main_v1", "one_ply", "random", "guest:main"]
    pairs = [(i, j) for i in range(5) for j in range(5) if i != j]
    assert all(matrix["games"][i][j] == games for i, j in pairs)  # every pair, both views
    one_ply, random = matrix["ids"].index("one_ply"), matrix["ids"].index("random")
    assert matrix["wins"][one_ply][random] >= games - 1  # the heuristic beats random play
    after = {m.id: m for m in LeaguePool.open(league_dir)[0].members}
    for member_id in ("main_v1", "one_ply", "random"):
        assert after[member_id].games == before[member_id].games + 4 * games
    assert not any(member_id.startswith("guest") for member_id in after)  # never stored
    (guest_line,) = [line for line in played.stderr.splitlines() if line.startswith("guest:main")]
    assert f"policy://{exported}" in guest_line and f"of {4 * games}" in guest_line
    assert after["one_ply"].mu > before["one_ply"].mu
    assert after["main_v2"] == before["main_v2"]  # not in the tournament
    assert (league_dir / "tournament.png").stat().st_size > 0
