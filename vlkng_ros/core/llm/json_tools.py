"""Getting JSON out of model text, and checking it against a small JSON-schema subset.

Shared by every backend (Gemini, local transformers models) so that "the model answered" always
means the same thing: text that parses as JSON and matches the requested schema.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class InvalidModelOutput(ValueError):
    """The model's text is not (complete, schema-conforming) JSON. Worth a retry."""


def extract_json(text: str | None) -> Any:
    """Parse the JSON value in ``text``: bare JSON, a fenced ```json block, or the first
    balanced object/array inside prose. Raises InvalidModelOutput (with a short excerpt)."""
    if text is None or not text.strip():
        raise InvalidModelOutput("empty model output")
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start >= 0:
        candidates.append(text[start:].strip())
    decoder = json.JSONDecoder()
    last_error = ""
    for cand in candidates:
        try:
            return json.loads(cand)
        except json.JSONDecodeError as e:
            last_error = str(e)
        if cand.startswith(("{", "[")):
            try:  # a valid value followed by chatter
                value, _ = decoder.raw_decode(cand)
                return value
            except json.JSONDecodeError as e:
                last_error = str(e)
    excerpt = text.strip()[:120].replace("\n", " ")
    raise InvalidModelOutput(f"model output is not valid JSON ({last_error}); "
                             f"{len(text)} chars starting {excerpt!r}")


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


def schema_errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Violations of ``schema`` by ``value`` (type/properties/required/items/enum/nullable).
    An empty list means valid. Unknown keywords are ignored, as the LLM interface documents."""
    errors: list[str] = []
    if value is None and schema.get("nullable"):
        return errors
    typ = schema.get("type")
    if isinstance(typ, str):
        types = [typ.lower()]
    elif isinstance(typ, list):
        types = [str(t).lower() for t in typ]
    else:
        types = []
    if types:
        ok = False
        for t in types:
            py = _TYPES.get(t)
            if py is None:
                ok = True
                break
            if isinstance(value, py) and not (t in ("integer", "number") and isinstance(value, bool)):
                ok = True
                break
            if t == "integer" and isinstance(value, float) and value.is_integer():
                ok = True
                break
        if not ok:
            return [f"{path}: expected {'|'.join(types)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not one of {schema['enum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing required field {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                errors.extend(schema_errors(value[key], sub, f"{path}.{key}"))
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors.extend(schema_errors(item, schema["items"], f"{path}[{i}]"))
            if len(errors) > 20:
                break
    return errors


def parse_and_validate(text: str | None, schema: dict[str, Any] | None) -> Any:
    """extract_json + schema check; raises InvalidModelOutput listing the first violations."""
    value = extract_json(text)
    if schema:
        errs = schema_errors(value, schema)
        if errs:
            more = f" (+{len(errs) - 5} more)" if len(errs) > 5 else ""
            raise InvalidModelOutput("model JSON does not match the schema: "
                                     + "; ".join(errs[:5]) + more)
    return value
