"""The parts of the clients' method API that need no I/O (issue 17): what each list
method returns, the walk over its pages, and the params of the typed calls.

Every adapter's client (blocking, asyncio, trio; stdio and HTTP) offers the same calls:
``list_tools``, ``list_resources``, ``list_resource_templates``, ``list_prompts`` (every
item, following ``nextCursor``) and ``pages(method)`` (each page as it comes),
``read_resource``, ``get_prompt``, ``complete``, ``call_tool``, ``discover``.

A server whose cursors never end would keep a client paging forever: :class:`Pages`
stops at a cursor it already sent (``RemoteProtocolError``) and after
:data:`MAX_PAGES` pages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_proto import RemoteProtocolError
from mcp_proto import types as t

__all__ = ["LISTS", "MAX_PAGES", "Pages", "completion_params", "prompt_params"]

#: each list method, and the field of its result that holds the items
LISTS: Final = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resource_templates",
    "prompts/list": "prompts",
}
#: the most pages one listing follows
MAX_PAGES: Final = 1000


class Pages:
    """The cursor walk of one listing (PAGE-05, PAGE-06), without I/O: send
    :meth:`params`, give each result to :meth:`took`, until :attr:`done`."""

    def __init__(self, method: str) -> None:
        if method not in LISTS:
            raise ValueError(f"{method!r} is not a list method: one of {', '.join(LISTS)}")
        self.method = method
        self.done = False
        self._cursor: str | None = None
        self._sent: set[str] = set()

    def params(self) -> t.PaginatedRequestParams:
        """The next request's params (the first one has no cursor)."""
        return t.PaginatedRequestParams(cursor=self._cursor)

    def took(self, page: Any) -> list[Any]:
        """The items of ``page``; a ``nextCursor`` already sent, or more than
        :data:`MAX_PAGES` pages, raise :class:`~mcp_proto.RemoteProtocolError`."""
        cursor = page.next_cursor
        if cursor is None:
            self.done = True
        elif cursor in self._sent:
            raise RemoteProtocolError(f"{self.method}: the server sent cursor {cursor!r} again")
        elif len(self._sent) + 1 >= MAX_PAGES:
            raise RemoteProtocolError(f"{self.method}: more than {MAX_PAGES} pages")
        else:
            self._sent.add(cursor)
            self._cursor = cursor
        return list(getattr(page, LISTS[self.method]))


def prompt_params(name: str, arguments: Mapping[str, str] | None) -> t.GetPromptRequestParams:
    return t.GetPromptRequestParams(name=name, arguments=dict(arguments) if arguments else None)


def completion_params(
    ref: t.PromptReference | t.ResourceTemplateReference,
    argument: str,
    value: str,
    context: Mapping[str, str] | None,
) -> t.CompleteRequestParams:
    """``completion/complete`` of ``argument`` (typed so far: ``value``) of a prompt or a
    resource template; ``context`` holds the arguments already chosen."""
    if not isinstance(ref, t.PromptReference | t.ResourceTemplateReference):
        raise TypeError(
            "ref is a mcp_proto.types.PromptReference(name=...) or "
            f"ResourceTemplateReference(uri=...), not {ref!r}"
        )
    return t.CompleteRequestParams(
        ref=ref,
        argument=t.CompleteRequestParamsArgument(name=argument, value=value),
        context=t.CompleteRequestParamsContext(arguments=dict(context)) if context else None,
    )
