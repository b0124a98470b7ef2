"""The one audited place that parses YAML text.

Only plain data is built: any tag (`!!python/object/apply`, `!include`, ...) is refused before
anything is constructed, so a spec can never run code. Floats like `3e-4` (YAML 1.1 would read a
string) parse as numbers, matching what people write in specs.

Parsing cost is bounded before any object is built: the text size, the nesting depth, the
values that aliases copy and the size of the document once they are copied (a few hundred bytes
of nested `*alias`es describe billions of nodes, which later deep copies would materialize).
Aliases are counted while the document is composed, each node sized once when it is complete,
so a bomb is refused at the alias that crosses the bound, in milliseconds. Duplicate keys are
refused rather than silently keeping the last one.
"""

import re
from typing import Any

import yaml

_STANDARD_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "map", "seq")
)
MAX_TEXT_CHARS = 1_000_000
MAX_DEPTH = 40
MAX_EXPANDED_NODES = 200_000
MAX_ALIAS_VALUES = 10_000
"""Values a document may add through aliases (each `*name` copies the node `&name` marks). A
spec that reuses a block a few times adds hundreds; an ~800-byte file of nested aliases adds
185 000 (450 MB and 19 s of CPU once OmegaConf and pydantic had copied them)."""


class YamlTagError(ValueError):
    """A YAML document used a tag other than the standard plain-data ones."""


class YamlLimitError(ValueError):
    """A YAML document is too large, too deep, expands too far or repeats a key."""


class _PlainDataLoader(yaml.SafeLoader):
    """SafeLoader that refuses explicit tags, deep nesting and duplicate keys, and reads
    `1e-3`-style floats as numbers."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, int] = {}  # id(node) -> values once its aliases are copied
        self._aliased = 0  # values added by aliases so far

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        # Checked while composing, before PyYAML's own recursion could overflow the stack.
        self._depth += 1
        try:
            mark = self.peek_event().start_mark
            if self._depth > MAX_DEPTH:
                raise YamlLimitError(f"line {mark.line + 1}: nested deeper than {MAX_DEPTH} levels")
            alias = self.check_event(yaml.AliasEvent)
            node = super().compose_node(parent, index)
            if alias:
                self._count_alias(node, mark)
            else:  # complete: its children, aliases included, are sized already
                self._sizes[id(node)] = 1 + sum(self.size_of(child) for child in _children(node))
            return node
        finally:
            self._depth -= 1

    def size_of(self, node: yaml.Node) -> int:
        """Values in `node` once its aliases are copied; 1 for a node still being composed
        (an alias to its own ancestor: the constructor reports the cycle)."""
        return self._sizes.get(id(node), 1)

    def _count_alias(self, node: yaml.Node, mark: yaml.Mark) -> None:
        self._aliased += self.size_of(node)
        if self._aliased > MAX_ALIAS_VALUES:
            raise YamlLimitError(
                f"line {mark.line + 1}: expands to more than {MAX_ALIAS_VALUES:,} values through "
                f"its aliases (*name), the bound on what aliases may copy; a spec needs a few "
                "hundred: write the repeated blocks out, or use `_base` includes"
            )

    def scan_to_next_token(self) -> None:
        """PyYAML's scanner (yaml/scanner.py `scan_to_next_token`) skips only spaces between
        tokens, so `hidden: [64,<TAB>64]` or `lr:<TAB>3e-4` were refused. YAML 1.2 allows a
        tab wherever it separates (`s-separate-in-line`); only block indentation must be
        spaces, so a tab there is still left for the scanner to refuse."""
        if self.index == 0 and self.peek() == "\ufeff":
            self.forward()
        while True:
            while self.peek() == " " or (self.peek() == "\t" and not self._in_indentation()):
                self.forward()
            if self.peek() == "#":
                while self.peek() not in "\0\r\n\x85\u2028\u2029":
                    self.forward()
            if not self.scan_line_break():
                return
            if not self.flow_level:
                self.allow_simple_key = True

    def _in_indentation(self) -> bool:
        """Block indentation: only spaces before this point on the line, outside `[...]`/`{...}`."""
        if self.flow_level:
            return False
        line = self.buffer[self.pointer - self.column : self.pointer]
        return line.strip(" ") == ""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node.tag not in _STANDARD_TAGS:
            mark = node.start_mark
            raise YamlTagError(
                f"line {mark.line + 1}: tag {node.tag!r} is not allowed in specs (plain data only)"
            )
        return super().construct_object(node, deep=deep)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.value == "<<":
                continue  # merge keys (`<<: *base`) override on purpose
            line = key_node.start_mark.line + 1
            if key_node.value in seen:
                raise YamlLimitError(
                    f"line {line}: key {key_node.value!r} is given twice (first on line "
                    f"{seen[key_node.value]}); remove one"
                )
            seen[key_node.value] = line
        return super().construct_mapping(node, deep=deep)


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


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def parse_yaml(text: str) -> Any:
    """Parse one YAML document into plain Python data; raise `YamlTagError`, `YamlLimitError`
    or `yaml.YAMLError`."""
    if len(text) > MAX_TEXT_CHARS:
        raise YamlLimitError(f"{len(text)} characters; specs are limited to {MAX_TEXT_CHARS}")
    loader = _PlainDataLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if loader.size_of(node) > MAX_EXPANDED_NODES:
            raise YamlLimitError(
                f"expands to more than {MAX_EXPANDED_NODES} values once its aliases (*name) "
                "are copied; a spec needs a few hundred"
            )
        # The loader refuses every non-plain tag before construction (see _PlainDataLoader).
        return loader.construct_document(node)
    finally:
        loader.dispose()


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True)
