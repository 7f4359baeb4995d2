"""A family member's assistant on the official Python MCP SDK: writes to a loved one's care record
through the workspace MCP endpoint in the 2026-07-28 era, with an API key.

Usage: CARECIRCLE_API_KEY=cc_... python family_writes.py <endpoint URL> <lovedOneId>

Prints one JSON object: the negotiated version, the tools listed, each call's structured result and
the questions the person was asked (input_required, answered "approve"). Exits non-zero on the
first call that fails, naming it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx2
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ElicitRequestParams, ElicitResult



def noon_zone(now: datetime) -> str:
    """A zone where it is now between 12:00 and 13:00, so a dose logged now is today's 12:00 dose there."""
    offset = (12 - now.hour + 36) % 24 - 12
    return "UTC" if offset == 0 else f"Etc/GMT{'-' if offset > 0 else '+'}{abs(offset)}"


async def main(url: str, loved_one_id: str, api_key: str) -> dict[str, Any]:
    asked: list[str] = []

    async def approve(_ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        # The person says yes to every question this run is shown; the test checks what was asked.
        asked.append(params.message)
        return ElicitResult(action="accept", content={"approve": True})

    results: dict[str, Any] = {}
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {api_key}"}, timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http), mode="auto", elicitation_callback=approve) as client:

        async def call(label: str, tool: str, arguments: dict[str, Any]) -> Any:
            result = await client.call_tool(tool, arguments)
            if result.is_error:
                raise SystemExit(f"{label} ({tool}) failed: {json.dumps([c.model_dump() for c in result.content])}")
            results[label] = result.structured_content
            return result.structured_content

        tools = sorted(t.name for t in (await client.list_tools()).tools)
        zone = noon_zone(datetime.now(timezone.utc))
        soon = (datetime.now(timezone.utc) + timedelta(days=2)).replace(microsecond=0).isoformat()
        lo = {"lovedOneId": loved_one_id}

        note = await call("add_care_note", "add_care_note", {**lo, "text": "Written from Python, then withdrawn."})
        await call("log_medication_dose", "log_medication_dose", {**lo, "medication": "Lisinopril", "status": "given", "amount": 10, "unit": "mg"})
        await call("record_vital", "record_vital", {**lo, "kind": "pulse", "value": 68, "unit": "/min"})
        await call("add_appointment", "add_appointment", {**lo, "title": "Cardiology follow-up", "start": soon})
        task = await call("add_task", "add_task", {**lo, "title": "Pick up the blood pressure cuff", "due": soon})
        await call("update_task", "update_task", {**lo, "taskId": task["task"]["id"], "action": "take"})
        med = await call(
            "update_medication add",
            "update_medication",
            {**lo, "action": "add", "medication": {"name": "Lisinopril", "strength": "10 mg", "times": ["08:00"], "timeZone": zone}},
        )
        # Changing a medication and withdrawing an entry ask the person first: input_required, answered by approve().
        await call(
            "update_medication change",
            "update_medication",
            {**lo, "action": "change", "medicationId": med["medication"]["medicationId"], "medication": {"times": ["12:00", "20:00"]}},
        )
        await call("retract_entry", "retract_entry", {**lo, "entryId": note["entry"]["id"], "reason": "Written twice"})
        await call("list_medications", "list_medications", lo)
        await call("list_appointments", "list_appointments", lo)
        await call("list_tasks", "list_tasks", lo)
        return {"protocolVersion": client.protocol_version, "tools": tools, "asked": asked, "results": results}


if __name__ == "__main__":
    key = os.environ.get("CARECIRCLE_API_KEY")
    if len(sys.argv) != 3 or not key:
        raise SystemExit("usage: CARECIRCLE_API_KEY=cc_... python family_writes.py <endpoint URL> <lovedOneId>")
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], key))))
