"""The plain-torch yardstick of the reference recipe, one concept per module; the command and
its documentation are `benchmarks/plain_torch_recipe.py` (`python -m
benchmarks.plain_torch_recipe`).

* `config`: the recipe's settings read from its spec file, the flags on top (`RecipeConfig`);
* `net`: the network, its inputs and one acting forward;
* `opponents`: the opponent of each game, drawn from the recipe's `league.opponent_mix`;
* `acting`: main's and the snapshots' forwards per frame, eager or as CUDA graphs;
* `sampling`: the games stepped into a `Rollout`;
* `batch`: values, GAE and the learner batch (padded sequences, or fixed ones with resets);
* `learning`: the PPO loss and the eager update; `captured_update`: the update as CUDA graphs;
* `report`: timings, the result dict and its printout.

Nothing here imports Ray or rl_platform's sampling, league or RLlib adapters
(tests/unit/test_plain_torch_recipe.py checks it).
"""
