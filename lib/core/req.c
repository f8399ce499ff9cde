/* Small request-context helpers. */
#include <string.h>
#include <strings.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/req.h"

void
req_header_add(struct req *r, const char *name, const char *value)
{
	size_t i;

	for (i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].key, name) == 0 &&
		    strcasecmp(name, "Set-Cookie") != 0)
			break;
	if (i == REQ_MAX_HEADERS)
		return;
	if (i == r->nheaders) {
		r->headers[i].key = arena_strdup(r->arena, name);
		r->nheaders++;
	}
	r->headers[i].val = arena_strdup(r->arena, value);
}

const char *
req_cap(const struct req *r, const char *name)
{
	return router_cap(&r->match, name);
}

const char *
req_owner(struct req *r)
{
	if (r->client_id != NULL && r->env != NULL)
		return arena_printf(r->arena, "%s/%s", r->client_id, r->env);
	return r->user_id;
}

void
req_init(struct req *r, const struct config *cfg, struct db *d, struct arena *a,
    const char *request_id)
{
	memset(r, 0, sizeof(*r));
	r->arena = a;
	r->cfg = cfg;
	r->db = d;
	r->db_primary = d;
	r->http.request_id = request_id;
}

void
req_init_operator(struct req *r, const struct config *cfg, struct db *d, struct arena *a)
{
	req_init(r, cfg, d, a, arena_printf(a, "bdsctl-%s", crypto_id_new(a, "req") + 4));
}
