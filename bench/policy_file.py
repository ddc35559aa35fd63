"""Reads an mlgo-es policy file of either form for the bench scripts.

The blob form (policy file version 4, `mlgo-eval rewrite-policy --blobs`)
is a JSON head, one NUL byte and a blob area; each run of doubles is an
{"offset", "count"} into the area. load() gives the text form's JSON
object for both: every run as float64-le-base64 text, so a script reads
and writes one form.
"""
import base64
import json


def _as_text(value, area):
    if isinstance(value, dict):
        if set(value) == {"offset", "count"}:
            start = value["offset"]
            return base64.b64encode(area[start:start + 8 * value["count"]]).decode()
        return {key: ("float64-le-base64" if key == "encoding" and item == "float64-le-blob"
                      else 3 if key == "version" and item == 4 else _as_text(item, area))
                for key, item in value.items()}
    if isinstance(value, list):
        return [_as_text(item, area) for item in value]
    return value


def load(path):
    data = open(path, "rb").read()
    head, nul, area = data.partition(b"\0")
    policy = json.loads(head)
    return _as_text(policy, area) if nul else policy
