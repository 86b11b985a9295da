"""An MCP server on the official Python SDK (PyPI `mcp`), for tests/consume: tools that ask the
user for input (elicitation, during the call and as a multi-round-trip request), a tool that asks
the client's model (sampling), resources, a resource template, prompts, and tools that change
the resource, prompt and tool lists and say so (during a call, or on their own after it). Serves
over stdio, or streamable HTTP with `--http PORT`."""

import asyncio
import sys
from typing import Annotated

from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
from mcp.server.elicitation import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    DeclinedElicitation,
    ElicitationResult,
)
from mcp.types import CreateMessageResult, SamplingMessage, TextContent

# A fixed key seals the multi-round-trip `requestState`, so that a state minted by one run of this
# server is accepted by the next (a deployed server keeps its keys across restarts the same way).
mcp = MCPServer(
    "consume-test-server",
    request_state_security=RequestStateSecurity(keys=["consume-test-server key, 32 bytes!"]),
)


class Party(BaseModel):
    """Who the table is for."""

    name: str = Field(description="the name the table is booked under")
    guests: int = Field(description="how many people", ge=1, le=12)


@mcp.tool()
async def book_table(date: str, ctx: Context) -> str:
    """Books a table; asks the user for the name and the number of guests while the call is open."""
    answer = await ctx.elicit(message=f"Who is the table on {date} for?", schema=Party)
    if isinstance(answer, AcceptedElicitation):
        return f"booked a table on {date} for {answer.data.name}, {answer.data.guests} guests"
    if isinstance(answer, DeclinedElicitation):
        return f"the user declined: no table on {date}"
    return f"the user cancelled: no table on {date}"


@mcp.tool()
async def sign_in(service: str, ctx: Context) -> str:
    """Asks the user to sign in to a service on its own page (URL-mode elicitation)."""
    answer = await ctx.elicit_url(
        message=f"Sign in to {service} to go on.",
        url=f"https://{service}.example/sign-in",
        elicitation_id=f"sign-in-{service}",
    )
    if isinstance(answer, AcceptedUrlElicitation):
        return f"the user agreed to sign in to {service}"
    if isinstance(answer, DeclinedElicitation):
        return f"the user declined to sign in to {service}"
    return f"the user cancelled signing in to {service}"


class Room(BaseModel):
    """The room wanted."""

    beds: int = Field(description="how many beds", ge=1, le=4)


def ask_room(city: str) -> Elicit[Room]:
    return Elicit(f"How many beds in {city}?", Room)


@mcp.tool()
async def book_room(city: str, room: Annotated[ElicitationResult[Room], Resolve(ask_room)]) -> str:
    """Books a hotel room; asks the user how many beds (a multi-round-trip request where the
    protocol has them)."""
    if isinstance(room, AcceptedElicitation):
        return f"booked a room in {city} with {room.data.beds} beds"
    if isinstance(room, DeclinedElicitation):
        return f"the user declined: no room in {city}"
    return f"the user cancelled: no room in {city}"


@mcp.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Summarizes a text with the client's model."""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))],
        max_tokens=50,
        system_prompt="You summarize in five words.",
    )
    content = result.content
    said = content.text if isinstance(content, TextContent) else str(content)
    return f"summary by {result.model}: {said}"


@mcp.tool()
async def flood(count: int, ctx: Context) -> str:
    """Asks the client's model with `count` messages (more than a client need accept)."""
    messages = [
        SamplingMessage(role="user", content=TextContent(type="text", text=f"message {i}")) for i in range(count)
    ]
    result = await ctx.session.create_message(messages=messages, max_tokens=10)
    return f"answered by {result.model}"


def fixed_text(text: str):
    def read() -> str:
        return text

    return read


@mcp.tool()
def add_many(count: int) -> str:
    """Adds `count` resources, `many://0` and on (more than a client need list)."""
    for i in range(count):
        mcp.resource(f"many://{i}", name=f"many-{i}", mime_type="text/plain")(fixed_text(str(i)))
    return f"added {count}"


def ask_brief(text: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Brief: {text}"))
    return Sample([message], max_tokens=30, system_prompt="You write briefs.")


@mcp.tool()
async def brief(text: str, answer: Annotated[CreateMessageResult, Resolve(ask_brief)]) -> str:
    """Writes a brief with the client's model (a multi-round-trip request where the protocol has
    them)."""
    content = answer.content
    said = content.text if isinstance(content, TextContent) else str(content)
    return f"brief by {answer.model}: {said}"


NOTES = {"welcome": "Welcome to the notes."}


@mcp.resource("notes://index", name="index", description="The names of all notes.", mime_type="text/plain")
def index() -> str:
    return "\n".join(sorted(NOTES))


@mcp.resource("notes://note/{name}", name="note", description="One note, by name.", mime_type="text/plain")
def note(name: str) -> str:
    return NOTES[name]


@mcp.prompt(description="Asks for a review of code in a language.")
def review(code: str, language: str = "python") -> str:
    return f"Please review this {language} code:\n{code}"


@mcp.resource("notes://big", name="big", description="A note too long to read whole.", mime_type="text/plain")
def big() -> str:
    return "é" * 50_000 + "THE END"


@mcp.tool()
async def add_note(name: str, text: str, ctx: Context) -> str:
    """Adds a note: a new resource, a new prompt about it and a new tool that reads it; tells the
    client the three lists changed."""
    NOTES[name] = text

    def about() -> str:
        return f"Tell me about the note {name}: {text}"

    def read() -> str:
        return f"the note {name} says: {text}"

    mcp.resource(f"notes://fixed/{name}", name=f"fixed-{name}", mime_type="text/plain")(lambda: text)
    mcp.prompt(name=f"about_{name}", description=f"About the note {name}.")(about)
    mcp.tool(name=f"read_{name}", description=f"Reads the note {name}.")(read)
    await ctx.session.send_resource_list_changed()
    await ctx.session.send_prompt_list_changed()
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


@mcp.tool()
async def forget_note(name: str, ctx: Context) -> str:
    """Removes the tool that reads a note; tells the client the tool list changed."""
    mcp.remove_tool(f"read_{name}")
    await ctx.session.send_tool_list_changed()
    return f"forgot {name}"


# The changes made after a call answered, kept so that they are not collected before they ran.
LATER = set()


@mcp.tool()
async def add_note_later(name: str, text: str, ctx: Context) -> str:
    """Answers at once; a moment later, on its own, adds a tool that reads a new note and tells
    the client the tool list changed (a change no call of the client's is waiting on)."""
    session = ctx.session

    async def later() -> None:
        await asyncio.sleep(0.3)
        NOTES[name] = text
        mcp.tool(name=f"read_{name}", description=f"Reads the note {name}.")(lambda: f"the note {name} says: {text}")
        await session.send_tool_list_changed()

    task = asyncio.get_running_loop().create_task(later())
    LATER.add(task)
    task.add_done_callback(LATER.discard)
    return f"adding {name} soon"


if __name__ == "__main__":
    # `consume_server.py` serves on stdio; `consume_server.py --http PORT` over streamable HTTP at
    # http://127.0.0.1:PORT/mcp.
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        print(f"consume_server.py: serving on port {sys.argv[2]}", file=sys.stderr)
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        print("consume_server.py: serving on stdio", file=sys.stderr)
        mcp.run("stdio")
