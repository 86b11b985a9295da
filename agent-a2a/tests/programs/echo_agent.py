"""A tiny A2A agent on the official Python SDK (a2a-sdk): it answers each message with
`echo: <text>`, except `hang` (never answers), `fail` (the task fails), `ask` (the task waits
for input: the next message on the task is the answer, and it completes with `you chose: <text>`)
and `picture` (the answer is a 3×2 PNG made here, as a file part with its bytes, after a text
part that gives the same bytes in hex).

Usage: python echo_agent.py <port>
"""

import asyncio
import struct
import sys
import zlib

import uvicorn
from starlette.applications import Starlette

from a2a.helpers.proto_helpers import get_message_text, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TaskState


def png(width, height):
    """A `width`×`height` RGB PNG, made by hand."""

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    rows = b"".join(
        b"\x00" + b"".join(bytes([x * 50, y * 90, 200]) for x in range(width)) for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


class Echo(AgentExecutor):
    async def execute(self, context, event_queue):
        text = get_message_text(context.message)
        task = context.current_task or new_task_from_user_message(context.message)
        asked = context.current_task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        # A continued task's stream starts with a change, or (an answer that starts with
        # `again`) with the task as it was, still waiting: clients must take both.
        if context.current_task is None or text.startswith("again"):
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if asked:
            # The answer to our question continues the same task.
            await updater.add_artifact([new_text_part(f"you chose: {text}")], name="answer")
            await updater.complete()
            return
        if text == "hang":
            await asyncio.sleep(3600)
        if text == "fail":
            await updater.failed(updater.new_agent_message([new_text_part("it broke")]))
            return
        if text == "picture":
            image = png(3, 2)
            parts = [
                new_text_part(f"a picture, hex={image.hex()}"),
                Part(raw=image, media_type="image/png", filename="picture.png"),
            ]
            await updater.add_artifact(parts, name="answer")
            await updater.complete()
            return
        if text == "ask":
            await updater.requires_input(updater.new_agent_message([new_text_part("which one?")]))
            return
        await updater.add_artifact([new_text_part(f"echo: {text}")], name="answer")
        await updater.complete()

    async def cancel(self, context, event_queue):
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def main():
    port = int(sys.argv[1])
    url = f"http://127.0.0.1:{port}/"
    card = AgentCard(
        name="Python Echo",
        description="Repeats what it is told.",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="Echo the text.", tags=["echo"])],
    )
    handler = DefaultRequestHandler(agent_executor=Echo(), task_store=InMemoryTaskStore(), agent_card=card)
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/")
    uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=port, log_level="warning")


main()
