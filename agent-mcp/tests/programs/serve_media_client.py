"""The official Python MCP SDK (PyPI `mcp`) as a client of eugene's server, for media: calls the
skill `draw` (tests/serve/media.rs), which answers with text, a PNG, a WAV, a PDF and a URL, and
checks each content block and that the base64 decodes to the bytes the test gave in hex; then
calls `look`, which asks this client's model about the PNG (sampling), and checks the image the
sampling callback received.

Usage: python serve_media_client.py --stdio PNG_HEX WAV_HEX PDF_HEX

The server is the program that started this one: it speaks MCP on this process's standard input
and output, so this program reports on standard error. Exits non-zero, saying what was wrong, on
any failure; prints "all checks passed" at the end.
"""

import base64
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


async def run(png, wav, pdf):
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        asked = []

        async def sample(context, params):
            asked.append(params)
            return types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text="a single dot"),
                model="python-test-model",
                stop_reason="endTurn",
            )

        async with ClientSession(read, write, sampling_callback=sample) as session:
            await session.initialize()
            result = await session.call_tool("draw", {})
            check(not result.is_error, f"the call succeeds: {result}")
            blocks = result.content
            kinds = [block.type for block in blocks]
            check(kinds == ["text", "image", "audio", "resource", "resource_link", "text"], f"the blocks, in order: {kinds}")
            if len(blocks) == 6:
                text, image, audio, resource, link, last = blocks
                check(text.text == "Q3:", f"the text: {text}")
                check(image.mime_type == "image/png", f"the image's type: {image.mime_type}")
                check(base64.b64decode(image.data, validate=True) == png, "the image's bytes")
                check(audio.mime_type == "audio/wav", f"the audio's type: {audio.mime_type}")
                check(base64.b64decode(audio.data, validate=True) == wav, "the audio's bytes")
                embedded = resource.resource
                check(isinstance(embedded, types.BlobResourceContents), f"a blob: {embedded}")
                check(str(embedded.uri) == "eugene://media/q3%20report.pdf", f"the PDF's uri: {embedded.uri}")
                check(embedded.mime_type == "application/pdf", f"the PDF's type: {embedded.mime_type}")
                check(base64.b64decode(embedded.blob, validate=True) == pdf, "the PDF's bytes")
                check(str(link.uri) == "https://example.com/q3.png", f"the link: {link}")
                check(link.mime_type == "image/png", f"the link's type: {link}")
                check(last.text == "That is all.", f"the last text: {last}")

            result = await session.call_tool("look", {})
            said = "".join(getattr(block, "text", "") for block in result.content)
            check(not result.is_error and said == "the model saw: a single dot", f"look: {result}")
            check(len(asked) == 1, f"one sampling request: {asked}")
            if asked:
                content = asked[0].messages[0].content
                content = content if isinstance(content, list) else [content]
                kinds = [block.type for block in content]
                check(kinds == ["text", "image"], f"the sampling message's blocks: {kinds}")
                if kinds == ["text", "image"]:
                    check(content[0].text == "What is in this picture?", f"the question: {content[0]}")
                    check(content[1].mime_type == "image/png", f"the image's type: {content[1]}")
                    check(base64.b64decode(content[1].data, validate=True) == png, "the sampled image's bytes")
        finish()


def finish():
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        code = 1
    else:
        print("all checks passed", file=sys.stderr)
        code = 0
    sys.stderr.flush()
    # The stdio transport's reader thread blocks until the server closes its end: leave now.
    os._exit(code)


def main():
    if len(sys.argv) != 5 or sys.argv[1] != "--stdio":
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    png, wav, pdf = (bytes.fromhex(arg) for arg in sys.argv[2:])
    anyio.run(run, png, wav, pdf)


if __name__ == "__main__":
    main()
