"""Named policies: the `Policy` interface (`base.py`) and loading; the URI syntax is
`rl_platform.spec.policy_uri` (specs name teachers and opponents by URI).

Importing this package does not import Ray; rebuilding a learned module does (lazily).
"""

from rl_platform.policies.base import FunctionPolicy, Policy, RandomPolicy
from rl_platform.policies.loading import EnvContext, learned_parts, learned_policy, load_policy
from rl_platform.spec.policy_uri import PolicyKind, PolicyURI, parse_policy_uri

__all__ = [
    "EnvContext",
    "FunctionPolicy",
    "Policy",
    "PolicyKind",
    "PolicyURI",
    "RandomPolicy",
    "learned_parts",
    "learned_policy",
    "load_policy",
    "parse_policy_uri",
]
