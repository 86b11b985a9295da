"""An MCP server on the official Python SDK (PyPI `mcp`), for tests/consume/media.rs: tools whose
results carry an image, audio, an embedded PDF, an embedded zip, an SVG, base64 that is not base64, a large image; a tool
that asks the client's model about an image (sampling); a resource that is a PNG; and prompts
with an image (one valid, one not base64). Each PNG is
made here, with zlib and struct, and its bytes are also given in hex in a text block, so that the
test compares what reached its model with what this server made. Serves over stdio."""

import base64
import io
import struct
import sys
import zipfile
import zlib

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    SamplingMessage,
    TextContent,
)

mcp = MCPServer("media-test-server")


def png(width: int, height: int) -> bytes:
    """A `width`×`height` RGB PNG, a gradient, made by hand."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    rows = b"".join(
        b"\x00" + b"".join(bytes([(x * 40) % 256, (y * 60) % 256, 128]) for x in range(width)) for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def wav() -> bytes:
    """A tenth of a second of silence, 8 kHz mono 8-bit WAV."""
    samples = b"\x80" * 800
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@mcp.tool()
def chart() -> list:
    """Draws a 3×2 chart: a text block, the PNG, a text block with the PNG's hex."""
    image = png(3, 2)
    return [
        TextContent(type="text", text="Sales by month:"),
        ImageContent(type="image", data=b64(image), mimeType="image/png"),
        TextContent(type="text", text=f"hex={image.hex()}"),
    ]


@mcp.tool()
def recording() -> list:
    """A short WAV, as audio content."""
    return [AudioContent(type="audio", data=b64(wav()), mimeType="audio/wav")]


@mcp.tool()
def invoice() -> list:
    """A PDF, as an embedded resource with a blob."""
    resource = BlobResourceContents(uri="file:///invoices/42.pdf", mimeType="application/pdf", blob=b64(PDF))
    return [TextContent(type="text", text="The invoice:"), EmbeddedResource(type="resource", resource=resource)]


@mcp.tool()
def archive() -> list:
    """A zip (no model takes one), as an embedded resource with a blob."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        zipped.writestr("a.txt", "hello")
    resource = BlobResourceContents(
        uri="file:///a.zip", mimeType="application/zip", blob=b64(buffer.getvalue())
    )
    return [TextContent(type="text", text="The archive:"), EmbeddedResource(type="resource", resource=resource)]


@mcp.tool()
def sketch() -> list:
    """An SVG (no model takes one) beside a PNG."""
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'
    return [
        ImageContent(type="image", data=b64(svg), mimeType="image/svg+xml"),
        ImageContent(type="image", data=b64(png(1, 1)), mimeType="image/png"),
    ]


@mcp.tool()
def broken() -> list:
    """An image whose data is not base64."""
    return [TextContent(type="text", text="before"), ImageContent(type="image", data="not base64!!", mimeType="image/png")]


@mcp.tool()
def lying() -> list:
    """A PDF called a PNG."""
    return [ImageContent(type="image", data=b64(PDF), mimeType="image/png")]


@mcp.tool()
def poster() -> list:
    """A 200×200 PNG (more bytes than a small limit allows)."""
    return [ImageContent(type="image", data=b64(png(200, 200)), mimeType="image/png")]


@mcp.tool()
async def describe(ctx: Context) -> str:
    """Asks the client's model what a 4×4 PNG shows (sampling with an image); says its hex too."""
    image = png(4, 4)
    result = await ctx.session.create_message(
        messages=[
            SamplingMessage(
                role="user",
                content=[
                    TextContent(type="text", text="What is in this picture?"),
                    ImageContent(type="image", data=b64(image), mimeType="image/png"),
                ],
            )
        ],
        max_tokens=20,
    )
    content = result.content
    said = content.text if isinstance(content, TextContent) else str(content)
    return f"the model says: {said}; hex={image.hex()}"


@mcp.prompt(description="Asks about a 2×2 PNG, given in hex too.")
def picture_question() -> list:
    image = png(2, 2)
    return [
        UserMessage(f"What is in this picture? hex={image.hex()}"),
        UserMessage(ImageContent(type="image", data=b64(image), mimeType="image/png")),
    ]


@mcp.prompt(description="An image whose data is not base64.")
def broken_picture() -> list:
    return [UserMessage(ImageContent(type="image", data="not base64!!", mimeType="image/png"))]


@mcp.resource("media://logo.png", name="logo", description="A 5×5 PNG.", mime_type="image/png")
def logo() -> bytes:
    return png(5, 5)


@mcp.resource("media://logo.hex", name="logo-hex", description="The logo's bytes, in hex.", mime_type="text/plain")
def logo_hex() -> str:
    return png(5, 5).hex()


if __name__ == "__main__":
    print("media_server.py: serving on stdio", file=sys.stderr)
    mcp.run("stdio")
