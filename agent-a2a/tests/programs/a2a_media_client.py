"""The official A2A Python SDK (a2a-sdk) as a client of an agent-a2a server, with files.

Usage: python a2a_media_client.py <base url> <token> send | receive

`send`: a message with a text part, a 3×2 PNG made here (a file part with its bytes) and a JPEG
at a public URL (a file part with a `url`); prints the task's state and text, and the PNG's
bytes in hex, for the Rust test to compare with what reached its model.

`receive`: a text message; prints the task's state and each part of its artifacts (text, or a
file's media type, name and bytes in hex), for the Rust test to compare with the files its run
produced.
"""

import asyncio
import json
import struct
import sys
import zlib

import httpx
from google.protobuf.json_format import MessageToDict

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest


def png(width, height):
    """A `width`×`height` RGB PNG, made by hand."""

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    rows = b"".join(
        b"\x00" + b"".join(bytes([x * 70, y * 120, 30]) for x in range(width)) for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def describe(part):
    if part.HasField("raw"):
        return {"raw": part.raw.hex(), "media_type": part.media_type, "filename": part.filename}
    if part.HasField("url"):
        return {"url": part.url, "media_type": part.media_type}
    return {"text": part.text}


async def receive(client, result):
    message = Message(message_id="m-draw", role=Role.ROLE_USER, parts=[Part(text="Draw the chart.")])
    events = [e async for e in client.send_message(SendMessageRequest(message=message))]
    task = events[-1].task
    result["state"] = MessageToDict(task.status).get("state")
    result["parts"] = [describe(p) for a in task.artifacts for p in a.parts]


async def main():
    base, token, scenario = sys.argv[1], sys.argv[2], sys.argv[3]
    image = png(3, 2)
    result = {"hex": image.hex()}
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        if scenario == "receive":
            try:
                await receive(client, result)
            except Exception as error:  # the test reads what failed
                result["error"] = f"{type(error).__name__}: {error}"
            print(json.dumps(result))
            return
        message = Message(
            message_id="m-picture",
            role=Role.ROLE_USER,
            parts=[
                Part(text="What is in this picture?"),
                Part(raw=image, media_type="image/png", filename="chart.png"),
                Part(url="https://example.com/photo.jpg", media_type="image/jpeg", filename="photo.jpg"),
            ],
        )
        try:
            events = [e async for e in client.send_message(SendMessageRequest(message=message))]
            task = events[-1].task
            result["state"] = MessageToDict(task.status).get("state")
            result["text"] = "\n".join("".join(p.text for p in a.parts) for a in task.artifacts)
        except Exception as error:  # the test reads what failed
            result["error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(result))


asyncio.run(main())
