#!/usr/bin/env python3
"""Follow a gateway session's event log by long-polling JSON pages; Python standard library only.

usage: follow_events.py BASE_URL SESSION_ID   (with a token: export GATEWAY_TOKEN first)
Prints one line per frame (seq, method, update kind, message text) and returns when the session closes."""
import json, os, sys, urllib.error, urllib.request

base, sid = sys.argv[1], sys.argv[2]
auth = {"Authorization": "Bearer " + os.environ["GATEWAY_TOKEN"]} if os.environ.get("GATEWAY_TOKEN") else {}
get = lambda path: json.load(urllib.request.urlopen(urllib.request.Request(base + path, headers=auth), timeout=60))
after = 0
while True:
    try:
        page = get(f"/v1/sessions/{sid}/events?after={after}&wait=25s")
    except urllib.error.HTTPError as e:
        if e.code != 404: raise
        break  # closed sessions leave the gateway
    for f in page["frames"]:
        p = f.get("params", {}); u = p.get("update", {})
        text = u.get("content", {}).get("text", "") if u.get("sessionUpdate") == "agent_message_chunk" else ""
        line = [str(p["_meta"]["gateway"]["seq"]), f["method"], u.get("sessionUpdate", ""), json.dumps(text) if text else ""]
        print(" ".join(x for x in line if x), flush=True)
    after = page["lastSeq"]
    if any("resync_required" in json.dumps(n) for n in page["notes"] or []):
        after = get(f"/v1/sessions/{sid}")["lastSeq"]  # the log moved on without us: the snapshot has what was missed
    if page["closed"]: break
print("session closed", flush=True)
