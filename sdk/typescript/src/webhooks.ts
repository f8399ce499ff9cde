/*
 * Webhook signatures (SPEC "Delivery headers"): a delivery carries
 * `Service-Signature: t=<unix_ts>,v1=<hex>[,v1=<hex>...]`, the hex HMAC-SHA256
 * of `<unix_ts>.<raw body>` keyed by the endpoint's secret; one v1 per live
 * secret during a rotation's grace window. Accept when any v1 matches and
 * the timestamp is within the tolerance (5 minutes) of now.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export interface SignatureCheck {
	ok: boolean;
	/* why not, when ok is false */
	reason?: string;
	/* the signed timestamp (Unix seconds), when the header had one */
	timestamp?: number;
}

/* The header's timestamp and v1 signatures; null when it is malformed. */
export function parseSignatureHeader(header: string): { t: number; v1: string[] } | null {
	let t: number | undefined;
	const v1: string[] = [];

	for (const part of header.split(",")) {
		const eq = part.indexOf("=");

		if (eq < 0)
			return null;
		const key = part.slice(0, eq).trim(), value = part.slice(eq + 1).trim();

		if (key === "t") {
			if (!/^[0-9]{1,12}$/.test(value))
				return null;
			t = Number(value);
		} else if (key === "v1") {
			if (!/^[0-9a-f]{64}$/i.test(value))
				return null;
			v1.push(value.toLowerCase());
		}
	}
	return t === undefined || v1.length === 0 ? null : { t, v1 };
}

/*
 * Check a delivery: header is the Service-Signature value (as node's
 * req.headers gives it: a repeated header's values are joined), rawBody the
 * request body exactly as received (before any JSON parsing), secret the
 * endpoint's signing secret. toleranceSeconds defaults to 300; now (Unix
 * seconds) to the clock.
 */
export function verifySignature(header: string | string[] | undefined, rawBody: Buffer | string,
    secret: string, toleranceSeconds = 300, now = Math.floor(Date.now() / 1000)): SignatureCheck {
	const value = Array.isArray(header) ? header.join(",") : header;

	if (value === undefined || value === "")
		return { ok: false, reason: "no Service-Signature header" };
	const parsed = parseSignatureHeader(value);

	if (parsed === null)
		return { ok: false, reason: `malformed Service-Signature: ${value}` };
	if (Math.abs(now - parsed.t) > toleranceSeconds)
		return { ok: false, reason: `timestamp ${parsed.t} is more than ${toleranceSeconds} s from now (${now})`,
		    timestamp: parsed.t };
	const expected = createHmac("sha256", secret).update(`${parsed.t}.`)
	    .update(typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody).digest();

	for (const sig of parsed.v1)
		if (timingSafeEqual(expected, Buffer.from(sig, "hex")))
			return { ok: true, timestamp: parsed.t };
	return { ok: false, reason: "no v1 signature matches", timestamp: parsed.t };
}
