/*
 * libFuzzer target for URL parsing and canonicalisation (lib/core/urlsafe.c):
 * every URL the service calls comes from outside (webhook endpoints), and
 * the canonical form is what libcurl is handed.
 *
 * Input: the URL (a NUL ends it, as a C string does).
 *
 * Checked beyond "no crash, no leak, no undefined behaviour", for a URL
 * urlsafe_parse accepts:
 *   - the parts are what the header promises: scheme http or https, a port
 *     in 1..65535, a target starting with '/', a host with no upper case
 *     letter, an address host that inet_pton reads back;
 *   - the canonical URL parses again to the same parts and the same
 *     canonical URL (canonicalisation is idempotent), unless it grew past
 *     URLSAFE_URL_MAX (a short IPv4 form spelt out);
 *   - urlsafe_check without DNS agrees with the parse, and refuses exactly
 *     the address hosts urlsafe_classify does not call public.
 * A refused URL must come with a reason. A broken promise calls abort(),
 * which libFuzzer reports as a crash. Build and run with `scripts/fuzz
 * url`; see t/fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "core/arena.h"
#include "core/urlsafe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)	do { if (!(c)) abort(); } while (0)

static void
check_parts(const struct urlsafe_url *u)
{
	unsigned char addr[sizeof(struct in6_addr)];

	CHECK(strcmp(u->scheme, "http") == 0 || strcmp(u->scheme, "https") == 0);
	CHECK(u->port >= 1 && u->port <= 65535);
	CHECK(u->target != NULL && u->target[0] == '/');
	CHECK(u->host != NULL && u->host[0] != '\0');
	for (const char *p = u->host; *p != '\0'; p++)
		CHECK(!(*p >= 'A' && *p <= 'Z'));
	if (u->ip == 4)
		CHECK(inet_pton(AF_INET, u->host, addr) == 1);
	else if (u->ip == 6)
		CHECK(inet_pton(AF_INET6, u->host, addr) == 1);
	else
		CHECK(u->ip == 0);
	CHECK(u->canonical != NULL && strncmp(u->canonical, u->scheme, strlen(u->scheme)) == 0);
}

/* What urlsafe_check must say of u's host without DNS. */
static enum urlsafe_err
expected_check(const struct urlsafe_url *u)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (u->ip == 4 && inet_pton(AF_INET, u->host, &a4) == 1)
		return urlsafe_classify_v4(&a4) == URLSAFE_PUBLIC ? URLSAFE_OK : URLSAFE_REFUSED;
	if (u->ip == 6 && inet_pton(AF_INET6, u->host, &a6) == 1)
		return urlsafe_classify_v6(&a6) == URLSAFE_PUBLIC ? URLSAFE_OK : URLSAFE_REFUSED;
	return URLSAFE_OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct urlsafe_url u, again;
	struct urlsafe_target t;
	struct arena a;
	const char *why;
	enum urlsafe_err e;
	char *url;

	if (size > URLSAFE_URL_MAX + 64)
		return 0;
	if ((url = malloc(size + 1)) == NULL)
		return 0;
	memcpy(url, data, size);
	url[size] = '\0';
	arena_init(&a);

	e = urlsafe_parse(&a, url, &u, &why);
	CHECK(e < URLSAFE__MAX);
	if (e != URLSAFE_OK) {
		CHECK(why != NULL && why[0] != '\0');
		CHECK(e == URLSAFE_SYNTAX || e == URLSAFE_USERINFO || e == URLSAFE_HOST);
		goto out;
	}
	check_parts(&u);
	if (strlen(u.canonical) <= URLSAFE_URL_MAX) {
		CHECK(urlsafe_parse(&a, u.canonical, &again, &why) == URLSAFE_OK);
		CHECK(strcmp(again.canonical, u.canonical) == 0);
		CHECK(strcmp(again.host, u.host) == 0 && again.port == u.port &&
		    again.ip == u.ip && strcmp(again.target, u.target) == 0 &&
		    strcmp(again.scheme, u.scheme) == 0);
	}
	e = urlsafe_check(&a, url, URLSAFE_ALLOW_HTTP | URLSAFE_NO_RESOLVE, &t, &why);
	CHECK(e == expected_check(&u));
	CHECK(e == URLSAFE_OK || (why != NULL && why[0] != '\0'));
	if (e == URLSAFE_OK)
		CHECK(strcmp(t.url.canonical, u.canonical) == 0);
	/* https only: an http URL is refused for its scheme, nothing else */
	e = urlsafe_check(&a, url, URLSAFE_NO_RESOLVE | URLSAFE_ALLOW_PRIVATE, &t, &why);
	CHECK(e == (strcmp(u.scheme, "https") == 0 ? URLSAFE_OK : URLSAFE_SCHEME));
out:
	arena_free(&a);
	free(url);
	return 0;
}
