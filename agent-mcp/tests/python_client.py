"""The official Python MCP SDK (PyPI `mcp`) as a client of examples/mcp_server.

Usage: python python_client.py PATH_TO_MCP_SERVER

Starts the server over stdio on a temporary workspace, lists its tools and calls `read_file`
inside and outside the workspace. Exits non-zero, saying what was wrong, on any failure.
"""

import asyncio
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

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


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    asyncio.run(run(sys.argv[1]))
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("python mcp client: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
