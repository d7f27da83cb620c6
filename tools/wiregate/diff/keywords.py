"""The applicator keywords of the 2020-12 model every document is normalised to: where
subschemas sit. Each walk of schemas (normalising, resolving, detecting the draft) reads them
here."""

from __future__ import annotations

# Keywords whose value is one subschema / a map of subschemas / a list of subschemas.
SUBSCHEMA_KEYWORDS = frozenset(
    {
        "additionalProperties",
        "items",
        "contains",
        "not",
        "propertyNames",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
SUBSCHEMA_MAP_KEYWORDS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})
SUBSCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
# Keywords whose subschemas apply to the same value, not to a part of it: a reference cycle
# through these alone never ends (the specification leaves its behaviour undefined).
IN_PLACE_KEYWORDS = frozenset(
    {"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"}
)
