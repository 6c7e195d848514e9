"""A scripted MCP client on the official Python SDK (PyPI `mcp`), for the gateway tests.

    python client.py PLAN stdio COMMAND [ARGS...]
    python client.py PLAN http URL [TOKEN]

PLAN is a JSON list of steps; each prints one JSON line on stdout:
  {"op": "list_tools"}                          -> {"tools": [names]}
  {"op": "call", "name": N, "arguments": {...}} -> {"is_error": bool, "text": "..."}
  {"op": "read", "uri": U}                      -> {"text": "..."}
  {"op": "list_resources"} / {"op": "list_prompts"} -> {"uris": [...]} / {"prompts": [...]}
  {"op": "prompt", "name": N, "arguments": {}}  -> {"text": "..."}
  {"op": "pause"}                               -> {"paused": true}, then waits for a stdin line
  {"op": "wait_tools_changed", "timeout": S}    -> {"changed": bool}
An error in a step prints {"error": "..."} and exits 1.

With MODE=2026-07-28 (http only) the client is the SDK's stateless `Client` in that revision,
stamping LOG_LEVEL (if set) as `io.modelcontextprotocol/logLevel` on every request; its plan
takes "call" and {"op": "logs"} -> {"logs": [params of the log messages since the last one]}.

With ELICIT=accept or ELICIT=decline in the environment the client declares the elicitation
capability and answers every form with approve=true (accept) or declines it, after
ELICIT_DELAY seconds (default 0), as a person taking their time would.
"""

import json
import os
import sys

import anyio
import httpx2
import mcp_types
from mcp import ClientSession
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

changed = anyio.Event()


async def on_message(message):
    if type(message).__name__ == "ToolListChangedNotification":
        changed.set()


async def on_elicit(context, params):
    await anyio.sleep(float(os.environ.get("ELICIT_DELAY", "0")))
    if os.environ.get("ELICIT") == "accept":
        return mcp_types.ElicitResult(action="accept", content={"approve": True})
    return mcp_types.ElicitResult(action="decline")


def session_for(read, write):
    elicit = on_elicit if os.environ.get("ELICIT") else None
    return ClientSession(read, write, message_handler=on_message, elicitation_callback=elicit)


def text_of(content):
    return "\n".join(getattr(c, "text", "") for c in content if getattr(c, "type", "") == "text")


async def run_plan(session, plan):
    global changed
    await session.initialize()
    for step in plan:
        op = step["op"]
        if op == "list_tools":
            names, cursor = [], None
            while True:
                page = await session.list_tools(params={"cursor": cursor} if cursor else None)
                names += [t.name for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
            out = {"tools": names}
        elif op == "call":
            r = await session.call_tool(step["name"], step.get("arguments", {}))
            out = {"is_error": bool(r.is_error), "text": text_of(r.content)}
        elif op == "read":
            r = await session.read_resource(step["uri"])
            out = {"text": "\n".join(getattr(c, "text", "") for c in r.contents)}
        elif op == "list_resources":
            r = await session.list_resources()
            out = {"uris": [str(x.uri) for x in r.resources]}
        elif op == "list_prompts":
            r = await session.list_prompts()
            out = {"prompts": [p.name for p in r.prompts]}
        elif op == "prompt":
            r = await session.get_prompt(step["name"], step.get("arguments", {}))
            out = {"text": "\n".join(getattr(m.content, "text", "") for m in r.messages)}
        elif op == "pause":
            print(json.dumps({"paused": True}), flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
            continue
        elif op == "wait_tools_changed":
            with anyio.move_on_after(step.get("timeout", 10)):
                await changed.wait()
            out = {"changed": changed.is_set()}
            changed = anyio.Event()
        else:
            raise ValueError(f"unknown op {op}")
        print(json.dumps(out), flush=True)


async def run_stateless_plan(url, plan):
    logs = []

    async def on_log(params):
        logs.append(params.model_dump(mode="json", exclude_none=True))

    mode = os.environ["MODE"]
    level = os.environ.get("LOG_LEVEL")
    async with Client(url, mode=mode, log_level=level, logging_callback=on_log) as client:
        for step in plan:
            op = step["op"]
            if op == "call":
                r = await client.call_tool(step["name"], step.get("arguments", {}))
                out = {"is_error": bool(r.is_error), "text": text_of(r.content)}
            elif op == "logs":
                out = {"logs": logs[:]}
                logs.clear()
            else:
                raise ValueError(f"unknown op {op}")
            print(json.dumps(out), flush=True)


async def main():
    plan = json.loads(sys.argv[1])
    kind = sys.argv[2]
    if os.environ.get("MODE") and kind == "http":
        await run_stateless_plan(sys.argv[3], plan)
    elif kind == "stdio":
        params = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
        async with stdio_client(params) as (read, write):
            async with session_for(read, write) as session:
                await run_plan(session, plan)
    elif kind == "http":
        headers = {"Authorization": f"Bearer {sys.argv[4]}"} if len(sys.argv) > 4 else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(sys.argv[3], http_client=http) as (read, write, *_):
                async with session_for(read, write) as session:
                    await run_plan(session, plan)
    else:
        raise ValueError(f"unknown transport {kind}")


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as e:  # noqa: BLE001 - report anything, including exception groups
        print(json.dumps({"error": repr(e)}), flush=True)
        sys.exit(1)
