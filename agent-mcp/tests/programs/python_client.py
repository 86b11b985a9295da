"""The official Python MCP SDK (PyPI `mcp`) as a client of eugene's MCP server.

Usage: python python_client.py PATH_TO_MCP_SERVER
       python python_client.py --typed URL TOKEN

With a path: starts examples/mcp_server over stdio on a temporary workspace, lists its tools and
calls `read_file` inside and outside the workspace. Then starts it over HTTP on 127.0.0.1 and
checks that a request without the bearer token it printed is refused (401), a request from a
foreign web origin is refused (403), and the SDK sending the token is served.

With --typed: connects over HTTP to the server python_client.rs started with typed skills
(`forecast` returns a struct, `names` a list, `count` a number, `parse` a recursive enum, `touch`
nothing) and checks their `outputSchema` (non-object roots wrapped as {"result": ...}) and the
`structuredContent` of their results, which the SDK itself validates against the schema.

Exits non-zero, saying what was wrong, on any failure.
"""

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared._httpx_utils import create_mcp_http_client

try:  # mcp 2.x (and late 1.x): headers go on an HTTP client of our own
    from mcp.client.streamable_http import streamable_http_client

    def open_http(url, headers):
        return streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
except ImportError:  # mcp 1.x
    from mcp.client.streamable_http import streamablehttp_client

    def open_http(url, headers):
        return streamablehttp_client(url, headers=headers)

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def wire(model):
    """The model as it is on the wire (camelCase), for mcp 1.x and 2.x alike."""
    return model.model_dump(by_alias=True, exclude_none=True)


def text_of(result):
    return "".join(block.get("text", "") for block in result.get("content", []))


async def run(server):
    with tempfile.TemporaryDirectory() as root:
        workspace = os.path.join(root, "workspace")
        os.mkdir(workspace)
        with open(os.path.join(workspace, "hello.txt"), "w") as f:
            f.write("hello from the workspace\nsecond line\n")
        with open(os.path.join(root, "outside.txt"), "w") as f:
            f.write("a secret outside the workspace\n")

        params = StdioServerParameters(command=server, args=[workspace])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = wire(await session.initialize())
                check(init["serverInfo"]["name"] == "eugene-std-tools", f"server name: {init['serverInfo']}")
                check(init["capabilities"].get("tools", {}).get("listChanged") is True, "tools.listChanged advertised")

                tools = {t["name"]: t for t in (wire(t) for t in (await session.list_tools()).tools)}
                for name in ["read_file", "write_file", "list_dir", "search_files", "run_shell", "tool_search"]:
                    check(name in tools, f"`{name}` is listed (got {sorted(tools)})")
                check("delete_file" not in tools, "deferred `delete_file` is not listed before tool_search")

                read_file = tools.get("read_file", {})
                check(read_file.get("inputSchema", {}).get("required") == ["path"], f"read_file schema: {read_file.get('inputSchema')}")
                check(read_file.get("annotations", {}).get("readOnlyHint") is True, "read_file is readOnlyHint")
                check(read_file.get("annotations", {}).get("destructiveHint") is False, "read_file is not destructive")
                check(tools.get("run_shell", {}).get("annotations", {}).get("destructiveHint") is True, "run_shell is destructiveHint")

                result = wire(await session.call_tool("read_file", {"path": "hello.txt"}))
                check(result.get("isError") is not True, f"read_file inside the workspace succeeds: {result}")
                check("hello from the workspace" in text_of(result), f"read_file returns the file: {text_of(result)!r}")

                for path in ["../outside.txt", "/etc/passwd", os.path.join(root, "outside.txt")]:
                    result = wire(await session.call_tool("read_file", {"path": path}))
                    check(result.get("isError") is True, f"read_file {path} is an error result: {result}")
                    check("secret" not in text_of(result) and "root:" not in text_of(result), f"nothing of {path} leaks")
                    check("refused for safety" in text_of(result), f"the refusal says why: {text_of(result)!r}")

                result = wire(await session.call_tool("no_such_tool", {}))
                check(result.get("isError") is True, f"an unknown tool is an error result: {result}")


def start_http_server(server, workspace):
    """Starts `server --http 127.0.0.1:0` and reads the URL and token it prints on stderr."""
    process = subprocess.Popen(
        [server, workspace, "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "EUGENE_MCP_TOKEN"},
    )
    found = {}
    done = threading.Event()

    def read():
        for line in process.stderr:
            if m := re.search(r"at (http://\S+/mcp)$", line.strip()):
                found["url"] = m.group(1)
            if m := re.search(r"bearer token .*: (\S+)$", line.strip()):
                found["token"] = m.group(1)
            if len(found) == 2:
                done.set()
        done.set()

    threading.Thread(target=read, daemon=True).start()
    done.wait(60)
    return process, found.get("url"), found.get("token")


def raw_initialize(url, headers):
    """POSTs an initialize by hand; returns (status, headers)."""
    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}},
    }).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **headers,
    })
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers


async def run_http(server):
    with tempfile.TemporaryDirectory() as workspace:
        with open(os.path.join(workspace, "hello.txt"), "w") as f:
            f.write("hello over http\n")
        process, url, token = start_http_server(server, workspace)
        try:
            check(url is not None and token is not None, f"the server printed its URL and token ({url}, {token})")
            if url is None or token is None:
                return
            status, headers = raw_initialize(url, {})
            check(status == 401, f"no token: 401 (got {status})")
            check((headers.get("WWW-Authenticate") or "").startswith("Bearer"), f"a Bearer challenge: {dict(headers)}")
            status, _ = raw_initialize(url, {"Authorization": "Bearer wrong-token-0123456789"})
            check(status == 401, f"a wrong token: 401 (got {status})")
            status, _ = raw_initialize(url, {"Authorization": f"Bearer {token}", "Origin": "http://evil.example"})
            check(status == 403, f"a foreign origin: 403 (got {status})")

            async with open_http(url, {"Authorization": f"Bearer {token}"}) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    init = wire(await session.initialize())
                    check(init["serverInfo"]["name"] == "eugene-std-tools", f"server name over http: {init['serverInfo']}")
                    names = {t.name for t in (await session.list_tools()).tools}
                    check("read_file" in names, f"tools listed over http: {sorted(names)}")
                    result = wire(await session.call_tool("read_file", {"path": "hello.txt"}))
                    check("hello over http" in text_of(result), f"read_file over http: {result}")
        finally:
            process.terminate()
            process.wait(30)


def conforms(instance, schema):
    """Whether `instance` follows `schema`, by the JSON Schema validator the SDK uses."""
    from jsonschema.validators import validator_for

    validator = validator_for(schema)
    validator.check_schema(schema)
    return validator(schema).is_valid(instance)


async def run_typed(url, token):
    async with open_http(url, {"Authorization": f"Bearer {token}"}) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t["name"]: t for t in (wire(t) for t in (await session.list_tools()).tools)}
            schemas = {name: tool.get("outputSchema") for name, tool in tools.items()}

            check(schemas.get("forecast") == {
                "title": "Forecast",
                "description": "A weather forecast.",
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "Where."},
                    "high_c": {"type": "integer", "format": "int32"},
                },
                "required": ["city", "high_c"],
            }, f"forecast's outputSchema is the struct's: {schemas.get('forecast')}")
            check(schemas.get("names") == {
                "type": "object",
                "properties": {"result": {"title": "Array_of_string", "type": "array", "items": {"type": "string"}}},
                "required": ["result"],
            }, f"names' outputSchema is the list's, wrapped: {schemas.get('names')}")
            check(schemas.get("touch") is None, f"touch has no outputSchema: {schemas.get('touch')}")

            # `call_tool` itself checks structuredContent against the outputSchema (it raises
            # otherwise); `conforms` checks again, and that the schemas reject a wrong value.
            expected = {
                "forecast": ({"city": "Oslo"}, {"city": "Oslo", "high_c": 4}, '{"city":"Oslo","high_c":4}'),
                "names": ({}, {"result": ["a", "b"]}, '["a","b"]'),
                "count": ({}, {"result": 42}, "42"),
                "parse": ({}, {"result": {"neg": {"num": 1.5}}}, '{"neg":{"num":1.5}}'),
            }
            for name, (args, structured, text) in expected.items():
                result = wire(await session.call_tool(name, args))
                check(result.get("isError") is not True, f"{name} succeeds: {result}")
                check(result.get("structuredContent") == structured, f"{name}'s structuredContent: {result}")
                check(text_of(result) == text, f"{name}'s text block is the JSON a model reads: {text_of(result)!r}")
                schema = schemas.get(name) or {}
                check(conforms(structured, schema), f"{name}'s structuredContent follows its outputSchema {schema}")
                check(not conforms({"result": "wrong"}, schema), f"{name}'s outputSchema rejects a wrong value")
            check(not conforms({"result": {"neg": {"neg": "x"}}}, schemas.get("parse") or {}),
                  "parse's recursive outputSchema checks nested values too")

            result = wire(await session.call_tool("touch", {}))
            check(text_of(result) == "done" and "structuredContent" not in result, f"touch answers `done`: {result}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--typed":
        asyncio.run(run_typed(sys.argv[2], sys.argv[3]))
    elif len(sys.argv) == 2:
        asyncio.run(run(sys.argv[1]))
        asyncio.run(run_http(sys.argv[1]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("python mcp client: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
