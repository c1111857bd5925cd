"""Generates mnemo_client/_operations.py from docs/openapi.json: a TypedDict for every
schema of the document, and one method per operation on a synchronous and an asynchronous
base class.

    python3 clients/python/generate.py           # write the module
    python3 clients/python/generate.py --check   # fail if it is not current (CI)
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCUMENT = HERE.parent.parent / "docs" / "openapi.json"
TARGET = HERE / "src" / "mnemo_client" / "_operations.py"


def ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def python_type(schema: dict, optional: bool = False) -> str:
    """The Python annotation of a JSON Schema (as this document writes them)."""
    if not schema:
        return "Any"
    if "$ref" in schema:
        annotation = ref_name(schema["$ref"])
    elif "const" in schema:
        annotation = f"Literal[{json.dumps(schema['const'])}]"
    elif "enum" in schema:
        values = [v for v in schema["enum"] if v is not None]
        annotation = "Literal[" + ", ".join(json.dumps(v) for v in values) + "]"
        if None in schema["enum"]:
            annotation = f"Optional[{annotation}]"
    elif "anyOf" in schema or "oneOf" in schema:
        parts = schema.get("anyOf") or schema.get("oneOf")
        nullable = any(p.get("type") == "null" for p in parts)
        kinds = []
        for p in parts:
            if p.get("type") == "null":
                continue
            t = python_type(p)
            if t not in kinds:
                kinds.append(t)
        annotation = kinds[0] if len(kinds) == 1 else "Union[" + ", ".join(kinds) + "]"
        if nullable:
            annotation = f"Optional[{annotation}]"
    else:
        types = schema.get("type", "object")
        if isinstance(types, list):
            nullable = "null" in types
            rest = [t for t in types if t != "null"]
            inner = python_type({**schema, "type": rest[0]}) if rest else "None"
            annotation = f"Optional[{inner}]" if nullable else inner
        elif types == "string":
            annotation = "str"
        elif types == "integer":
            annotation = "int"
        elif types == "number":
            annotation = "float"
        elif types == "boolean":
            annotation = "bool"
        elif types == "null":
            annotation = "None"
        elif types == "array":
            annotation = f"List[{python_type(schema.get('items', {}))}]"
        else:
            extra = schema.get("additionalProperties")
            value = python_type(extra) if isinstance(extra, dict) else "Any"
            annotation = f"Dict[str, {value}]"
    if optional and not annotation.startswith("Optional["):
        annotation = f"Optional[{annotation}]"
    return annotation


def typed_dicts(schemas: dict) -> list[str]:
    """TypedDict classes (annotations are lazy, so they may name any type), then the other
    schemas as aliases, each after the aliases it names."""
    classes, aliases = [], {}
    for name in sorted(schemas):
        schema = schemas[name]
        doc = " ".join((schema.get("description") or name).split()).replace('"""', "'")
        if "properties" in schema and schema.get("type", "object") == "object":
            required = set(schema.get("required", []))
            fields = []
            for field, prop in schema["properties"].items():
                assert field.isidentifier() and not keyword.iskeyword(field), (name, field)
                annotation = python_type(prop)
                if field not in required:
                    annotation = f"NotRequired[{annotation}]"
                fields.append(f"    {field}: {annotation}")
            classes.append(f'class {name}(TypedDict):\n    """{doc}"""\n\n' + "\n".join(fields) + "\n")
        else:
            aliases[name] = (doc, python_type(schema))
    ordered, placed = [], set()
    while len(placed) < len(aliases):
        for name, (doc, annotation) in sorted(aliases.items()):
            names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", annotation))
            if name not in placed and not (names & (set(aliases) - placed - {name})):
                ordered.append(f"#: {doc}\n{name} = {annotation}\n")
                placed.add(name)
    return ["\n\n".join(classes), "\n".join(ordered)]


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def operations(document: dict) -> list[dict]:
    schemas = document["components"]["schemas"]
    ops = []
    for path, item in document["paths"].items():
        for method, op in item.items():
            path_params = [p["name"] for p in op["parameters"] if p["in"] == "path"]
            query = {p["name"]: p["schema"] for p in op["parameters"] if p["in"] == "query"}
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            content = op["responses"]["200"].get("content", {})
            media, response = next(iter(content.items())) if content else ("application/json", {})
            response = response.get("schema", {})
            fields: dict[str, tuple[dict, bool]] = {}
            whole_body = None
            if body is not None:
                name = ref_name(body["$ref"])
                body_schema = schemas[name]
                if name.endswith("Body") and "properties" in body_schema:
                    required = set(body_schema.get("required", []))
                    for field, prop in body_schema["properties"].items():
                        fields[field] = (prop, field in required)
                else:
                    whole_body = (snake(name), name)
            ops.append(
                {
                    "id": op["operationId"],
                    "summary": op.get("summary", ""),
                    "method": method.upper(),
                    "path": path,
                    "path_params": path_params,
                    "query": query,
                    "fields": fields,
                    "whole_body": whole_body,
                    "has_body": body is not None,
                    "text": media != "application/json",
                    "returns": python_type(response) if response else "Any",
                }
            )
    return ops


def method(op: dict, asynchronous: bool) -> str:
    params = ["self"]
    for name in op["path_params"]:
        params.append(f"{name}: {'int' if name == 'number' else 'str'}")
    if op["whole_body"]:
        params.append(f"{op['whole_body'][0]}: {op['whole_body'][1]}")
    # One required field (the text, the query, the goal) comes by position; several come
    # by name, since no order of them reads naturally.
    required = [f for f, (_, req) in op["fields"].items() if req]
    if len(required) == 1:
        params.append(f"{required[0]}: {python_type(op['fields'][required[0]][0])}")
    params.append("*")
    if len(required) > 1:
        for field in required:
            params.append(f"{field}: {python_type(op['fields'][field][0])}")
    optional = [f for f, (_, req) in op["fields"].items() if not req]
    keywords = []
    for field in optional:
        if field not in op["query"]:
            keywords.append((field, op["fields"][field][0]))
    for field, schema in op["query"].items():
        keywords.append((field, schema))
    for field, schema in keywords:
        assert field.isidentifier() and not keyword.iskeyword(field), field
        params.append(f"{field}: {python_type(schema, optional=True)} = None")
    if params[-1] == "*":
        params.pop()
    path = op["path"]
    for name in op["path_params"]:
        path = path.replace("{" + name + "}", "{_segment(" + name + ")}")
    lines = [
        f"    {'async ' if asynchronous else ''}def {op['id']}({', '.join(params)}) -> {op['returns']}:",
        f"        \"\"\"{op['summary'][0].upper() + op['summary'][1:]} (`{op['method']} {op['path']}`).\"\"\"",
    ]
    query_names = list(op["query"])
    if query_names:
        lines.append("        query_ = _present({" + ", ".join(f"{json.dumps(n)}: {self_default(n)}" for n in query_names) + "})")
    else:
        lines.append("        query_ = None")
    if op["whole_body"]:
        lines.append(f"        body_: Any = {op['whole_body'][0]}")
    elif op["has_body"]:
        body_names = [f for f in op["fields"] if f not in op["query"]]
        entries = ", ".join(
            f"{json.dumps(n)}: {self_default(n) if n == 'user_id' else n}" for n in body_names
        )
        lines.append("        body_ = _present({" + entries + "})")
    else:
        lines.append("        body_ = None")
    literal = ("f" if op["path_params"] else "") + json.dumps(path)
    call = f"self._request({json.dumps(op['method'])}, {literal}, query_, body_, text={op['text']})"
    lines.append(f"        return {'await ' if asynchronous else ''}{call}  # type: ignore[no-any-return]")
    return "\n".join(lines) + "\n"


def self_default(name: str) -> str:
    # The client's user stands in for a user left out.
    return f"self._user({name})" if name == "user_id" else name


HEADER = '''"""Generated by clients/python/generate.py from docs/openapi.json: do not edit.

Every type of the document as a TypedDict, and every operation as a method of
`SyncOperations` and `AsyncOperations`, which `Mnemo` and `AsyncMnemo` complete with a
transport.
"""
# ruff: noqa: E501

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Union
from urllib.parse import quote

from typing_extensions import NotRequired, TypedDict


def _present(values: Dict[str, Any]) -> Dict[str, Any]:
    """The values given: a parameter left at None is not sent, so the server's default holds."""
    return {k: v for k, v in values.items() if v is not None}


def _segment(value: object) -> str:
    """A path parameter, percent-encoded."""
    return quote(str(value), safe="")


'''


def render(document: dict) -> str:
    ops = operations(document)
    parts = [HEADER]
    parts.append("\n\n".join(typed_dicts(document["components"]["schemas"])))
    parts.append("\n#: Every operation's id, as the OpenAPI document names it.\n")
    parts.append("OPERATION_IDS = (\n" + "".join(f"    {json.dumps(op['id'])},\n" for op in ops) + ")\n")
    for asynchronous in (False, True):
        cls = "AsyncOperations" if asynchronous else "SyncOperations"
        kind = "asynchronous" if asynchronous else "synchronous"
        parts.append(
            f"\n\nclass {cls}:\n"
            f"    \"\"\"Every operation of the API, {kind}.\"\"\"\n\n"
            "    def _user(self, user_id: Optional[str]) -> Optional[str]:\n"
            "        raise NotImplementedError\n\n"
            f"    {'async ' if asynchronous else ''}def _request(self, method: str, path: str, query: Optional[Dict[str, Any]], body: Any, text: bool = False) -> Any:\n"
            "        raise NotImplementedError\n\n"
        )
        parts.append("\n".join(method(op, asynchronous) for op in ops))
    return "".join(parts)


def main() -> int:
    document = json.loads(DOCUMENT.read_text())
    text = render(document)
    if "--check" in sys.argv[1:]:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET} is not current: run python3 clients/python/generate.py", file=sys.stderr)
            return 1
        print(f"{TARGET.name} is current")
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
