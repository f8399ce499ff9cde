#!/usr/bin/python3
"""Schema-driven fuzzer of the running stack against docs/openapi.yaml.

For every operation the document lists, N cases (BDS_FUZZ_CASES, default
200) built by hypothesis from the operation's own schemas: valid bodies,
query and path parameters, their boundaries (lengths and bounds +-1), and
mutations (a required field dropped, a wrong type, an unknown field, odd
unicode, a body that is not JSON or not an object, another content type, no
or a forged credential). Each case goes to the operation's host with a real
credential of its security scheme, and every answer is checked:

  * never a 5xx;
  * the status is one the operation documents;
  * the body validates against the schema documented for that status
    (Draft 2020-12, formats checked, date-time and uri included);
  * every 4xx is in the coded envelope (error_code, error_message, hint,
    docs_url, request_id);
  * a 4xx changed nothing: the row counts of every table (but those that
    change on purpose or in the background, STATE_IGNORED) are the same
    before and after.

Environment (set by t/e2e/check_e2e_openapi_fuzz.c):
  BDS_FUZZ_DOC            the document (default docs/openapi.yaml)
  BDS_FUZZ_API_URL, BDS_FUZZ_SANDBOX_URL, BDS_FUZZ_LINK_URL  base URLs
  BDS_FUZZ_DSN            libpq conninfo of the stack's database (psql)
  BDS_FUZZ_PSQL           psql binary (default /usr/lib/postgresql/15/bin/psql)
  BDS_FUZZ_JWT            developer access token (developerJwt)
  BDS_FUZZ_DEV_EMAIL, BDS_FUZZ_DEV_PASSWORD  that developer
  BDS_FUZZ_THROW_EMAIL, BDS_FUZZ_THROW_PASSWORD  a throwaway developer
  BDS_FUZZ_CLIENT         the developer's client id
  BDS_FUZZ_SANDBOX_KEY    sandbox key of that client (sandbox host)
  BDS_FUZZ_API_KEY        development key of that client (api host)
  BDS_FUZZ_LINK           a sandbox link of the client, with bills
  BDS_FUZZ_SPARE_LINK     a second link, the one destructive ops may spend
  BDS_FUZZ_LAT            a link access token of BDS_FUZZ_LINK
  BDS_FUZZ_LINK_TOKEN, BDS_FUZZ_SESSION  a link token and a session of it
  BDS_FUZZ_CASES          cases per operation (default 200)
  BDS_FUZZ_ONLY           only operations whose operationId or "METHOD path"
                          contains this text
  BDS_FUZZ_REPORT         write the violations as JSON lines there too
  BDS_FUZZ_TRACE          write every case and its answer as JSON lines there
  BDS_FUZZ_BUDGET         seconds for the whole run (default 600): an
                          operation started after it runs a tenth of N
                          (said on its line)

Keeping the real credentials alive. Operations that would spend what the
other operations need run last (DESTRUCTIVE, in that order) and on things
of their own: sign-out and change-password on the throwaway developer
(a session each, signed in before the sign-in cases fill the address's
throttle), client delete and secret revoke/rotate on a client the fuzzer
creates for them, link delete and the sandbox link moves on the spare
link; link tokens and connect sessions are minted per operation with the
sandbox key, so an exit or a completed login spends only that one.

Reaching the handlers: real ids come from the env, from list operations
at the start and from successful creates (pools, keyed by the path
segment or the field name: link_id, biller_id...); the developers' e-mail
and passwords are values sign-in and change-password can succeed with;
the document's request examples seed bodies. The harness's nginx limits
(10,000 r/s) let every case through; the app's own throttles (sign-in)
still answer 429, a documented status.

The run is deterministic: hypothesis is derandomized (its seed comes from
each operation's test, the same each run) and keeps no database.
Exit status: 0 when no case broke a rule, 1 with the list of violations,
2 when the fuzzer itself could not run (no document, no stack).
"""
import http.client
import json
import os
import re
import subprocess
import sys
import time
import traceback
import urllib.parse
import uuid

import yaml
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oaschema import load_doc, validator  # noqa: E402  (shared with scripts/openapi-check)
from hypothesis import given, settings, HealthCheck, Phase, strategies as st

CASES = int(os.environ.get("BDS_FUZZ_CASES", "200"))
BUDGET = float(os.environ.get("BDS_FUZZ_BUDGET", "600"))
ONLY = os.environ.get("BDS_FUZZ_ONLY", "")
METHODS = ("get", "put", "post", "delete", "patch")

# Tables whose rows change by design on a refused request, or in the
# background (bds-jobs, bds-deliver) while the fuzzer runs.
STATE_IGNORED = {
    "auth_throttle": "counts failed sign-ins and codes on purpose (4xx commits it)",
    "connect_failures": "counts failed connect logins on purpose",
    "email_codes": "a wrong code's attempt count commits on purpose",
    "jobs": "bds-jobs runs in the background",
    "deliveries": "bds-deliver runs in the background",
    "delivery_attempts": "bds-deliver runs in the background",
    "outbox_email": "bds-deliver sends in the background",
    "webhook_inbox": "bds-deliver keeps an anonymous sandbox's deliveries in the background",
    "idempotency_keys": "a keyed request's answer is stored, 4xx included",
    "usage_counters": "the workers count every request of a client, 4xx included, "
                      "and write the counts in the background",
}

# Run last, in this order; each names the credential context it spends.
DESTRUCTIVE = [
    ("post", "/v1/link-sessions/connect"),
    ("post", "/v1/link-sessions/mfa"),
    ("post", "/v1/link-sessions/exit"),
    ("post", "/v1/links/{id}/refresh"),
    ("post", "/v1/sandbox/links/{id}/reset-login"),
    ("post", "/v1/sandbox/links/{id}/advance"),
    ("delete", "/v1/links/{id}"),
    ("delete", "/v1/pay/payment-methods/{id}"),
    ("delete", "/v1/webhook-endpoints/{id}"),
    ("delete", "/v1/iam/clients/{clientId}/webhooks/{webhookId}"),
    ("post", "/v1/iam/clients/{id}/client-secrets/{environment}/rotate"),
    ("delete", "/v1/iam/clients/{id}/client-secrets/{environment}"),
    ("delete", "/v1/iam/clients/{id}"),
    ("post", "/v1/iam/auth/signout"),		# its own session only
    ("post", "/v1/iam/auth/change-password"),	# may end every session: last
]
# ops on the throwaway client (path ids), the spare link, the throwaway developer
ON_THROW_CLIENT = {d for d in DESTRUCTIVE if "/v1/iam/clients/{id}" in d[1]}
ON_SPARE_LINK = {("post", "/v1/sandbox/links/{id}/reset-login"),
                 ("post", "/v1/sandbox/links/{id}/advance"),
                 ("delete", "/v1/links/{id}"), ("post", "/v1/links/{id}/refresh")}
ON_THROW_DEV = {("post", "/v1/iam/auth/signout"), ("post", "/v1/iam/auth/change-password")}

HOSTS = {"api.bds.example": "api", "sandbox.bds.example": "sandbox",
         "link.bds.example": "link"}

ODD = ["\u0000", "\u00e9", "e\u0301", "\u202e", "\ufeff", "\U0001f600", "\ud800",
       "\uffff", "'\"<>&;", "%00", "../", "\\", "\u2028", " ", "\t\n"]


def env(name, default=""):
    return os.environ.get(name, default)


# ------------------------------------------------------------------ #
# The document                                                        #

def deref(doc, node, seen=()):
    """node with every local $ref inlined (a cycle is cut to {})."""
    if isinstance(node, dict):
        if "$ref" in node and isinstance(node["$ref"], str) and node["$ref"].startswith("#/"):
            ref = node["$ref"]
            if ref in seen:
                return {}
            target = doc
            for part in ref[2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            out = deref(doc, target, seen + (ref,))
            if rest:
                return {"allOf": [out, deref(doc, rest, seen)]}
            return out
        return {k: deref(doc, v, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [deref(doc, v, seen) for v in node]
    return node


def merged(schema):
    """allOf flattened into one schema, for generation (validation uses the
    schema as written). A property named in two parts keeps the schema that
    says more (`true` says nothing); every anyOf/oneOf met is kept in
    x-choices, one of whose alternatives a valid value must satisfy."""
    if not isinstance(schema, dict):
        return {}
    out = {k: v for k, v in schema.items() if k not in ("allOf", "anyOf", "oneOf")}
    choices = list(schema.get("x-choices", []))
    for k in ("anyOf", "oneOf"):
        if k in schema:
            choices.append(schema[k])
    for part in schema.get("allOf", []):
        part = merged(part)
        for k, v in part.items():
            if k == "properties":
                props = dict(out.get("properties", {}))
                for name, ps in v.items():
                    old = props.get(name)
                    if not isinstance(old, dict) or not old:
                        props[name] = ps
                    elif isinstance(ps, dict) and ps:
                        props[name] = merged({"allOf": [old, ps]})
                out["properties"] = props
            elif k == "required":
                out["required"] = sorted(set(out.get("required", [])) | set(v))
            elif k == "x-choices":
                choices += v
            else:
                out.setdefault(k, v)
    if choices:
        out["x-choices"] = choices
    return out


# ------------------------------------------------------------------ #
# Strategies from schemas                                             #

def types_of(s):
    t = s.get("type")
    if t is None:
        if "properties" in s or "required" in s or "additionalProperties" in s:
            return ["object"]
        if "items" in s:
            return ["array"]
        if "enum" in s:
            return sorted({type_name(v) for v in s["enum"]})
        if "const" in s:
            return [type_name(s["const"])]
        return ["string"]
    return t if isinstance(t, list) else [t]


def type_name(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def fmt_strategy(fmt):
    if fmt == "email":
        return st.from_regex(r"\A[a-z0-9]{1,12}@[a-z]{1,10}\.(test|example)\Z")
    if fmt == "uri":
        return st.sampled_from(["https://app.example/cb", "https://hooks.example/x?y=1",
                                "http://127.0.0.1:9/hook", "https://a.example/" + "p" * 40])
    if fmt == "date":
        return st.dates().map(lambda d: d.isoformat())
    if fmt == "date-time":
        return st.datetimes(timezones=st.just(None)).map(
            lambda d: d.replace(microsecond=0).isoformat() + "Z")
    if fmt == "uuid":
        return st.uuids().map(str)
    return None


def string_strategy(s, pools):
    lo = s.get("minLength", 0)
    hi = s.get("maxLength", lo + 40)
    if "enum" in s:
        return st.sampled_from(s["enum"])
    f = fmt_strategy(s.get("format"))
    if f is not None:
        return f
    if "pattern" in s:
        try:
            # an anchored pattern is matched whole: Python's $ would let a
            # trailing newline through, ECMA-262's does not
            return st.from_regex(s["pattern"], fullmatch=s["pattern"].endswith("$")) \
                .filter(lambda x: lo <= len(x) <= hi)
        except Exception:
            pass
    return st.text(min_size=lo, max_size=min(hi, lo + 40))


def valid(s, pools, name="", depth=0):
    """Values the schema accepts (as far as generation can tell)."""
    s = merged(s)
    if "const" in s:
        return st.just(s["const"])
    if "enum" in s:
        return st.sampled_from(s["enum"])
    if s.get("x-choices"):
        # one alternative of each anyOf/oneOf, with the schema's own keywords
        # (properties beside anyOfs of required sets, as aliases are
        # written); the first alternative, the one hypothesis favours, is the
        # one without deprecated properties
        base = {k: v for k, v in s.items() if k != "x-choices"}
        props = base.get("properties", {})

        def plain(a):
            return any(isinstance(props.get(r), dict) and props[r].get("deprecated")
                       for r in merged(a).get("required", []))
        picks = [st.sampled_from(sorted(alts, key=plain)) for alts in s["x-choices"]]
        return st.tuples(*picks).flatmap(
            lambda chosen: valid(merged({"allOf": [base] + list(chosen)}), pools, name,
                                 depth + 1))
    hint = pool_for(name, pools)
    choices = []
    for t in types_of(s):
        if t == "null":
            choices.append(st.none())
        elif t == "boolean":
            choices.append(st.booleans())
        elif t == "integer":
            choices.append(st.integers(min_value=s.get("minimum", -2**31),
                                       max_value=s.get("maximum", 2**31)))
        elif t == "number":
            choices.append(st.floats(min_value=s.get("minimum", -1e9),
                                     max_value=s.get("maximum", 1e9), allow_nan=False))
        elif t == "string":
            choices.append(string_strategy(s, pools))
        elif t == "array":
            items = s.get("items", {})
            lo = s.get("minItems", 0)
            hi = min(s.get("maxItems", 3), lo + 3)
            choices.append(st.lists(valid(items, pools, singular(name), depth + 1),
                                    min_size=lo, max_size=hi,
                                    unique_by=(lambda x: json.dumps(x, sort_keys=True))
                                    if s.get("uniqueItems") else None))
        elif t == "object":
            choices.append(object_strategy(s, pools, depth))
    strat = st.one_of(choices) if choices else st.none()
    if hint:
        return st.one_of(st.sampled_from(hint), strat) if depth < 8 else strat
    return strat


def singular(name):
    return name[:-1] if name.endswith("s") else name


def object_strategy(s, pools, depth):
    # a deprecated alias beside its field is a duplicate: valid bodies use
    # the field only (mutations still send aliases)
    props = {k: v for k, v in s.get("properties", {}).items()
             if not (isinstance(v, dict) and merged(v).get("deprecated"))
             or k in s.get("required", [])}
    req = [p for p in s.get("required", []) if p in props]
    opt = [p for p in props if p not in req]
    if depth > 4:
        return st.fixed_dictionaries({p: valid(props[p], pools, p, depth + 1) for p in req})
    return st.fixed_dictionaries(
        {p: valid(props[p], pools, p, depth + 1) for p in req},
        optional={p: valid(props[p], pools, p, depth + 1) for p in opt})


def boundary(s):
    """Values at and just past the schema's bounds (strategy, or None)."""
    s = merged(s)
    out = []
    ts = types_of(s)
    if "string" in ts:
        lo, hi = s.get("minLength"), s.get("maxLength")
        if lo is not None:
            out += ["a" * lo, "a" * max(lo - 1, 0)]
        if hi is not None:
            out += ["a" * hi, "a" * (hi + 1), "\U0001f600" * hi, "\u00e9" * (hi + 1)]
        out.append("")
    if "integer" in ts or "number" in ts:
        for k, d in (("minimum", -1), ("maximum", 1)):
            if k in s:
                out += [s[k], s[k] + d]
        out += [0, -1, 2**63, -2**63 - 1, 1.5]
    if "array" in ts:
        lo, hi = s.get("minItems"), s.get("maxItems")
        item = s.get("items", {})
        sample = "x" if "string" in types_of(merged(item)) else 1
        if lo is not None:
            out += [[sample] * max(lo - 1, 0)]
        if hi is not None and hi <= 1000:
            out += [[sample] * (hi + 1)]
        out.append([sample, sample])
    return st.sampled_from(out) if out else None


WRONG = st.sampled_from([None, True, 0, -1, 3.25, "", "x", [], {}, ["x"], {"a": 1}, 2**70])


def mutate_object(s, pools, examples=None):
    """A body that breaks the schema in one place (of a generated body, or
    of one of the document's examples)."""
    s = merged(s)
    props = s.get("properties", {})
    req = [p for p in s.get("required", []) if p in props]
    base = st.sampled_from(examples) if examples else valid(s, pools)
    ops = [st.tuples(base, st.just("unknown"), st.sampled_from(["zz_unknown", "__proto__", "Id",
                                                                  "\u00e9t\u00e9"]), WRONG)]
    if req:
        ops.append(st.tuples(base, st.just("drop"), st.sampled_from(req), st.none()))
    if props:
        names = sorted(props)
        ops.append(st.tuples(base, st.just("wrong"), st.sampled_from(names), WRONG))
        ops.append(st.tuples(base, st.just("odd"), st.sampled_from(names),
                             st.sampled_from(ODD).map(lambda o: "a" + o + "b")))
        bounded = [n for n in names if boundary(props[n]) is not None]
        if bounded:
            ops.append(st.sampled_from(bounded).flatmap(
                lambda n: st.tuples(base, st.just("bound"), st.just(n), boundary(props[n]))))

    def apply(t):
        body, how, name, value = t
        body = dict(body) if isinstance(body, dict) else {}
        if how == "drop":
            body.pop(name, None)
        else:
            body[name] = value
        return (how + ":" + name, body)
    return st.one_of(ops).map(apply)


# ------------------------------------------------------------------ #
# Pools of real ids, filled from the env and from list operations      #

POOL_KEYS = {
    "links": "link", "link": "link", "account-links": "link", "bills": "bill", "bill": "bill",
    "clients": "client", "client": "client", "clientId": "client",
    "webhooks": "subscription", "webhookId": "subscription",
    "webhook-endpoints": "endpoint", "activity": "event", "event": "event",
    "billers": "biller", "biller": "biller", "statements": "statement",
    "statement": "statement", "link-tokens": "link_token", "linkTokenId": "link_token",
    "link_token": "link_token", "request-to-links": "rtl", "request_to_link": "rtl",
    "biller-discoveries": "discovery", "discovery": "discovery",
    "client_user": "client_user",
    "payment-methods": "payment_method", "payment_method": "payment_method",
    "payments": "payment", "attemptId": "payment",
    # the developers' own, so sign-in and change-password can succeed
    "email": "email", "password": "password",
    "currentPassword": "throw_password", "current_password": "throw_password",
}


def pool_for(name, pools):
    if not name:
        return None
    stem = re.sub(r"(_id|Id|_ids)$", "", name)
    key = POOL_KEYS.get(stem) or POOL_KEYS.get(name)
    if key and pools.get(key):
        return sorted(pools[key])
    return None


# ------------------------------------------------------------------ #
# HTTP                                                                #

# The exchange recorder of the e2e harness (t/e2e/record.h), for the
# document's coverage count: the same line format and the same masking.
RECORD_SECRET_KEYS = {
    "password", "new_password", "newPassword", "current_password", "currentPassword",
    "old_password", "oldPassword", "access_token", "accessToken", "refresh_token",
    "refreshToken", "id_token", "idToken", "client_secret", "clientSecret", "secret",
    "api_key", "apiKey", "key", "public_token", "publicToken", "session_token",
    "ticket", "token", "signing_secret", "webhook_secret", "username"}
RECORD_HEADERS = {"content-type", "etag", "retry-after", "cache-control", "location",
                  "ratelimit", "ratelimit-policy", "ratelimit-limit", "ratelimit-remaining",
                  "ratelimit-reset", "access-control-allow-origin", "x-request-id",
                  "idempotent-replayed", "content-disposition"}


def record_mask(s):
    keep = 0
    for i, ch in enumerate(s[:24]):
        if ch == "_":
            keep = i + 1
    return s[:keep] + re.sub(r"[A-Za-z0-9]", "x", s[keep:])


def record_mask_embedded(s):
    return re.sub(r"bds_[A-Za-z0-9_]*", lambda m: record_mask(m.group(0)), s)


def record_masked(v, key=None):
    if isinstance(v, dict):
        if key == "credentials":
            return {k: record_mask(x) if isinstance(x, str) else x for k, x in v.items()}
        return {k: record_masked(x, k) for k, x in v.items()}
    if isinstance(v, list):
        return [record_masked(x) for x in v]
    if isinstance(v, str):
        if key in RECORD_SECRET_KEYS or v.startswith(("bds_", "eyJ", "whsec_")) or \
                (key == "code" and v.isdigit()):
            return record_mask(v)
        return record_mask_embedded(v)
    return v


def record_auth(headers):
    a = (headers or {}).get("Authorization", "")
    if not a:
        return "none"
    if not a.startswith("Bearer "):
        return "other"
    t = a[7:]
    for prefix, kind in (("eyJ", "jwt"), ("bds_lat_", "link_access_token"),
                         ("bds_lst_", "session_token"), ("lt_", "link_token")):
        if t.startswith(prefix):
            return kind
    return "key"


class Http:
    def __init__(self):
        self.base = {"api": env("BDS_FUZZ_API_URL"), "sandbox": env("BDS_FUZZ_SANDBOX_URL"),
                     "link": env("BDS_FUZZ_LINK_URL") or env("BDS_FUZZ_SANDBOX_URL")}
        self.conns = {}
        rec = env("BDS_E2E_RECORD")
        self.record = open(os.path.join(rec, "openapi_fuzz.exchanges.jsonl"), "a") if rec else None

    def record_exchange(self, host, method, path, headers, status, hdrs, data):
        if self.record is None:
            return
        try:
            body = json.loads(data) if data else None
        except ValueError:
            body = None
        line = {"method": method.upper(), "host": host, "path": record_mask_embedded(path),
                "auth": record_auth(headers), "request": None, "status": status,
                "headers": {k: v for k, v in hdrs.items() if k in RECORD_HEADERS},
                "body": record_masked(body)}
        if body is None and data:
            line["body_bytes"] = len(data)
        self.record.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.record.flush()

    def conn(self, host):
        c = self.conns.get(host)
        if c is None:
            u = urllib.parse.urlsplit(self.base[host])
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
            self.conns[host] = c
        return c

    def request(self, host, method, path, headers=None, body=None):
        """(status, headers dict lowercased, body bytes)."""
        for attempt in range(2):
            c = self.conn(host)
            try:
                c.request(method.upper(), path, body=body, headers=headers or {})
                r = c.getresponse()
                data = r.read()
                hdrs = {k.lower(): v for k, v in r.getheaders()}
                if hdrs.get("connection", "").lower() == "close":
                    c.close()
                    self.conns.pop(host, None)
                self.record_exchange(host, method, path, headers, r.status, hdrs, data)
                return r.status, hdrs, data
            except (http.client.HTTPException, OSError):
                c.close()
                self.conns.pop(host, None)
                if attempt:
                    raise
        raise RuntimeError("unreachable")

    def json(self, host, method, path, token=None, body=None, idem=False):
        h = {"Accept": "application/json"}
        if token:
            h["Authorization"] = "Bearer " + token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        if idem:
            h["Idempotency-Key"] = "fuzz-setup-" + uuid.uuid4().hex
        s, _, b = self.request(host, method, path, h, data)
        try:
            return s, json.loads(b) if b else None
        except ValueError:
            return s, None


# ------------------------------------------------------------------ #
# Database state: row counts per table through one psql session        #

class State:
    def __init__(self, dsn):
        self.p = None
        if not dsn:
            return
        psql = env("BDS_FUZZ_PSQL", "/usr/lib/postgresql/15/bin/psql")
        self.p = subprocess.Popen([psql, "-X", "-q", "-A", "-t", "-F", "\t",
                                   "-v", "ON_ERROR_STOP=0", dsn],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, bufsize=1)
        # a partitioned table counts once, its partitions (pg_partman's
        # months, sql/140_partitions.sql) not apart
        tables = [r[0] for r in self.query(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')"
            " AND NOT c.relispartition ORDER BY 1;")]
        self.tables = [t for t in tables if t not in STATE_IGNORED]
        # an update shows in the newest updated_at where a table has one
        stamped = {r[0] for r in self.query(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public'"
            " AND column_name = 'updated_at';")}
        self.sql = " UNION ALL ".join(
            ("SELECT '%s', count(*) || ' rows, newest update ' ||"
             " coalesce(max(updated_at)::text, '-') FROM %s" if t in stamped else
             "SELECT '%s', count(*) || ' rows' FROM %s") % (t, t) for t in self.tables)
        if "jobs" in tables:
            # what bds-jobs did: a change here makes a diff inconclusive
            self.sql += (" UNION ALL SELECT '~jobs', coalesce(max(updated_at)::text, '') || '/'"
                         " || count(*) FILTER (WHERE status = 'running') FROM jobs")
        self.sql += ";"

    def query(self, q):
        self.p.stdin.write(q + "\n\\echo __FUZZ_END__\n")
        self.p.stdin.flush()
        rows = []
        while True:
            line = self.p.stdout.readline()
            if line == "":
                raise RuntimeError("psql ended")
            line = line.rstrip("\n")
            if line == "__FUZZ_END__":
                return rows
            if line:
                rows.append(line.split("\t"))

    def snapshot(self):
        if self.p is None or not self.tables:
            return None
        return {r[0]: r[1] for r in self.query(self.sql) if len(r) == 2}

    def value(self, q):
        rows = self.query(q)
        return rows[0][0] if rows and rows[0] else None


# ------------------------------------------------------------------ #
# The run                                                             #

class Fuzzer:
    def __init__(self, doc):
        self.doc = doc
        self.http = Http()
        self.state = State(env("BDS_FUZZ_DSN"))
        self.violations = []
        self.inconclusive = []	# 4xx with a diff while bds-jobs worked
        self.last_after = None
        self.trace = open(env("BDS_FUZZ_TRACE"), "w") if env("BDS_FUZZ_TRACE") else None
        self.pools = {}
        self.creds = {
            "jwt": env("BDS_FUZZ_JWT"), "sandbox_key": env("BDS_FUZZ_SANDBOX_KEY"),
            "api_key": env("BDS_FUZZ_API_KEY"), "lat": env("BDS_FUZZ_LAT"),
            "link_token": env("BDS_FUZZ_LINK_TOKEN"), "session": env("BDS_FUZZ_SESSION"),
        }
        self.add("client", env("BDS_FUZZ_CLIENT"))
        self.add("link", env("BDS_FUZZ_LINK"))
        self.add("client_user", "u-user_good")
        self.add("email", env("BDS_FUZZ_DEV_EMAIL"))
        self.add("password", env("BDS_FUZZ_DEV_PASSWORD"))
        self.add("throw_password", env("BDS_FUZZ_THROW_PASSWORD"))
        self.throw = {}
        self.validators = {}
        err = doc.get("components", {}).get("schemas", {})
        self.error_schema = validator(doc, {"$ref": "#/components/schemas/Error"}) \
            if "Error" in err else None
        self.account_schema = validator(doc, {"$ref": "#/components/schemas/AccountError"}) \
            if "AccountError" in err else None

    def add(self, key, value):
        if value:
            self.pools.setdefault(key, set()).add(value)

    # -- setup: real ids from list operations, throwaway things ------- #
    def discover(self):
        sk, jwt = self.creds["sandbox_key"], self.creds["jwt"]
        # the throwaway developer's sessions, signed in before the sign-in
        # cases fill the address's throttle: one for each op that spends one
        for p in sorted(p for m, p in ON_THROW_DEV):
            self.throw[p] = self.throw_jwt()
        lists = [("bills", "/v1/bills?limit=20", "bills", "id"),
                 ("link", "/v1/links?limit=20", None, "id"),
                 ("event", "/v1/activity?limit=20", None, "id"),
                 ("biller", "/v1/billers?limit=20", None, "id"),
                 ("endpoint", "/v1/webhook-endpoints", None, "id"),
                 ("discovery", "/v1/biller-discoveries?limit=20", None, "id")]
        for key, path, field, idf in lists:
            s, b = self.http.json("sandbox", "GET", path, sk)
            for item in items_of(b, field):
                if key == "bills":
                    key = "bill"
                self.add(key, item.get(idf))
                if isinstance(item.get("statement"), dict):
                    self.add("statement", item["statement"].get("id"))
        s, b = self.http.json("api", "GET", "/v1/request-to-links?limit=20",
                              self.creds["api_key"])
        for item in items_of(b, None):
            self.add("rtl", item.get("id"))
        # an endpoint of the fuzzer's own (updated, rotated, deleted last)
        s, b = self.http.json("sandbox", "POST", "/v1/webhook-endpoints", sk,
                              {"url": "http://127.0.0.1:9/fuzz", "enabled_events": ["*"]},
                              idem=True)
        if isinstance(b, dict):
            self.add("endpoint", b.get("id"))
        client = env("BDS_FUZZ_CLIENT")
        s, b = self.http.json("api", "GET", "/v1/iam/clients/%s/webhooks" % client, jwt)
        for item in items_of(b, None):
            self.add("subscription", item.get("id"))
        # a link token id for exchange
        s, b = self.http.json("sandbox", "POST", "/v1/link-tokens", sk,
                              {"client_user_id": "u-fuzz"})
        if isinstance(b, dict):
            self.add("link_token", b.get("link_token_id") or b.get("id"))
        # a card of the fuzzer's end user (a test number, Luhn-valid)
        s, b = self.http.json("sandbox", "POST", "/v1/pay/payment-methods", sk,
                              {"client_user_id": "u-fuzz", "pan": "4242424242424242",
                               "expiry_month": 12, "expiry_year": 2099})
        if isinstance(b, dict):
            self.add("payment_method", b.get("payment_method_id"))
        # a signed statement URL: its bill id and query are real values
        for bill in sorted(self.pools.get("bill", []))[:5]:
            s, b = self.http.json("sandbox", "GET", "/v1/bills/%s/statement" % bill, sk)
            url = pick(b, ("url",))
            if s == 200 and url:
                u = urllib.parse.urlsplit(url)
                self.add("statement", u.path.rsplit("/", 1)[-1])
                for k, v in urllib.parse.parse_qsl(u.query):
                    self.add("q:" + k, v)
                break
        print("fuzz: pools " + ", ".join("%s=%d" % (k, len(v))
                                         for k, v in sorted(self.pools.items())), flush=True)

    def throw_client(self):
        """A client of the developer for the ops that spend one, with a key."""
        if "client" not in self.throw:
            jwt = self.creds["jwt"]
            s, b = self.http.json("api", "POST", "/v1/iam/clients", jwt, {"name": "fuzz throwaway"})
            cid = pick(b, ("id", "client.id", "clientId", "data.id"))
            if cid:
                for e in ("sandbox", "development"):
                    self.http.json("api", "POST", "/v1/iam/clients/%s/client-secrets" % cid,
                                   jwt, {"environment": e}, idem=True)
            self.throw["client"] = cid
        return self.throw["client"]

    def throw_jwt(self):
        """A fresh sign-in of the throwaway developer."""
        s, b = self.http.json("api", "POST", "/v1/iam/auth/signin", None,
                              {"email": env("BDS_FUZZ_THROW_EMAIL"),
                               "password": env("BDS_FUZZ_THROW_PASSWORD")})
        return pick(b, ("tokens.accessToken", "accessToken", "access_token",
                        "data.tokens.accessToken")) or ""

    def fresh_link_token(self):
        s, b = self.http.json("sandbox", "POST", "/v1/link-tokens", self.creds["sandbox_key"],
                              {"client_user_id": "u-fuzz-" + uuid.uuid4().hex[:8]})
        return pick(b, ("link_token",)) or self.creds["link_token"]

    def fresh_pay_token(self):
        """A pay token of the end user the discovered payment method is of."""
        s, b = self.http.json("sandbox", "POST", "/v1/pay-tokens", self.creds["sandbox_key"],
                              {"client_user_id": "u-fuzz"})
        return pick(b, ("pay_token",)) or ""

    def fresh_session(self):
        lt = self.fresh_link_token()
        s, b = self.http.json("sandbox", "POST", "/v1/biller-connect/ticket", lt)
        tk = pick(b, ("ticket",))
        s, b = self.http.json("sandbox", "POST", "/v1/link-sessions", None, {"ticket": tk})
        return pick(b, ("session_token",)) or self.creds["session"]

    # -- operations --------------------------------------------------- #
    def operations(self):
        ops = []
        for path, item in (self.doc.get("paths") or {}).items():
            if not isinstance(item, dict):
                continue
            common = item.get("parameters", [])
            for m in METHODS:
                if m in item:
                    op = item[m]
                    label = "%s %s" % (m.upper(), path)
                    if ONLY and ONLY not in label and ONLY not in op.get("operationId", ""):
                        continue
                    ops.append((m, path, op, common, item.get("servers")))
        order = {d: i for i, d in enumerate(DESTRUCTIVE)}
        ops.sort(key=lambda o: (order.get((o[0], o[1]), -1), o[1], o[0]))
        return ops

    def hosts_of(self, op, path_servers):
        servers = op.get("servers") or path_servers or self.doc.get("servers") or []
        hosts = []
        for s in servers:
            h = HOSTS.get(urllib.parse.urlsplit(s.get("url", "")).hostname or "")
            if h and h not in hosts:
                hosts.append(h)
        return hosts or ["api"]

    def credential(self, scheme, host, ctx):
        if scheme == "developerJwt":
            return ctx.get("jwt") or self.creds["jwt"]
        if scheme == "apiKey":
            return self.creds["sandbox_key"] if host == "sandbox" else \
                (ctx.get("api_key") or self.creds["api_key"])
        if scheme == "linkAccessToken":
            return self.creds["lat"]
        if scheme == "linkToken":
            return ctx.get("link_token") or self.creds["link_token"]
        if scheme == "sessionToken":
            return ctx.get("session") or self.creds["session"]
        if scheme == "payToken":
            return ctx.get("pay_token") or self.fresh_pay_token()
        return None

    def context(self, m, path, schemes):
        """Credentials and ids this op spends (see DESTRUCTIVE)."""
        ctx = {}
        key = (m, path)
        if key in ON_THROW_DEV:
            ctx["jwt"] = self.throw.get(path) or self.throw_jwt()
        if key in ON_THROW_CLIENT:
            ctx["ids"] = {"id": self.throw_client()}
        if key in ON_SPARE_LINK and env("BDS_FUZZ_SPARE_LINK"):
            ctx["ids"] = {"id": env("BDS_FUZZ_SPARE_LINK")}
        if "linkToken" in schemes:
            ctx["link_token"] = self.fresh_link_token()
        if "sessionToken" in schemes:
            ctx["session"] = self.fresh_session()
        if "payToken" in schemes:
            ctx["pay_token"] = self.fresh_pay_token()
        return ctx

    def run_op(self, m, path, op, common, path_servers, n):
        doc = self.doc
        params = deref(doc, common + op.get("parameters", []))
        by = {"path": [], "query": [], "header": []}
        for p in params:
            if p.get("in") in by:
                by[p["in"]].append(p)
        body_schema = None
        rb = deref(doc, op.get("requestBody") or {})
        content = rb.get("content", {})
        examples = []
        if "application/json" in content:
            media = content["application/json"]
            body_schema = media.get("schema", {})
            # the document's own request examples are valid bodies to start from
            if "example" in media:
                examples.append(media["example"])
            for ex in (media.get("examples") or {}).values():
                if isinstance(ex, dict) and "value" in ex:
                    examples.append(ex["value"])
            examples += [e for e in merged(body_schema).get("examples", [])]
            examples = [e for e in examples if isinstance(e, dict)]
        body_required = bool(rb.get("required"))
        security = op.get("security", doc.get("security", []))
        schemes = [k for alt in security for k in alt] or [None]
        hosts = self.hosts_of(op, path_servers)
        ctx = self.context(m, path, schemes)
        ids = ctx.get("ids", {})
        pools = self.pools

        def path_value(p):
            name = p["name"]
            schema = p.get("schema", {})
            seg = path.split("{" + name + "}")[0].rstrip("/").split("/")[-1]
            if name in ids:
                real = st.just(ids[name])
            else:
                real_ids = pool_for(name, pools) or \
                    (sorted(pools[POOL_KEYS[seg]]) if seg in POOL_KEYS and
                     pools.get(POOL_KEYS[seg]) else None)
                real = st.sampled_from(real_ids) if real_ids else valid(schema, pools)
            # never empty: an empty segment is another path, not a value
            bad = st.one_of(st.text(min_size=1, max_size=20),
                            st.sampled_from(ODD).map(lambda o: "x" + o),
                            st.just("a" * 300), valid(schema, pools))
            return st.one_of(real, real, real, bad).filter(lambda v: str(v) != "")

        def query_value(p):
            schema = p.get("schema", {})
            b = boundary(schema)
            alts = [valid(schema, pools, p["name"])] * 3 + [WRONG.map(qstr)]
            if pools.get("q:" + p["name"]):
                alts += [st.sampled_from(sorted(pools["q:" + p["name"]]))] * 3
            if b is not None:
                alts.append(b)
            return st.one_of(alts).map(qstr)

        path_s = st.fixed_dictionaries({p["name"]: path_value(p) for p in by["path"]})
        q_req = {p["name"]: query_value(p) for p in by["query"] if p.get("required")}
        q_opt = {p["name"]: query_value(p) for p in by["query"] if not p.get("required")}
        query_s = st.fixed_dictionaries(q_req, optional=q_opt)
        query_s = st.one_of(*[query_s] * 7, query_s.map(lambda q: {**q, "zz_unknown": "1"}))
        if body_schema is not None:
            ex_s = [st.sampled_from(examples).map(lambda b: ("example", b)),
                    mutate_object(body_schema, pools, examples)] if examples else []
            # generation is close, not exact (dependentSchemas, oneOf
            # exclusivity): the document's validator names what is valid
            body_v = validator(self.doc, body_schema)

            def label(b):
                return ("valid" if body_v.is_valid(b) else "near-valid", b)
            body_s = st.one_of(
                valid(body_schema, pools).map(label),
                valid(body_schema, pools).map(label),
                mutate_object(body_schema, pools),
                mutate_object(body_schema, pools), *ex_s,
                st.sampled_from([("raw:not-json", b"{not json"), ("raw:array", b"[]"),
                                 ("raw:empty", b""), ("raw:null", b"null"),
                                 ("raw:deep", b"[" * 300 + b"]" * 300),
                                 ("raw:bad-utf8", b'{"a":"\xff\xfe"}'),
                                 ("ctype:text", b"{}")]))
        else:
            body_s = st.one_of(st.just(("none", None)), st.just(("none", None)),
                               st.just(("none", None)),
                               st.sampled_from([("raw:stray", b'{"a":1}')]))
        auth_s = st.sampled_from(["real"] * 18 + ["none", "forged"])
        host_s = st.sampled_from(hosts)
        scheme_s = st.sampled_from(schemes)
        idem_s = st.sampled_from(["fresh"] * 8 + ["none", "long", "odd"])
        stats = {"cases": 0, "statuses": {}}
        self.last_after = None

        @settings(max_examples=n, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck), phases=[Phase.generate],
                  report_multiple_bugs=False)
        @given(path_s, query_s, body_s, auth_s, host_s, scheme_s, idem_s)
        def case(pv, qv, bv, auth, host, scheme, idem):
            stats["cases"] += 1
            try:
                self.one_case(m, path, op, by, pv, qv, bv, body_required, auth, host, scheme,
                              idem, ctx, stats)
            except Exception as e:
                self.violate(m, path, {"path": pv, "query": qv, "body": bv[0]}, 0,
                             "fuzzer error: %r" % e, "")

        case()
        return stats

    def one_case(self, m, path, op, by, pv, qv, bv, body_required, auth, host, scheme, idem,
                 ctx, stats):
        url = path
        for name, v in pv.items():
            url = url.replace("{" + name + "}", urllib.parse.quote(
                str(v).encode("utf-8", "surrogatepass"), safe=""))
        if qv:
            url += "?" + "&".join("%s=%s" % (urllib.parse.quote(k), urllib.parse.quote(
                str(v).encode("utf-8", "surrogatepass"), safe="")) for k, v in qv.items())
        headers = {"Accept": "application/json"}
        token = self.credential(scheme, host, ctx) if scheme else None
        if auth == "forged" and scheme:
            token = (token or "x")[:-4] + "AAAA"
        if token and auth != "none":
            headers["Authorization"] = "Bearer " + token
        for p in by["header"]:
            if p["name"].lower() == "idempotency-key":
                if idem == "fresh" or (idem == "none" and not p.get("required")):
                    headers["Idempotency-Key"] = "fuzz-" + uuid.uuid4().hex
                elif idem == "long":
                    headers["Idempotency-Key"] = "k" * 256
                elif idem == "odd":
                    headers["Idempotency-Key"] = "k\u00e9".encode().decode("latin-1")
            elif p["name"].lower() == "x-client-user-id":
                headers[p["name"]] = "u-user_good" if idem != "none" else ""
        how, body = bv
        data = None
        if how.startswith("raw:") or how.startswith("ctype:"):
            data = body
            headers["Content-Type"] = "text/plain" if how.startswith("ctype:") \
                else "application/json"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        case = {"url": url, "host": host, "auth": auth, "scheme": scheme, "body": how,
                "sent": (data[:300].decode("utf-8", "replace") if data else None),
                "idempotency": headers.get("Idempotency-Key", "")[:40]}
        # the snapshot after a 4xx is the next case's "before": nothing of
        # the fuzzer's ran in between (bds-jobs may have: see ~jobs)
        before = self.last_after if self.last_after is not None else self.state.snapshot()
        self.last_after = None
        try:
            status, rh, rbody = self.http.request(host, m, url, headers, data)
        except Exception as e:
            self.violate(m, path, case, 0, "transport: %s" % e, "")
            return
        stats["statuses"][status] = stats["statuses"].get(status, 0) + 1
        text = rbody[:600].decode("utf-8", "replace")
        if self.trace is not None:
            self.trace.write(json.dumps({"op": "%s %s" % (m.upper(), path), "case": case,
                                         "status": status, "response": text}) + "\n")
        if 200 <= status < 300 and how in ("valid", "example") and m in ("post", "put", "patch"):
            self.learn(path, rbody)
        responses = op.get("responses", {})
        # a 5xx is the service failing, except a 501 the operation documents
        # (a gated route: payments answer 501 until the deployment enables them)
        if status >= 500 and not (status == 501 and "501" in responses):
            self.violate(m, path, case, status, "5xx", text)
        spec = responses.get(str(status)) or responses.get("%dXX" % (status // 100)) \
            or responses.get("default")
        if spec is None:
            self.violate(m, path, case, status, "undocumented status (documented: %s)" %
                         ",".join(sorted(responses)), text)
        else:
            self.check_body(m, path, case, status, spec, rh, rbody, text)
        if 400 <= status < 500:
            self.check_envelope(m, path, case, status, rbody, text)
            after = self.last_after = self.state.snapshot()
            if before is not None and after is not None and before != after:
                diff = ["%s: %s -> %s" % (t, before.get(t), after.get(t))
                        for t in sorted(set(before) | set(after))
                        if before.get(t) != after.get(t) and not t.startswith("~")]
                busy = before.get("~jobs") != after.get("~jobs") or \
                    not after.get("~jobs", "/0").endswith("/0")
                if diff and busy:
                    self.inconclusive.append({"op": "%s %s" % (m.upper(), path),
                                              "status": status, "diff": diff, "case": case})
                elif diff:
                    self.violate(m, path, case, status,
                                 "a 4xx changed rows: " + "; ".join(diff), text)

    def learn(self, path, rbody):
        """Ids a successful create or update answers join the pools."""
        try:
            b = json.loads(rbody)
        except ValueError:
            return
        seg = [x for x in path.split("/") if x and not x.startswith("{")][-1]
        key = POOL_KEYS.get(seg)
        if not key or not isinstance(b, dict):
            return
        # the id at the top, or in the one object the answer wraps it in
        for o in [b] + [v for v in b.values() if isinstance(v, dict)]:
            if isinstance(o.get("id"), str):
                self.add(key, o["id"])
                return

    def check_body(self, m, path, case, status, spec, rh, rbody, text):
        spec = self.resolve(spec)
        content = spec.get("content") or {}
        if not content:
            if rbody.strip():
                self.violate(m, path, case, status, "body where the document has none", text)
            return
        media = content.get("application/json")
        if media is None:
            return
        ct = rh.get("content-type", "")
        if "json" not in ct:
            self.violate(m, path, case, status, "content-type %r, documented json" % ct, text)
            return
        try:
            body = json.loads(rbody)
        except ValueError:
            self.violate(m, path, case, status, "body is not JSON", text)
            return
        schema = media.get("schema")
        if schema is None:
            return
        key = json.dumps(schema, sort_keys=True)
        v = self.validators.get(key)
        if v is None:
            v = self.validators[key] = validator(self.doc, schema)
        errs = sorted(v.iter_errors(body), key=lambda e: list(e.absolute_path))
        if errs:
            e = errs[0]
            where = "/".join(str(x) for x in e.absolute_path)
            self.violate(m, path, case, status, "schema: at /%s: %s" % (where, e.message[:300]),
                         text)

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            target = self.doc
            for part in node["$ref"][2:].split("/"):
                target = target[part]
            node = target
        return node

    def check_envelope(self, m, path, case, status, rbody, text):
        try:
            body = json.loads(rbody)
        except ValueError:
            self.violate(m, path, case, status, "4xx body is not JSON", text)
            return
        v = self.account_schema if path.startswith("/v1/iam/") and self.account_schema \
            and isinstance(body, dict) and "success" in body else self.error_schema
        if v is None:
            need = ("error_code", "error_message", "hint", "docs_url", "request_id")
            if not isinstance(body, dict) or any(k not in body for k in need):
                self.violate(m, path, case, status, "4xx not in the coded envelope", text)
            return
        errs = list(v.iter_errors(body))
        if errs:
            self.violate(m, path, case, status, "4xx not in the coded envelope: %s" %
                         errs[0].message[:200], text)

    def violate(self, m, path, case, status, what, text):
        self.violations.append({"op": "%s %s" % (m.upper(), path), "status": status,
                                "what": what, "case": case, "response": text[:400]})


def qstr(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    if isinstance(v, (list, dict)):
        return json.dumps(v)
    return str(v)


def items_of(b, field):
    if isinstance(b, dict):
        for k in ([field] if field else []) + ["data", "items", "results", "bills", "links",
                                                "events", "billers", "endpoints",
                                                "request_to_links", "discoveries", "webhooks",
                                                "clients"]:
            if k and isinstance(b.get(k), list):
                return [x for x in b[k] if isinstance(x, dict)]
    if isinstance(b, list):
        return [x for x in b if isinstance(x, dict)]
    return []


def pick(b, paths):
    for p in paths:
        v = b
        for part in p.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if isinstance(v, str) and v:
            return v
    return None


def main():
    path = env("BDS_FUZZ_DOC", "docs/openapi.yaml")
    try:
        doc = load_doc(path)
    except (OSError, yaml.YAMLError) as e:
        print("fuzz: cannot read %s: %s" % (path, e), file=sys.stderr)
        return 2
    f = Fuzzer(doc)
    ops = f.operations()
    if not ops:
        print("fuzz: %s documents no operation" % path, file=sys.stderr)
        return 2
    f.discover()
    start = time.monotonic()
    ignored = ", ".join("%s (%s)" % kv for kv in sorted(STATE_IGNORED.items()))
    print("fuzz: %d operations, %d cases each; tables not compared: %s" %
          (len(ops), CASES, ignored), flush=True)
    total = 0
    for m, p, op, common, servers in ops:
        n = CASES if time.monotonic() - start < BUDGET else max(CASES // 10, 5)
        t0 = time.monotonic()
        nv = len(f.violations)
        try:
            stats = f.run_op(m, p, op, common, servers, n)
        except Exception as e:
            f.violate(m, p, {}, 0, "fuzzer error: %r" % e, traceback.format_exc()[-600:])
            stats = {"cases": 0, "statuses": {}}
        total += stats["cases"]
        print("%-7s %-62s %4d cases %5.1fs%s  %s%s" % (
            m.upper(), p, stats["cases"], time.monotonic() - t0,
            " (budget spent: N/10)" if n < CASES else "",
            " ".join("%d:%d" % kv for kv in sorted(stats["statuses"].items())),
            ("  VIOLATIONS %d" % (len(f.violations) - nv)) if len(f.violations) > nv else ""),
            flush=True)
    print("fuzz: %d cases in %.0f s, %d violations" %
          (total, time.monotonic() - start, len(f.violations)), flush=True)
    if f.inconclusive:
        print("fuzz: %d 4xx answers saw rows change while bds-jobs worked (not counted):" %
              len(f.inconclusive))
        for v in f.inconclusive[:10]:
            print("  %s -> %s: %s" % (v["op"], v["status"], ", ".join(v["diff"])))
    report = env("BDS_FUZZ_REPORT")
    if report:
        with open(report, "w") as out:
            for v in f.violations:
                out.write(json.dumps(v) + "\n")
    if f.violations:
        groups = {}
        for v in f.violations:
            groups.setdefault((v["op"], v["status"], v["what"][:120]), []).append(v)
        print("\nVIOLATIONS (%d, %d distinct):" % (len(f.violations), len(groups)))
        for (o, s, w), vs in sorted(groups.items()):
            v = vs[0]
            print("- %s -> %s: %s  [x%d]\n    case: %s\n    response: %s" % (
                o, s, w, len(vs), json.dumps(v["case"])[:400], v["response"][:300]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
