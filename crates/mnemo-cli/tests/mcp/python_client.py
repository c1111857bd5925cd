"""Drives mnemo's MCP endpoint with the official Python MCP SDK client.

Usage: python_client.py URL KEY   (exits non-zero on any mismatch)
"""
import asyncio
import json
import sys

from contextlib import asynccontextmanager

from mcp import ClientSession
from mcp.client import streamable_http


@asynccontextmanager
async def transport(url: str, headers: dict):
    """The SDK's streamable HTTP transport, across its 1.x and 2.x spellings."""
    if hasattr(streamable_http, "streamablehttp_client"):
        async with streamable_http.streamablehttp_client(url, headers=headers) as streams:
            yield streams[0], streams[1]
    else:
        client = streamable_http.create_mcp_http_client(headers=headers)
        async with client:
            async with streamable_http.streamable_http_client(url, http_client=client) as streams:
                yield streams[0], streams[1]


async def main(url: str, key: str) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    async with transport(url, headers) as (read, write):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            server = getattr(info, "server_info", None) or getattr(info, "serverInfo")
            assert server.name == "mnemo", info
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            assert tools == ["memory_context", "memory_forget", "memory_list", "memory_remember",
                             "memory_search", "memory_update", "memory_used", "profile_get"], tools
            saved = await session.call_tool("memory_remember", {"content": "Prefers aisle seats on long flights"})
            saved = json.loads(saved.content[0].text)
            assert saved["outcome"] == "added", saved
            found = await session.call_tool("memory_search", {"query": "aisle seats on flights"})
            found = json.loads(found.content[0].text)
            assert found["results"][0]["content"] == "Prefers aisle seats on long flights", found
    print("python mcp client: ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
