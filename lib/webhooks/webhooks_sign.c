/* The webhook wire format: secrets, envelope, signature, headers, one POST. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/crypto.h"
#include "core/json.h"
#include "core/urlsafe.h"
#include "events/events.h"
#include "webhooks/webhooks_sign.h"

/* Response bytes read before giving up on the body (the status is known). */
#define WEBHOOKS_BODY_MAX	65536

char *
webhooks_secret_new(struct arena *a)
{
	unsigned char raw[WEBHOOKS_SECRET_BYTES];
	char *s;

	crypto_random_bytes(raw, sizeof(raw));
	s = arena_printf(a, WEBHOOKS_SECRET_PREFIX "%s",
	    crypto_b64url_encode(a, raw, sizeof(raw)));
	sodium_memzero(raw, sizeof(raw));
	return s;
}

char *
webhooks_secret_seal(struct arena *a, const unsigned char key[32], const char *webhook_id,
    const char *secret)
{
	unsigned char *sealed;
	size_t slen;

	if ((sealed = crypto_seal(a, key, secret, strlen(secret), webhook_id, &slen)) == NULL)
		return NULL;
	return arena_printf(a, "\\x%s", crypto_hex_encode(a, sealed, slen));
}

char *
webhooks_secret_open(struct arena *a, const unsigned char key[32], const char *webhook_id,
    const char *bytea_text)
{
	unsigned char *raw, *sealed, *msg;
	size_t slen, mlen;

	if (bytea_text == NULL ||
	    (raw = PQunescapeBytea((const unsigned char *)bytea_text, &slen)) == NULL)
		return NULL;
	sealed = (unsigned char *)arena_memdup(a, raw, slen);
	PQfreemem(raw);
	if (crypto_open(a, key, sealed, slen, webhook_id, &msg, &mlen) != 0 ||
	    strlen((char *)msg) != mlen)
		return NULL;
	return (char *)msg;
}

/* HMAC-SHA256(secret, "<t>.<body>") into mac, streamed: no copy of the body. */
static void
mac_of(const char *secret, int64_t t, const char *body, size_t len, unsigned char mac[32])
{
	crypto_auth_hmacsha256_state st;
	char prefix[32];
	int plen = snprintf(prefix, sizeof(prefix), "%lld.", (long long)t);

	crypto_auth_hmacsha256_init(&st, (const unsigned char *)secret, strlen(secret));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)prefix, (unsigned long long)plen);
	if (len > 0)
		crypto_auth_hmacsha256_update(&st, (const unsigned char *)body, len);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

char *
webhooks_sign_v1(struct arena *a, const char *secret, int64_t t, const char *body, size_t len)
{
	unsigned char mac[32];

	mac_of(secret, t, body, len, mac);
	return crypto_hex_encode(a, mac, sizeof(mac));
}

char *
webhooks_signature(struct arena *a, int64_t t, const char *body, size_t len,
    const char *const secrets[], size_t n)
{
	char *h = arena_printf(a, "t=%lld", (long long)t);

	for (size_t i = 0; i < n; i++)
		h = arena_printf(a, "%s,v1=%s", h, webhooks_sign_v1(a, secrets[i], t, body, len));
	return h;
}

enum webhooks_verify
webhooks_verify(const char *header, const char *body, size_t len, const char *secret,
    int64_t now, int tolerance)
{
	unsigned char want[32], got[32];
	const char *p = header;
	long long t = -1;
	int nv1 = 0, match = 0;

	if (header == NULL)
		return WEBHOOKS_VERIFY_MALFORMED;
	/* first pass: t */
	while (*p != '\0') {
		size_t n = strcspn(p, ",");

		while (n > 0 && *p == ' ') {
			p++;
			n--;
		}
		if (n > 2 && strncmp(p, "t=", 2) == 0) {
			char *end;

			t = strtoll(p + 2, &end, 10);
			if (end != p + n || t < 0)
				return WEBHOOKS_VERIFY_MALFORMED;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	if (t < 0)
		return WEBHOOKS_VERIFY_MALFORMED;
	mac_of(secret, (int64_t)t, body, len, want);
	/* second pass: every v1 */
	for (p = header; *p != '\0';) {
		size_t n = strcspn(p, ",");

		while (n > 0 && *p == ' ') {
			p++;
			n--;
		}
		if (n == 3 + 64 && strncmp(p, "v1=", 3) == 0) {
			char hex[65];

			nv1++;
			memcpy(hex, p + 3, 64);
			hex[64] = '\0';
			if (crypto_hex_decode(hex, got, sizeof(got)) == 0 &&
			    crypto_ct_equal(got, want, sizeof(want)))
				match = 1;
		} else if (n >= 3 && strncmp(p, "v1=", 3) == 0) {
			nv1++;	/* malformed value: matches nothing */
		}
		p += n;
		if (*p == ',')
			p++;
	}
	if (nv1 == 0)
		return WEBHOOKS_VERIFY_MALFORMED;
	if (llabs((long long)now - t) > tolerance)
		return WEBHOOKS_VERIFY_STALE;
	return match ? WEBHOOKS_VERIFY_OK : WEBHOOKS_VERIFY_MISMATCH;
}

/* ------------------------------------------------------------------ */
/* The POST                                                            */

static void
slist_free(void *l)
{
	curl_slist_free_all(l);
}

/* Read and drop the response body; stop after WEBHOOKS_BODY_MAX bytes. */
static size_t
drop_body(char *p, size_t size, size_t nmemb, void *arg)
{
	struct webhooks_result *res = arg;
	size_t n = size * nmemb;

	if (res->received + n > WEBHOOKS_BODY_MAX)
		return 0;	/* CURLE_WRITE_ERROR; the status is already known */
	res->received += n;
	return n;
}

/* A header line "Name: value"; NULL when the value could break the line. */
static const char *
header_line(struct arena *a, const char *name, const char *value)
{
	for (const char *p = value; p != NULL && *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return NULL;
	return arena_printf(a, "%s: %s", name, value != NULL ? value : "");
}

size_t
webhooks_headers(struct arena *a, const struct events_wire *ev, const char *signature,
    const char *names[WEBHOOKS_HEADERS], const char *values[WEBHOOKS_HEADERS])
{
	char *iso = arena_alloc(a, TIME_ISO_SIZE);
	const char *v[WEBHOOKS_HEADERS] = {
		"application/json", ev->type, ev->id, time_iso(iso, ev->created_ms),
		ev->client_id, WEBHOOKS_SOURCE, signature, WEBHOOKS_USER_AGENT,
	};
	static const char *const n[WEBHOOKS_HEADERS] = {
		"Content-Type", "X-Webhook-Event-Type", "X-Webhook-Id", "X-Webhook-Timestamp",
		"X-Webhook-Client-Id", "X-Webhook-Source", "Service-Signature", "User-Agent",
	};

	for (size_t i = 0; i < WEBHOOKS_HEADERS; i++) {
		names[i] = n[i];
		values[i] = v[i] != NULL ? v[i] : "";
	}
	return WEBHOOKS_HEADERS;
}

int
webhooks_request(CURL *c, struct arena *a, const struct urlsafe_target *t,
    const struct events_wire *ev, const char *body, size_t len, const char *signature,
    struct webhooks_result *res)
{
	const char *names[WEBHOOKS_HEADERS], *values[WEBHOOKS_HEADERS], *line;
	struct curl_slist *h = NULL, *n;
	size_t nh = webhooks_headers(a, ev, signature, names, values);

	memset(res, 0, sizeof(*res));
	/* User-Agent goes as CURLOPT_USERAGENT; no 100-continue round trip */
	for (size_t i = 0; i <= nh; i++) {
		if (i < nh && strcmp(names[i], "User-Agent") == 0)
			continue;
		line = i < nh ? header_line(a, names[i], values[i]) : "Expect:";
		if (line == NULL || (n = curl_slist_append(h, line)) == NULL) {
			curl_slist_free_all(h);
			return -1;
		}
		h = n;
	}
	arena_defer(a, slist_free, h);
	if (urlsafe_curl_pin(c, a, t) != 0 ||
	    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_POST, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_USERAGENT, WEBHOOKS_USER_AGENT) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)WEBHOOKS_TIMEOUT_MS) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)WEBHOOKS_TIMEOUT_MS) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, drop_body) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEDATA, res) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, res->errbuf) != CURLE_OK)
		return -1;
	return 0;
}

void
webhooks_result_finish(CURL *c, int cc, struct webhooks_result *res)
{
	curl_off_t us = 0;
	long code = 0;

	res->curl_code = cc;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (curl_easy_getinfo(c, CURLINFO_TOTAL_TIME_T, &us) == CURLE_OK)
		res->latency_ms = (long long)us / 1000;
	/* a status line counts even when the body was cut short */
	res->status = code >= 100 && code <= 999 ? code : 0;
	res->error = res->status == 0 ? webhooks_transport_error(cc) : NULL;
	if (res->status == 0 && res->errbuf[0] == '\0')
		snprintf(res->errbuf, sizeof(res->errbuf), "%s",
		    curl_easy_strerror((CURLcode)cc));
}

const char *
webhooks_transport_error(int cc)
{
	switch ((CURLcode)cc) {
	case CURLE_OK:
		return "no HTTP response";
	case CURLE_COULDNT_RESOLVE_HOST:
		return "could not resolve the host";
	case CURLE_COULDNT_CONNECT:
		return "could not connect to the endpoint";
	case CURLE_OPERATION_TIMEDOUT:
		return "no response within 10 seconds";
	case CURLE_PEER_FAILED_VERIFICATION:
		return "TLS certificate verification failed";
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_USE_SSL_FAILED:
		return "TLS handshake failed";
	case CURLE_GOT_NOTHING:
		return "the endpoint closed the connection without answering";
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
		return "the connection failed while sending or receiving";
	case CURLE_WEIRD_SERVER_REPLY:
		return "the endpoint's answer is not HTTP";
	default:
		return "the request failed";
	}
}
