/* Small request-context helpers. */
#include "arena.h"
#include "req.h"

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
