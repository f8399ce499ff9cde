/*
 * Quickstart: a developer's first session with the Bill Data Service, end
 * to end, through the typed client only.
 *
 *   1. read the legal documents and sign up, accepting exactly those;
 *   2. confirm the sign-up with the code e-mailed (read from the mail spool);
 *   3. sign in; create a client; create its sandbox key;
 *   4. start a webhook receiver on 127.0.0.1 and register it;
 *   5. create a sandbox account link;
 *   6. wait for a webhook (trigger one if none comes) and verify its
 *      Service-Signature;
 *   7. sync the link's bills by the spec's loop rules, then once more from
 *      the stored cursor.
 *
 * Environment:
 *   BDS_API_URL       the api host, e.g. http://127.0.0.1:8080
 *   BDS_SANDBOX_URL   the sandbox host
 *   BDS_MAIL_SPOOL    the directory the service's mail spool writes .eml to
 *   BDS_TIMEOUT_MS    the whole run's bound (default 60000)
 *   BDS_EMAIL         the developer's address (default a fresh one)
 *   BDS_WEBHOOK_WAIT_MS  how long to wait for the link's connection.ready
 *                     before triggering an event instead (default 20000)
 *
 * It prints each step and exits 0, or prints why and exits 1.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

import { createClient, verifySignature } from "../src/index.js";
import type { Schema, paths } from "../src/index.js";

/* Webhook bodies as the document types them. */
type Event = Schema<"Event">;
type ConnectionReady = Schema<"EventConnectionReady">;
/* One page of the bill sync, and a bill as it lists one. */
type SyncOk = paths["/v1/account-links/{link_id}/bills/sync"]["get"]["responses"][200];
type SyncPage = SyncOk["content"]["application/json"]["data"];
type SyncBill = SyncPage["added"][number];

const CONFIRM_SUBJECT = "Confirm your Bill Data Service account";
const SYNC_PAGE = 5;			/* small pages, so the loop follows next_cursor */
const TRIGGER_WAIT_MS = 10000;		/* for a triggered one */

function env(name: string, fallback?: string): string {
	const v = process.env[name] ?? fallback;

	if (v === undefined || v === "")
		throw new Error(`set ${name}`);
	return v;
}

function say(step: string, detail = ""): void {
	console.log(`quickstart: ${step}${detail !== "" ? `: ${detail}` : ""}`);
}

function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/* The data of an openapi-fetch result when the status is want, else an
 * error naming the step, the status and the error body. */
function expect<D, E>(step: string, want: number,
    r: { data?: D; error?: E; response: Response }): D {
	if (r.response.status !== want || r.data === undefined)
		throw new Error(`${step}: HTTP ${r.response.status}, want ${want}: ` +
		    JSON.stringify(r.error ?? r.data ?? null));
	return r.data;
}

function idempotencyKey(): { "Idempotency-Key": string } {
	return { "Idempotency-Key": `quickstart-${randomUUID()}` };
}

/* ---- mail: the service's spool (one .eml file per message) ---- */

/* The 6-digit code of the confirmation mail addressed to `to`, polled for
 * until `until` (ms since the epoch). */
async function mailCode(dir: string, to: string, until: number): Promise<string> {
	const want = to.toLowerCase();

	while (Date.now() < until) {
		let names: string[] = [];

		try {
			names = await readdir(dir);
		} catch {
			/* the spool is made on first delivery */
		}
		for (const name of names.filter((n) => n.endsWith(".eml") && !n.startsWith("."))) {
			const text = await readFile(join(dir, name), "utf8");
			const split = text.search(/\r?\n\r?\n/);
			const head = split >= 0 ? text.slice(0, split) : text;
			const body = split >= 0 ? text.slice(split) : "";
			/* unfold continuation lines, then take To: and Subject: */
			const lines = head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/);
			const header = (h: string): string =>
			    lines.find((l) => l.toLowerCase().startsWith(`${h}:`))
				?.slice(h.length + 1).trim() ?? "";
			const rcpt = header("to").replace(/^.*<([^>]*)>.*$/, "$1").toLowerCase();
			const code = /code is ([0-9]{6})\b/.exec(body);

			if (rcpt === want && header("subject") === CONFIRM_SUBJECT && code?.[1] !== undefined)
				return code[1];
		}
		await sleep(250);
	}
	throw new Error(`no "${CONFIRM_SUBJECT}" mail to ${to} in ${dir}`);
}

/* ---- webhooks: a receiver on 127.0.0.1 ---- */

interface Delivery {
	headers: IncomingHttpHeaders;
	raw: Buffer;
	event: Event | undefined;	/* undefined when the body is not JSON */
}

interface Receiver {
	server: Server;
	url: string;
	deliveries: Delivery[];
}

async function startReceiver(): Promise<Receiver> {
	const deliveries: Delivery[] = [];
	const server = createServer((req, res) => {
		const chunks: Buffer[] = [];

		req.on("data", (c: Buffer) => chunks.push(c));
		req.on("end", () => {
			const raw = Buffer.concat(chunks);
			let event: Event | undefined;

			try {
				/* typed, not validated: the signature is checked before use */
				event = JSON.parse(raw.toString("utf8")) as Event;
			} catch {
				/* kept: the signature check reports it */
			}
			deliveries.push({ headers: req.headers, raw, event });
			res.writeHead(200, { "Content-Type": "text/plain" }).end("ok\n");
		});
	});

	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve());
	});
	const port = (server.address() as AddressInfo).port;

	return { server, url: `http://127.0.0.1:${port}/webhooks`, deliveries };
}

/* The first delivery after `from` that pick accepts, waiting until ms. */
async function waitDelivery(rc: Receiver, from: number, ms: number,
    pick: (d: Delivery) => boolean): Promise<Delivery | undefined> {
	const until = Date.now() + ms;

	for (;;) {
		const d = rc.deliveries.slice(from).find(pick);

		if (d !== undefined || Date.now() >= until)
			return d;
		await sleep(100);
	}
}

/* ---- the session ---- */

async function main(): Promise<void> {
	const timeout = Number(env("BDS_TIMEOUT_MS", "60000"));
	const until = Date.now() + timeout;
	const api = createClient({ baseUrl: env("BDS_API_URL") });
	const spool = env("BDS_MAIL_SPOOL");
	const email = env("BDS_EMAIL", `quickstart-${Date.now()}-${randomBytes(3).toString("hex")}@example.test`);
	/* upper, lower, digits and specials, 12 or more */
	const password = `Qs-${randomBytes(6).toString("hex")}-Pass!9`;
	const webhookWait = Number(env("BDS_WEBHOOK_WAIT_MS", "20000"));

	/* 1. sign-up: accept exactly the documents the registry returns */
	const legal = expect("legal documents", 200, await api.GET("/v1/iam/auth/legal-documents"));
	say("legal documents", legal.documents.map((d) =>
	    `${d.document_kind} ${d.document_version}`).join(", "));
	const signup = expect("sign-up", 201, await api.POST("/v1/iam/auth/signup", {
		body: {
			email,
			password,
			given_name: "Quick",
			family_name: "Start",
			client_name: "Quickstart",
			legal_acceptances: legal.documents.map((d) => ({
				document_kind: d.document_kind,
				document_version: d.document_version,
				document_effective_date: d.document_effective_date,
				accepted: true,
			})),
		},
	}));
	say("signed up", `${email} (user ${signup.user_id})`);

	/* 2. confirm with the e-mailed code */
	const code = await mailCode(spool, email, Math.min(until, Date.now() + 30000));
	const confirmed = expect("confirm sign-up", 200, await api.POST("/v1/iam/auth/confirm-signup",
	    { body: { email, code } }));
	if (!confirmed.success)
		throw new Error(`confirm sign-up: ${confirmed.message}`);
	say("confirmed", `code from the mail spool`);

	/* 3. sign in, a client, its sandbox key */
	const signin = expect("sign-in", 200, await api.POST("/v1/iam/auth/signin",
	    { body: { email, password } }));
	const dev = createClient({ baseUrl: env("BDS_API_URL"), token: signin.tokens.accessToken });
	say("signed in", `access token for ${signin.tokens.expiresIn} s`);

	const created = expect("create client", 201, await dev.POST("/v1/iam/clients",
	    { body: { name: "Quickstart app" } }));
	const clientId = created.client.id;
	say("client created", clientId);

	const secret = expect("create sandbox key", 201, await dev.POST(
	    "/v1/iam/clients/{id}/client-secrets", {
		params: { path: { id: clientId }, header: idempotencyKey() },
		body: { environment: "sandbox" },
	}));
	say("sandbox key created", `${secret.secret.id} (${secret.secret.environment})`);
	const sandbox = createClient({ baseUrl: env("BDS_SANDBOX_URL"), token: secret.secret.secret });

	/* 4. a webhook receiver, registered for every event */
	const rc = await startReceiver();
	try {
		const endpoint = expect("register webhook endpoint", 201, await sandbox.POST(
		    "/v1/webhook-endpoints", {
			params: { header: idempotencyKey() },
			body: { url: rc.url, events: ["*"] },
		}));
		const signingSecret = endpoint.secret;
		if (signingSecret === undefined || signingSecret === null)
			throw new Error("register webhook endpoint: no signing secret in the answer");
		say("webhook endpoint registered", `${endpoint.id} -> ${rc.url}`);

		/* 5. a sandbox account link (fixture user_good: 12 bills) */
		const link = expect("create sandbox account link", 201, await sandbox.POST(
		    "/v1/sandbox/account-links", {
			params: { header: idempotencyKey() },
			body: { client_user_id: "quickstart-user", username: "user_good" },
		}));
		const linkId = link.link_id;
		say("sandbox account link created", linkId);

		/* 6. a webhook: the link's connection.ready when it comes in time
		 * (the hint to sync), else one triggered on the sandbox host */
		let delivery = await waitDelivery(rc, 0, Math.min(webhookWait, until - Date.now()),
		    (d) => d.event?.type === "connection.ready" &&
			d.event.data.object["link_id"] === linkId);
		const triggered = delivery === undefined;
		if (delivery === undefined) {
			const from = rc.deliveries.length;
			const trig = expect("trigger event", 202, await sandbox.POST(
			    "/v1/triggers/{event_type}", {
				params: { path: { event_type: "connection.ready" }, header: idempotencyKey() },
				body: { id: linkId, object: "link", link_id: linkId },
			}));
			say("no connection.ready yet; triggered", `${trig.type} ${trig.event_id}`);
			delivery = await waitDelivery(rc, from, Math.min(TRIGGER_WAIT_MS, until - Date.now()),
			    (d) => d.event?.id === trig.event_id);
			if (delivery === undefined)
				throw new Error(`triggered event ${trig.event_id} never reached ${rc.url}`);
		}
		const check = verifySignature(delivery.headers["service-signature"], delivery.raw,
		    signingSecret);
		if (!check.ok)
			throw new Error(`webhook ${delivery.event?.id}: bad Service-Signature: ${check.reason}`);
		const event = delivery.event;
		if (event === undefined)
			throw new Error("webhook: the signed body is not JSON");
		say("webhook verified", `${event.type} ${event.id}` +
		    ` (Service-Signature t=${check.timestamp}, HMAC-SHA256 matches)`);

		/* 7. sync: from no cursor to the end, then again from the stored one */
		const bills = new Map<string, SyncBill>();
		let stored: string | undefined;

		stored = await syncLoop(sandbox, linkId, stored, bills);
		say("synced", `${bills.size} bills; cursor stored`);
		/* the link's own connection.ready counts its first retrieval's
		 * bills (a triggered one carries what was posted) */
		if (!triggered && event.type === "connection.ready") {
			const ready = (event as ConnectionReady).data?.object;

			if (ready !== undefined && ready.bill_count !== bills.size)
				throw new Error(`connection.ready says ${ready.bill_count} bills, the sync` +
				    ` gave ${bills.size}`);
		}
		stored = await syncLoop(sandbox, linkId, stored, bills);
		say("synced again from the stored cursor", `${bills.size} bills`);
	} finally {
		rc.server.closeAllConnections();
		rc.server.close();
	}
}

/*
 * The spec's loop (SPEC "Bills and sync", DOMAIN "Sync"): the first call
 * without a cursor (the whole history), then next_cursor while has_more;
 * upsert added and modified by bill_id, delete removed; the cursor to keep is
 * the last next_cursor, returned only once has_more is false. A stored
 * cursor the service refuses (400 INVALID_CURSOR) is dropped and the sync
 * starts again from zero.
 */
async function syncLoop(sandbox: ReturnType<typeof createClient>, linkId: string,
    stored: string | undefined, bills: Map<string, SyncBill>): Promise<string | undefined> {
	let cursor = stored;

	for (let page = 1; page <= 1000; page++) {
		const r = await sandbox.GET("/v1/account-links/{link_id}/bills/sync", {
			params: {
				path: { link_id: linkId },
				query: cursor !== undefined ? { limit: SYNC_PAGE, cursor } : { limit: SYNC_PAGE },
			},
		});

		if (r.response.status === 400 && r.error?.error_code === "INVALID_CURSOR" &&
		    cursor !== undefined && cursor === stored) {
			say("stored cursor refused (INVALID_CURSOR)", "re-syncing from zero");
			bills.clear();
			cursor = stored = undefined;
			page = 0;
			continue;
		}
		const { data } = expect(`sync page ${page}`, 200, r);

		for (const b of data.added)
			bills.set(b.bill_id, b);
		for (const b of data.modified)
			bills.set(b.bill_id, b);
		for (const b of data.removed)
			bills.delete(b.bill_id);
		say(`sync page ${page}`, `+${data.added.length} ~${data.modified.length}` +
		    ` -${data.removed.length}, has_more ${data.has_more}`);
		if (data.next_cursor !== null && data.next_cursor !== undefined)
			cursor = data.next_cursor;
		if (!data.has_more)
			return cursor;
		if (data.next_cursor === null || data.next_cursor === undefined)
			throw new Error(`sync page ${page}: has_more without a next_cursor`);
	}
	throw new Error("sync: more than 1000 pages");
}

const deadline = Number(process.env["BDS_TIMEOUT_MS"] ?? "60000");
const timer = setTimeout(() => {
	console.error(`quickstart: FAILED: still running after ${deadline} ms`);
	process.exit(1);
}, deadline);

main().then(() => {
	clearTimeout(timer);
	say("done");
	process.exit(0);
}, (e: unknown) => {
	console.error(`quickstart: FAILED: ${e instanceof Error ? e.message : String(e)}`);
	process.exit(1);
});
