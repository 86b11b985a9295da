"""The official Python MCP SDK (PyPI `mcp`) as a client of eugene's server, for URL-mode
elicitation: a skill sends the client's user to a URL and tells the client when it is done.

Usage: python serve_url_client.py --stdio | --stdio-without

The server is the program that started this one: it speaks MCP on this process's standard
input and output (the SDK's stdio transport, used by a client), so this program reports on
standard error. With --stdio the client has an elicitation callback (so it declares form and URL
elicitation); with --stdio-without it has none.

The server (tests/serve/url_elicitation.rs in agent-mcp) serves the skill `sign_in`, which asks
the client's user to visit the URL it is given (elicitation id `sign-in-1`) and, once they
accept, sends `notifications/elicitation/complete` for it; it answers "signed in", "declined"
or "dismissed".

Exits non-zero, saying what was wrong, on any failure; prints "all checks passed" at the end.
"""

import os
import sys

import anyio
import mcp_types as types
from mcp import ClientSession

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def text_of(result):
    return "".join(getattr(block, "text", "") for block in result.content)


class Person:
    """The user behind the elicitation callback: answers as `mode` says, and records what it saw."""

    def __init__(self):
        self.mode = "accept"
        self.seen = []
        self.completed = []
        self.completion = anyio.Event()

    async def elicit(self, context, params):
        self.seen.append(params)
        return types.ElicitResult(action=self.mode)

    async def on_message(self, message):
        if isinstance(message, types.ElicitCompleteNotification):
            self.completed.append(message.params.elicitation_id)
            self.completion.set()


LOGIN = "https://login.example.com/authorize?state=abc123"


async def with_callback(read, write):
    person = Person()
    async with ClientSession(
        read, write, elicitation_callback=person.elicit, message_handler=person.on_message
    ) as session:
        await session.initialize()

        result = await session.call_tool("sign_in", {"url": LOGIN})
        check(not result.is_error and text_of(result) == "signed in", f"accepted: {result}")
        check(len(person.seen) == 1, f"one elicitation: {person.seen}")
        if person.seen:
            params = person.seen[0]
            check(params.mode == "url", f"URL mode: {params}")
            check(params.url == LOGIN, f"the URL: {params}")
            check(params.elicitation_id == "sign-in-1", f"the id: {params}")
            check(params.message == "Sign in to continue.", f"the message: {params}")
        with anyio.move_on_after(10):
            await person.completion.wait()
        check(person.completed == ["sign-in-1"], f"notifications/elicitation/complete: {person.completed}")

        person.mode = "decline"
        result = await session.call_tool("sign_in", {"url": LOGIN})
        check(text_of(result) == "declined", f"declined: {result}")
        person.mode = "cancel"
        result = await session.call_tool("sign_in", {"url": LOGIN})
        check(text_of(result) == "dismissed", f"dismissed: {result}")
        check(person.completed == ["sign-in-1"], f"no completion without an accept: {person.completed}")

        # URLs a person must not be sent to: refused by the server, the client never asked.
        asked = len(person.seen)
        for url, needle in [
            ("javascript:alert(1)", "http or https"),
            ("https://admin:hunter2@login.example.com/", "credentials"),
            ("not a url", "not a valid URL"),
            ("https://example.com/" + "a" * 9000, "more than the"),
        ]:
            result = await session.call_tool("sign_in", {"url": url})
            check(result.is_error and needle in text_of(result), f"{url[:40]}: {result}")
        check(len(person.seen) == asked, f"the client was not asked: {person.seen[asked:]}")


async def without_callback(read, write):
    async with ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("sign_in", {"url": LOGIN})
        check(
            result.is_error and "does not support URL-mode elicitation" in text_of(result),
            f"no URL elicitation capability: {result}",
        )


async def over_stdio(which):
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await which(read, write)
        # The transport's reader thread blocks on standard input until the server closes it,
        # which it does only once this process has gone: report now.
        finish()


def finish():
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        code = 1
    else:
        print("all checks passed", file=sys.stderr)
        code = 0
    sys.stderr.flush()
    os._exit(code)


def main():
    if sys.argv[1:2] == ["--stdio"]:
        anyio.run(over_stdio, with_callback)
    elif sys.argv[1:2] == ["--stdio-without"]:
        anyio.run(over_stdio, without_callback)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
