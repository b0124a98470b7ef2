"""The one audited place that parses YAML text.

Only plain data is built: any tag (`!!python/object/apply`, `!include`, ...) is refused before
anything is constructed, so a spec can never run code. Floats like `3e-4` (YAML 1.1 would read a
string) parse as numbers, matching what people write in specs.
"""

import re
from typing import Any

import yaml

_STANDARD_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "map", "seq")
)


class YamlTagError(ValueError):
    """A YAML document used a tag other than the standard plain-data ones."""


class _PlainDataLoader(yaml.SafeLoader):
    """SafeLoader that refuses explicit tags and reads `1e-3`-style floats as numbers."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node.tag not in _STANDARD_TAGS:
            mark = node.start_mark
            raise YamlTagError(
                f"line {mark.line + 1}: tag {node.tag!r} is not allowed in specs (plain data only)"
            )
        return super().construct_object(node, deep=deep)


# Dates stay strings (plain data that OmegaConf can merge) and only true/false are booleans,
# as in YAML 1.2: `wandb: off` must mean the string "off", not False.
_REPLACED = {"tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:float"}
_PlainDataLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _REPLACED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_PlainDataLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)
_PlainDataLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+][0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def parse_yaml(text: str) -> Any:
    """Parse one YAML document into plain Python data; raise `YamlTagError`/`yaml.YAMLError`."""
    # The loader refuses every non-plain tag before construction (see _PlainDataLoader).
    return yaml.load(text, Loader=_PlainDataLoader)


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True)
