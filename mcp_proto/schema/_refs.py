"""Where the subschemas of a document are, and ``$ref`` resolution within it (SCHEMA-06/08).

``Index`` walks a schema document once, recording each subschema's base URI and location,
every resource (``$id``) and every anchor (``$anchor``, ``$dynamicAnchor``, draft-07
``$id: "#name"``). A reference resolves against that record only: a URI that is not one of the
document's resources raises ``UnresolvableRef`` (the schema is rejected, never treated as
permissive), unless the caller passed a ``resolver``, which is then asked for the document.
A document without an absolute ``$id`` gets a placeholder base URI under the reserved
``.invalid`` domain, so relative references can be joined; nothing is ever fetched from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from ._dialects import Dialect
from ._errors import InvalidSchema, SchemaError, UnresolvableRef
from ._limits import Limits, check_schema_size
from ._values import escape

__all__ = ["DEFAULT_BASE", "Index", "RemoteResolver"]

#: The base URI of a document without an absolute ``$id``.
DEFAULT_BASE = "https://schema.invalid/root.json"

# RFC 6901 array-index: "0", or ASCII digits without a leading zero.
_INDEX = re.compile(r"0|[1-9][0-9]{0,17}", re.ASCII)

#: ``resolver(uri)`` returns the schema document at an absolute URI (no fragment) or raises.
RemoteResolver = Callable[[str], Any]


def join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base`` (fragment-only references keep the base's URI)."""
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    return urljoin(base, ref)


class Index:
    """The resources, anchors, base URIs and locations of the subschemas of a document."""

    def __init__(self, dialect: Dialect, limits: Limits, resolver: RemoteResolver | None):
        self.dialect = dialect
        self.limits = limits
        self.resolver = resolver
        self.resources: dict[str, Any] = {}
        self.anchors: dict[str, Any] = {}
        self.base_of: dict[int, str] = {}
        self.loc_of: dict[int, str] = {}
        self.documents: list[Any] = []  # keeps every document alive, so ids stay unique
        # resource URI -> dynamic anchor name -> subschema ("" for $recursiveAnchor: true)
        self.dynamic: dict[str, dict[str, Any]] = {}
        self.has_dynamic_refs = False

    def add_document(self, schema: Any, uri: str, label: str) -> None:
        """Record a document fetched from (or rooted at) ``uri``; ``label`` prefixes locations."""
        self.documents.append(schema)
        self.resources[uri] = schema
        self._walk(schema, uri, label)

    def _walk(self, schema: Any, base: str, loc: str) -> None:
        if not isinstance(schema, Mapping):
            return
        dialect = self.dialect
        sid = schema.get("$id")
        if isinstance(sid, str) and not (dialect.ref_overrides and "$ref" in schema):
            if dialect.ref_overrides and sid.startswith("#"):
                self.anchors[urldefrag(base)[0] + sid] = schema
            else:
                base = urldefrag(join(base, sid))[0]
                self.resources.setdefault(base, schema)
        for key in ("$anchor", "$dynamicAnchor"):
            anchor = schema.get(key)
            if isinstance(anchor, str) and not dialect.ref_overrides:
                self.anchors[urldefrag(base)[0] + "#" + anchor] = schema
                if key == "$dynamicAnchor":
                    self.dynamic.setdefault(base, {})[anchor] = schema
        if schema.get("$recursiveAnchor") is True:
            self.dynamic.setdefault(base, {})[""] = schema
        if "$dynamicRef" in schema or "$recursiveRef" in schema:
            self.has_dynamic_refs = True
        self.base_of[id(schema)] = base
        self.loc_of[id(schema)] = loc
        for key, value in schema.items():
            here = f"{loc}/{escape(key)}"
            if key in dialect.single:
                if isinstance(value, list) and key == "items":
                    for i, sub in enumerate(value):
                        self._walk(sub, base, f"{here}/{i}")
                else:
                    self._walk(value, base, here)
            elif key in dialect.lists and isinstance(value, list):
                for i, sub in enumerate(value):
                    self._walk(sub, base, f"{here}/{i}")
            elif key in dialect.maps and isinstance(value, Mapping):
                for name, sub in value.items():
                    self._walk(sub, base, f"{here}/{escape(name)}")

    def resolve(self, ref: str, base: str, schema_path: str, keyword: str) -> tuple[Any, str, str]:
        """The target of ``ref`` seen from ``base``: (subschema, its base URI, its location)."""
        uri, fragment = urldefrag(join(base, ref))
        doc = self.resources.get(uri)
        if doc is None:
            doc = self._fetch(ref, uri, schema_path, keyword)
        if fragment.startswith("/") or fragment == "":
            target = doc
            for raw in fragment.split("/")[1:]:
                token = unquote(raw).replace("~1", "/").replace("~0", "~")
                if isinstance(target, Mapping) and token in target:
                    target = target[token]
                elif isinstance(target, list) and _INDEX.fullmatch(token):
                    if int(token) >= len(target):
                        raise UnresolvableRef(
                            ref,
                            f"the array at that pointer has no item {token}",
                            schema_path=schema_path,
                            keyword=keyword,
                        )
                    target = target[int(token)]
                else:
                    raise UnresolvableRef(
                        ref,
                        "the document has no value at that pointer",
                        schema_path=schema_path,
                        keyword=keyword,
                    )
        else:
            target = self.anchors.get(uri + "#" + unquote(fragment))
            if target is None:
                raise UnresolvableRef(
                    ref,
                    f"the document has no anchor {fragment!r}",
                    schema_path=schema_path,
                    keyword=keyword,
                )
        if not isinstance(target, (Mapping, bool)):
            raise UnresolvableRef(
                ref, "the target is not a schema", schema_path=schema_path, keyword=keyword
            )
        root_loc = self.loc_of.get(id(doc), "")
        loc = self.loc_of.get(id(target), root_loc + fragment)
        return target, self.base_of.get(id(target), uri), loc

    def _fetch(self, ref: str, uri: str, schema_path: str, keyword: str) -> Any:
        if self.resolver is None:
            raise UnresolvableRef(
                ref,
                "it is not in this schema document, and references that need the network or "
                "the file system are never followed (no resolver was given)",
                schema_path=schema_path,
                keyword=keyword,
            )
        try:
            doc = self.resolver(uri)
        except SchemaError:
            raise
        except Exception as e:
            raise UnresolvableRef(
                ref, f"the resolver refused it ({e})", schema_path=schema_path, keyword=keyword
            ) from e
        if not isinstance(doc, (Mapping, bool)):
            raise InvalidSchema(
                f"the resolver returned a {type(doc).__name__} for {uri!r}",
                schema_path=schema_path,
                keyword=keyword,
            )
        check_schema_size(doc, self.limits)
        self.add_document(doc, uri, uri + "#")
        return doc
