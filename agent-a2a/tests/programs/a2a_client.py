"""The official A2A Python SDK (a2a-sdk) as a client of an agent-a2a server.

Usage: python a2a_client.py <base url> <token or -> <scenario>

Prints one JSON object: what the scenario saw. The Rust test asserts on it.
"""

import asyncio
import json
import sys

import httpx
from google.protobuf.json_format import MessageToDict

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from google.protobuf import struct_pb2


def text_message(text, task_id="", context_id=""):
    return Message(
        message_id=f"m-{text[:8]}-{task_id[:8]}",
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


def data_message(data, task_id, context_id):
    value = struct_pb2.Value()
    value.struct_value.update(data)
    return Message(
        message_id=f"d-{task_id[:8]}",
        role=Role.ROLE_USER,
        parts=[Part(data=value)],
        task_id=task_id,
        context_id=context_id,
    )


def state_name(task):
    return MessageToDict(task.status).get("state")


def event_summary(event):
    kind = event.WhichOneof("payload")
    out = {"kind": kind}
    if kind == "task":
        out["state"] = state_name(event.task)
        out["id"] = event.task.id
    elif kind == "status_update":
        out["state"] = MessageToDict(event.status_update.status).get("state")
    elif kind == "artifact_update":
        out["text"] = "".join(p.text for p in event.artifact_update.artifact.parts)
        out["append"] = event.artifact_update.append
        out["last_chunk"] = event.artifact_update.last_chunk
    return out


def task_text(task):
    return "\n".join("".join(p.text for p in a.parts) for a in task.artifacts)


async def main():
    base, token, scenario = sys.argv[1], sys.argv[2], sys.argv[3]
    headers = {} if token == "-" else {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        result = {"card_name": card.name, "streaming": card.capabilities.streaming,
                  "skills": [s.name for s in card.skills]}
        streaming = scenario not in ("send", "unauthorized", "get")
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)
        try:
            await run(scenario, client, result)
        except Exception as error:  # the test reads what failed
            result["error"] = f"{type(error).__name__}: {error}"
        print(json.dumps(result))


async def run(scenario, client, result):
    if scenario in ("send", "unauthorized", "get"):
        events = [e async for e in client.send_message(SendMessageRequest(message=text_message("hello")))]
        task = events[-1].task
        result["state"] = state_name(task)
        result["text"] = task_text(task)
        if scenario == "get":
            got = await client.get_task(GetTaskRequest(id=task.id))
            result["got_state"] = state_name(got)
            result["got_text"] = task_text(got)
            result["history_roles"] = [MessageToDict(m).get("role") for m in got.history]
    elif scenario == "stream":
        events = [event_summary(e) async for e in client.send_message(
            SendMessageRequest(message=text_message("stream please")))]
        result["events"] = events
    elif scenario == "cancel":
        stream = client.send_message(SendMessageRequest(message=text_message("wait a while")))
        first = await stream.__anext__()
        task_id = first.task.id
        await stream.aclose()
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
        result["state"] = state_name(canceled)
    elif scenario == "resubscribe":
        stream = client.send_message(SendMessageRequest(message=text_message("wait a while")))
        first = await stream.__anext__()
        task_id = first.task.id
        await stream.aclose()
        result["events"] = [event_summary(e) async for e in client.subscribe(
            SubscribeToTaskRequest(id=task_id))]
    elif scenario == "approval":
        events = [e async for e in client.send_message(
            SendMessageRequest(message=text_message("clean up")))]
        summaries = [event_summary(e) for e in events]
        result["first_events"] = summaries
        task_id = next(e["id"] for e in summaries if e["kind"] == "task")
        got = await client.get_task(GetTaskRequest(id=task_id))
        status = MessageToDict(got.status)
        result["paused_state"] = status.get("state")
        parts = status.get("message", {}).get("parts", [])
        pending = [p["data"] for p in parts if "data" in p]
        result["pending"] = pending
        call_id = pending[0]["pendingCalls"][0]["id"]
        decision = data_message({"decisions": {call_id: "approve"}}, task_id, got.context_id)
        after = [event_summary(e) async for e in client.send_message(SendMessageRequest(message=decision))]
        result["after_events"] = after
        done = await client.get_task(GetTaskRequest(id=task_id))
        result["final_state"] = state_name(done)
        result["final_text"] = task_text(done)
    else:
        raise SystemExit(f"unknown scenario {scenario}")


asyncio.run(main())
