/* verifySignature and parseSignatureHeader against signatures made here. */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { test } from "node:test";

import { parseSignatureHeader, verifySignature } from "../src/webhooks.js";

const secret = "whsec_test-secret-0123456789";
const body = '{"id":"evt_1","object":"event","type":"bill.created"}';
const now = 1800000000;

function sign(key: string, t: number, raw: string): string {
	return createHmac("sha256", key).update(`${t}.${raw}`).digest("hex");
}

test("a signature over <t>.<raw body> verifies", () => {
	const r = verifySignature(`t=${now},v1=${sign(secret, now, body)}`, body, secret, 300, now);

	assert.deepEqual(r, { ok: true, timestamp: now });
	assert.equal(verifySignature(`t=${now},v1=${sign(secret, now, body)}`, Buffer.from(body),
	    secret, 300, now).ok, true);
});

test("any v1 of a rotation's grace window verifies", () => {
	const h = `t=${now},v1=${sign("whsec_new-secret-000000", now, body)},v1=${sign(secret, now, body)}`;

	assert.equal(verifySignature(h, body, secret, 300, now).ok, true);
	assert.equal(verifySignature(h, body, "whsec_new-secret-000000", 300, now).ok, true);
	assert.equal(verifySignature(h, body, "whsec_other-secret-0000", 300, now).ok, false);
	/* node's req.headers: a header sent twice */
	assert.equal(verifySignature(h.split(/,(?=v1=)/), body, secret, 300, now).ok, true);
});

test("another body, secret or timestamp does not", () => {
	const h = `t=${now},v1=${sign(secret, now, body)}`;

	assert.equal(verifySignature(h, `${body} `, secret, 300, now).ok, false);
	assert.equal(verifySignature(h, body, `${secret}x`, 300, now).ok, false);
	assert.equal(verifySignature(`t=${now + 1},v1=${sign(secret, now, body)}`, body, secret, 300,
	    now).ok, false);
});

test("outside 5 minutes it is refused, inside accepted", () => {
	const h = `t=${now},v1=${sign(secret, now, body)}`;

	assert.equal(verifySignature(h, body, secret, 300, now + 300).ok, true);
	assert.equal(verifySignature(h, body, secret, 300, now - 300).ok, true);
	assert.match(verifySignature(h, body, secret, 300, now + 301).reason ?? "", /more than 300 s/);
	assert.equal(verifySignature(h, body, secret, 300, now - 301).ok, false);
});

test("malformed or missing headers are refused", () => {
	const v1 = sign(secret, now, body);

	for (const h of [undefined, "", "garbage", `v1=${v1}`, `t=${now}`, `t=abc,v1=${v1}`,
	    `t=${now},v1=${v1.slice(1)}`, `t=${now},v1=${v1}zz`, `t=${now};v1=${v1}`])
		assert.equal(verifySignature(h, body, secret, 300, now).ok, false, String(h));
	assert.deepEqual(parseSignatureHeader(`t=${now}, v1=${v1.toUpperCase()}`),
	    { t: now, v1: [v1] });
});
