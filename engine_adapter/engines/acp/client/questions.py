"""An ACP elicitation's form as the cockpit's question fields, and an answer back to the agent.

`fields_from_schema` turns the agent's `requestedSchema` (an object of primitive properties)
into `QuestionField`s: a string is "text" (or "choice" when it lists `enum`/`oneOf` values), a
number "number", an integer "integer", a boolean "boolean", an array of options "multi". The
agent's words (titles, descriptions, option labels) are cleaned and capped here; a field name is
kept as the agent wrote it (the answer goes back under it). A form the cockpit cannot show
truthfully raises `UnsupportedForm`, and the question is declined: too many fields or options, a
name too long to show, or a required field of a kind it does not know (an optional one is left
out, saying so in the message).
"""

from __future__ import annotations

from typing import TypedDict

from acp.schema import (
    ElicitationBooleanPropertySchema,
    ElicitationIntegerPropertySchema,
    ElicitationMultiSelectPropertySchema,
    ElicitationNumberPropertySchema,
    ElicitationOtherPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    OtherMultiSelectItems,
    StringMultiSelectItems,
    TitledMultiSelectItems,
)

from engine_adapter.engines.acp.text import clean
from engine_adapter.events import QuestionField, QuestionOption

__all__ = ["MAX_FIELDS", "MAX_OPTIONS", "UnsupportedForm", "fields_from_schema"]

MAX_FIELDS = 40
MAX_OPTIONS = 200
NAME_LIMIT = 200
TITLE_LIMIT = 300
DESCRIPTION_LIMIT = 1_000


PropertySchema = (ElicitationStringPropertySchema | ElicitationNumberPropertySchema
                  | ElicitationIntegerPropertySchema | ElicitationBooleanPropertySchema
                  | ElicitationMultiSelectPropertySchema | ElicitationOtherPropertySchema)
"""One property of an elicitation's form, as the SDK reads it."""
Items = StringMultiSelectItems | OtherMultiSelectItems | TitledMultiSelectItems
"""The options of an array property."""


class UnsupportedForm(Exception):
    """The agent's form cannot be shown as it is; the message says why."""


class _Common(TypedDict):
    """What every kind of field is given."""

    name: str
    required: bool
    title: str
    description: str


def _option(value: str, label: str = "") -> QuestionOption:
    return QuestionOption(value=value, label=clean(label, TITLE_LIMIT))


def _options(prop: ElicitationStringPropertySchema | Items) -> list[QuestionOption] | None:
    """The options a string property or an array's items offer, or `None`."""
    if isinstance(prop, TitledMultiSelectItems):
        return [_option(o.const, o.title) for o in prop.any_of] if prop.any_of else None
    if isinstance(prop, OtherMultiSelectItems):
        return None
    if isinstance(prop, ElicitationStringPropertySchema) and prop.one_of:
        return [_option(o.const, o.title) for o in prop.one_of]
    return [_option(value) for value in prop.enum] if prop.enum else None


def _field(name: str, prop: PropertySchema, required: bool) -> QuestionField | None:
    """One property as a field (`None`: a kind the cockpit does not know)."""
    if isinstance(prop, ElicitationOtherPropertySchema):
        return None
    common = _Common(name=name, required=required, title=clean(prop.title or "", TITLE_LIMIT),
                     description=clean(prop.description or "", DESCRIPTION_LIMIT))
    if isinstance(prop, ElicitationStringPropertySchema):
        options = _options(prop)
        if options is not None:
            valid = prop.default if prop.default in {o.value for o in options} else None
            return QuestionField(kind="choice", options=options, default=valid, **common)
        return QuestionField(kind="text", default=prop.default, minimum=prop.min_length,
                             maximum=prop.max_length,
                             format=clean(prop.format, 40) if prop.format else None, **common)
    if isinstance(prop, ElicitationNumberPropertySchema | ElicitationIntegerPropertySchema):
        return QuestionField(kind=prop.type, default=prop.default, minimum=prop.minimum,
                             maximum=prop.maximum, **common)
    if isinstance(prop, ElicitationBooleanPropertySchema):
        return QuestionField(kind="boolean", default=prop.default, **common)
    options = _options(prop.items)
    if options is None:
        return None
    offered = {o.value for o in options}
    chosen = [value for value in prop.default or [] if value in offered] or None
    return QuestionField(kind="multi", options=options, default=chosen,
                         minimum=prop.min_items, maximum=prop.max_items, **common)


def fields_from_schema(schema: ElicitationSchema) -> tuple[list[QuestionField], list[str]]:
    """The fields of an elicitation's `requestedSchema`, and the names of optional fields of
    an unknown kind that were left out. Raises `UnsupportedForm` (see the module docstring)."""
    properties = dict(schema.properties or {})
    required = set(schema.required or [])
    if len(properties) > MAX_FIELDS:
        raise UnsupportedForm(f"the form has {len(properties)} fields (at most {MAX_FIELDS} "
                              "can be shown)")
    fields: list[QuestionField] = []
    left_out: list[str] = []
    for name, prop in properties.items():
        if len(name) > NAME_LIMIT:
            raise UnsupportedForm(f"a field's name is longer than {NAME_LIMIT} characters")
        field = _field(name, prop, name in required)
        if field is None:
            if name in required:
                raise UnsupportedForm(f"the required field {clean(name, 60)!r} asks for a kind "
                                      f"of answer the cockpit cannot take "
                                      f"({clean(prop.type, 40)})")
            left_out.append(clean(name, 60))
            continue
        if field.options is not None and len(field.options) > MAX_OPTIONS:
            raise UnsupportedForm(f"the field {clean(name, 60)!r} offers {len(field.options)} "
                                  f"options (at most {MAX_OPTIONS} can be shown)")
        fields.append(field)
    return fields, left_out
