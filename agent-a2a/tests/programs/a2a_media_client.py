"""The official A2A Python SDK (a2a-sdk) as a client of an agent-a2a server, sending files: a
message with a text part, a 3×2 PNG made here (a file part with its bytes) and a JPEG at a
public URL (a file part with a `url`).

Usage: python a2a_media_client.py <base url> <token>

Prints one JSON object: the task's state and text, and the PNG's bytes in hex, for the Rust
test to compare with what reached its model.
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


async def main():
    base, token = sys.argv[1], sys.argv[2]
    image = png(3, 2)
    result = {"hex": image.hex()}
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
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
