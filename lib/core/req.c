/* Small request-context helpers. */
#include <string.h>

#include "core/arena.h"
#include "core/crypto.h"
#include "core/req.h"

void
req_header_add(struct req *r, const char *name, const char *value)
{
	if (r->nheaders == REQ_MAX_HEADERS)
		return;
	r->headers[r->nheaders].key = arena_strdup(r->arena, name);
	r->headers[r->nheaders].val = arena_strdup(r->arena, value);
	r->nheaders++;
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
	r->http.request_id = request_id;
}

void
req_init_operator(struct req *r, const struct config *cfg, struct db *d, struct arena *a)
{
	req_init(r, cfg, d, a, arena_printf(a, "bdsctl-%s", crypto_id_new(a, "req") + 4));
}
