"""Drives kakeibo-mcp with the official MCP Python SDK client over real stdio.

Run by crates/mcp/tests/mcp_sdk.rs; prints one JSON object with what it saw.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def visit(allow_writes, calls):
    env = dict(os.environ)
    if allow_writes:
        env["ALLOW_WRITES"] = "1"
    else:
        env.pop("ALLOW_WRITES", None)
    params = StdioServerParameters(command=os.environ["KAKEIBO_MCP_BIN"], args=[], env=env)
    seen = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            seen["server"] = init.serverInfo.name
            seen["instructions"] = init.instructions or ""
            listed = await session.list_tools()
            seen["tools"] = {
                tool.name: {
                    "readOnlyHint": tool.annotations.readOnlyHint,
                    "destructiveHint": tool.annotations.destructiveHint,
                    "idempotentHint": tool.annotations.idempotentHint,
                    "openWorldHint": tool.annotations.openWorldHint,
                }
                for tool in listed.tools
            }
            seen["calls"] = []
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                seen["calls"].append({"name": name, "isError": bool(result.isError), "text": text_of(result)})
    return seen


async def main():
    calls = json.loads(sys.argv[1])
    read_only = await visit(False, calls)
    writable = await visit(True, [["set_budget", {"category": "Dining", "month": "2025-06", "amount_minor": 500000}]])
    print(json.dumps({"read_only": read_only, "writable": writable}))


asyncio.run(main())
