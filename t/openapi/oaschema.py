"""What the OpenAPI document's checkers share (scripts/openapi-check and
t/openapi/fuzz.py): reading the document, and JSON Schema validation
(Draft 2020-12) with formats checked. jsonschema 4.10 (Debian) checks
date-time and uri only with extra packages that Debian lacks, so the
checkers of those formats are here."""
import datetime
import re
import urllib.parse

import jsonschema
import yaml

RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]*")

FORMATS = jsonschema.FormatChecker()


@FORMATS.checks("date-time", raises=ValueError)
def _datetime(v):
    if not isinstance(v, str):
        return True
    if not RFC3339.fullmatch(v):
        raise ValueError("not RFC 3339")
    datetime.datetime.fromisoformat(re.sub(r"[Zz]$", "+00:00", v).replace("t", "T"))
    return True


@FORMATS.checks("uri", raises=ValueError)
def _uri(v):
    if not isinstance(v, str):
        return True
    if not URI.fullmatch(v) or not urllib.parse.urlsplit(v).scheme:
        raise ValueError("not an absolute URI")
    return True


@FORMATS.checks("date", raises=ValueError)
def _date(v):
    if not isinstance(v, str):
        return True
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
        raise ValueError("not a full-date")
    datetime.date.fromisoformat(v)
    return True


def load_doc(path):
    with open(path) as f:
        return yaml.safe_load(f)


def validator(doc, schema, resolver=None):
    """A validator of schema whose local $refs resolve in doc."""
    return jsonschema.Draft202012Validator(
        schema, resolver=resolver or jsonschema.RefResolver.from_schema(doc),
        format_checker=FORMATS)
