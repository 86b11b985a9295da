"""The official Python MCP SDK (PyPI `mcp`) as a client of eugene's server, for what it serves
besides tools: elicitation and sampling asked by skills, Agent Skills as resources, prompts.

Usage: python serve_features_client.py --stdio | --stdio-without
       python serve_features_client.py --http URL TOKEN

With --stdio (a client with an elicitation and a sampling callback) or --stdio-without (a
client without them) the server is the program that started this one: it speaks MCP on this
process's standard input and output (the SDK's stdio transport, used by a client), so this
program reports on standard error. With --http it connects to URL with the bearer token, as
one client with the callbacks and then one without.

The server (tests/serve/ in agent-mcp) serves the skills `ask_name` (elicits a name),
`ask_model` (samples the client's model), `ask_forever` (elicits, and the callback never
answers: the server's client-request timeout is short), the Agent Skill `greet` (a folder with
`references/names.md` and `assets/logo.bin`) and the prompt `review`.

Exits non-zero, saying what was wrong, on any failure; prints "all checks passed" at the end.
"""

import os
import sys

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

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
        self.withdrawn = anyio.Event()

    async def elicit(self, context, params):
        self.seen.append(params)
        if self.mode == "forever":
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                # notifications/cancelled from the server interrupts this handler.
                self.withdrawn.set()
                raise
        if self.mode == "accept":
            return types.ElicitResult(action="accept", content={"name": "Ada"})
        return types.ElicitResult(action=self.mode)


class Model:
    """The client's model behind the sampling callback: one fixed answer, and what it was asked."""

    def __init__(self):
        self.asked = []

    async def sample(self, context, params):
        self.asked.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="blue, says python"),
            model="python-test-model",
            stop_reason="endTurn",
        )


async def with_callbacks(read, write):
    person, model = Person(), Model()
    async with ClientSession(
        read, write, elicitation_callback=person.elicit, sampling_callback=model.sample
    ) as session:
        init = await session.initialize()
        caps = init.capabilities
        check(caps.tools is not None, "tools advertised")
        check(caps.resources is not None, f"resources advertised: {caps}")
        check(caps.prompts is not None, f"prompts advertised: {caps}")

        # Elicitation: accept, decline, cancel each reach the skill.
        result = await session.call_tool("ask_name", {})
        check(not result.is_error and text_of(result) == "hello, Ada", f"accepted: {result}")
        check(len(person.seen) == 1, f"one elicitation: {person.seen}")
        if person.seen:
            params = person.seen[0]
            check(params.message == "Who are you?", f"the message: {params}")
            schema = params.requested_schema
            check(schema["properties"]["name"]["type"] == "string", f"the schema: {schema}")
            check(schema.get("required") == ["name"], f"required: {schema}")
        person.mode = "decline"
        result = await session.call_tool("ask_name", {})
        check(text_of(result) == "you declined to say", f"declined: {result}")
        person.mode = "cancel"
        result = await session.call_tool("ask_name", {})
        check(text_of(result) == "you dismissed the question", f"cancelled: {result}")

        # Sampling: the client's model answers the skill.
        result = await session.call_tool("ask_model", {"question": "What colour is the sky?"})
        check(
            not result.is_error
            and text_of(result) == "python-test-model said: blue, says python (endTurn)",
            f"sampled: {result}",
        )
        check(len(model.asked) == 1, f"one sampling request: {model.asked}")
        if model.asked:
            asked = model.asked[0]
            check(asked.system_prompt == "Answer in three words.", f"system prompt: {asked}")
            check(asked.max_tokens == 50, f"max tokens: {asked}")
            message = asked.messages[0]
            check(
                message.role == "user" and message.content.text == "What colour is the sky?",
                f"the question: {asked}",
            )

        # An answer that never comes: the skill times out and the request is withdrawn.
        person.mode = "forever"
        result = await session.call_tool("ask_forever", {})
        check(result.is_error and "timed out" in text_of(result), f"timed out: {result}")
        with anyio.move_on_after(10):
            await person.withdrawn.wait()
        check(person.withdrawn.is_set(), "the server withdrew the elicitation (notifications/cancelled)")

        # Agent Skills as resources.
        listed = {r.uri: r for r in (await session.list_resources()).resources}
        check(
            set(listed) == {
                "skill://greet/SKILL.md",
                "skill://greet/assets/logo.bin",
                "skill://greet/references/names.md",
            },
            f"resources: {sorted(listed)}",
        )
        skill_md = listed.get("skill://greet/SKILL.md")
        check(skill_md is not None and skill_md.mime_type == "text/markdown", f"SKILL.md: {skill_md}")
        check(skill_md is not None and skill_md.description == "Greet people by name.", f"{skill_md}")
        read = await session.read_resource("skill://greet/SKILL.md")
        text = read.contents[0].text
        check(text.startswith('---\nname: "greet"\ndescription: "Greet people by name."\n---\n'), text)
        check(text.endswith("Say hello, then the name.\n"), text)
        read = await session.read_resource("skill://greet/references/names.md")
        check(read.contents[0].text == "Ada\nGrace\n", f"names.md: {read}")
        read = await session.read_resource("skill://greet/assets/logo.bin")
        check(getattr(read.contents[0], "blob", None) == "AAH/gA==", f"logo.bin as base64: {read}")
        try:
            await session.read_resource("skill://greet/../../etc/passwd")
            check(False, "an unlisted URI is an error")
        except MCPError as e:
            check(e.code == -32002 and "skill://greet/../../etc/passwd" in e.message, f"{e.code} {e.message}")

        # Prompts.
        prompts = {p.name: p for p in (await session.list_prompts()).prompts}
        check(list(prompts) == ["review"], f"prompts: {prompts}")
        review = prompts.get("review")
        if review:
            args = [(a.name, a.required) for a in review.arguments]
            check(args == [("path", True), ("focus", False)], f"arguments: {args}")
        got = await session.get_prompt("review", {"path": "src/main.rs", "focus": "errors"})
        message = got.messages[0]
        check(
            message.role == "user"
            and message.content.text == "Review src/main.rs; look at errors.",
            f"rendered: {got}",
        )
        for arguments, needle in [({}, "`path`"), ({"path": "a", "colour": "red"}, "`colour`")]:
            try:
                await session.get_prompt("review", arguments)
                check(False, f"prompt arguments {arguments} are refused")
            except MCPError as e:
                check(e.code == -32602 and needle in e.message, f"{arguments}: {e.code} {e.message}")


async def without_callbacks(read, write):
    async with ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("ask_name", {})
        check(
            result.is_error and "does not support elicitation" in text_of(result),
            f"no elicitation capability: {result}",
        )
        result = await session.call_tool("ask_model", {"question": "?"})
        check(
            result.is_error and "does not support sampling" in text_of(result),
            f"no sampling capability: {result}",
        )


async def over_stdio(which):
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        # One connection, so one client: with the callbacks or without.
        await which(read, write)
        # The transport's reader thread blocks on standard input until the server closes it,
        # which it does only once this process has gone: report now.
        finish(hard=True)


def finish(hard=False):
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        code = 1
    else:
        print("all checks passed", file=sys.stderr)
        code = 0
    sys.stderr.flush()
    if hard:
        os._exit(code)
    sys.exit(code)


async def over_http(url, token, which):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with streamable_http_client(url, http_client=client) as (read, write, *_):
        await which(read, write)


def main():
    if sys.argv[1:2] == ["--stdio"]:
        anyio.run(over_stdio, with_callbacks)
    elif sys.argv[1:2] == ["--stdio-without"]:
        anyio.run(over_stdio, without_callbacks)
    elif sys.argv[1:2] == ["--http"] and len(sys.argv) == 4:
        url, token = sys.argv[2], sys.argv[3]
        anyio.run(over_http, url, token, with_callbacks)
        anyio.run(over_http, url, token, without_callbacks)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    finish()


if __name__ == "__main__":
    main()
