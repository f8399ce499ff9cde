/*
 * The Bill Data Service client: openapi-fetch typed by src/schema.d.ts, which
 * `npm run generate` writes from docs/openapi.yaml with openapi-typescript.
 * Every path, parameter, body and response type comes from the document;
 * nothing here builds a request by hand.
 */
import createOpenapiFetch from "openapi-fetch";
import type { Client, ClientOptions } from "openapi-fetch";

import type { components, operations, paths, webhooks } from "./schema.js";

export type { components, operations, paths, webhooks };
export type { Client, ClientOptions } from "openapi-fetch";
/* A named schema of the document: Schema<"Bill">. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];
/* The typed client: client.GET("/v1/bills", { params: { query: { limit: 10 } } }). */
export type BdsClient = Client<paths>;

export interface BdsClientOptions extends ClientOptions {
	/* The host to talk to, without a trailing slash: the api host
	 * (https://api.bds.example) or the sandbox host
	 * (https://sandbox.bds.example). */
	baseUrl: string;
	/* Sent as `Authorization: Bearer <token>`: an API key (client secret)
	 * or a developer access token. */
	token?: string;
}

/*
 * A typed client for one host. token, when given, authenticates every
 * call (a middleware sets the header on each request); pass headers per
 * call for anything else (Idempotency-Key).
 */
export function createClient(options: BdsClientOptions): BdsClient {
	const { token, ...rest } = options;
	const client = createOpenapiFetch<paths>(rest);

	if (token !== undefined)
		client.use({
			onRequest({ request }) {
				request.headers.set("Authorization", `Bearer ${token}`);
				return request;
			},
		});
	return client;
}

export { verifySignature, parseSignatureHeader } from "./webhooks.js";
export type { SignatureCheck } from "./webhooks.js";
