/* Match a decoded path against the static route table. */
#include <string.h>

#include "core/arena.h"
#include "core/router.h"

static int
is_capture(const char *seg, size_t len)
{
	return (len >= 3 && seg[0] == '{' && seg[len - 1] == '}') ||
	    (len >= 2 && seg[0] == ':');
}

/*
 * Compare pattern and path segment by segment. On a match fill captures
 * (when m is not NULL) and return 1.
 */
static int
pattern_match(const char *pat, const char *path, struct arena *a, struct route_match *m)
{
	size_t ncaps = 0;

	for (;;) {
		size_t plen, slen;

		if (*pat != '/' || *path != '/')
			return 0;
		pat++;
		path++;
		plen = strcspn(pat, "/");
		slen = strcspn(path, "/");
		if (slen == 0)
			return 0;	/* empty segment: "//" or a trailing "/" */
		if (is_capture(pat, plen)) {
			if (ncaps == ROUTER_MAX_CAPS)
				return 0;
			if (m != NULL) {
				size_t off = 1;
				size_t nlen = pat[0] == '{' ? plen - 2 : plen - 1;

				m->cap_names[ncaps] = arena_strndup(a, pat + off, nlen);
				m->caps[ncaps] = arena_strndup(a, path, slen);
			}
			ncaps++;
		} else if (plen != slen || memcmp(pat, path, plen) != 0) {
			return 0;
		}
		pat += plen;
		path += slen;
		if (*pat == '\0' && *path == '\0')
			break;
	}
	if (m != NULL)
		m->ncaps = ncaps;
	return 1;
}

int
router_match(const struct route *table, size_t n, enum http_method method,
    const char *path, struct arena *a, struct route_match *m)
{
	const struct route *hit = NULL;
	unsigned allowed = 0;

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n; i++) {
		if (!pattern_match(table[i].pattern, path, NULL, NULL))
			continue;
		if (table[i].method == method) {
			hit = &table[i];
			break;
		}
		allowed |= 1u << table[i].method;
	}
	if (hit != NULL) {
		pattern_match(hit->pattern, path, a, m);
		m->route = hit;
		return 0;
	}
	if (allowed == 0)
		return 404;
	for (int k = 0; k < M__MAX; k++) {
		if (!(allowed & (1u << k)))
			continue;
		if (m->allow[0] != '\0')
			strcat(m->allow, ", ");
		strcat(m->allow, http_method_name((enum http_method)k));
	}
	return 405;
}

const char *
router_cap(const struct route_match *m, const char *name)
{
	for (size_t i = 0; i < m->ncaps; i++)
		if (strcmp(m->cap_names[i], name) == 0)
			return m->caps[i];
	return NULL;
}

const char *
router_header_missing(const struct route *rt, const struct http_req *h)
{
	if ((rt->flags & ROUTE_IDEM_REQUIRED) && h->idempotency_key == NULL)
		return "Idempotency-Key";
	if ((rt->flags & ROUTE_USER_HEADER) && h->client_user_id == NULL)
		return "X-Client-User-Id";
	return NULL;
}
