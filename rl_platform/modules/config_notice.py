"""Our RLModules build without RLlib's `RLModuleConfig` deprecation notice.

RLlib 2.60's own `RLModule.__init__` builds the deprecated `RLModuleConfig` for every module,
which logs "`RLModule(config=[RLModuleConfig object])` has been deprecated ... will raise an
error in the future" though nobody passed one (why it cannot be turned off otherwise:
`ray_runtime/rllib_internals.skip_rl_module_config_notice`). `WithoutConfigNotice`, the first
base of each of our RLModules, takes the notice before RLlib's constructor runs, wherever the
module is built: by our config, in an env runner or learner process, or by `RLModuleSpec.build`
in a user's plain RLlib script.
"""

from typing import Any

from rl_platform.ray_runtime.rllib_internals import skip_rl_module_config_notice


class WithoutConfigNotice:
    """First base of an RLModule: RLlib's `RLModuleConfig` notice stays out of the process.
    The constructor only passes its arguments on; `setup()` stays the module's hook."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        skip_rl_module_config_notice()
        super().__init__(*args, **kwargs)
