#ifndef BDS_ROUTER_H
#define BDS_ROUTER_H
/*
 * Static route table matching. Patterns are "/"-separated literal segments
 * and captures written "{name}" or ":name". A path that matches some
 * pattern with another method is 405 (with Allow); no pattern at all, 404.
 */
#include <stddef.h>
#include <stdio.h>
#include "core/http.h"

struct arena;
struct req;
struct json_object;
struct vfield;

/* auth kinds, combinable: the route accepts any of those set */
#define AUTH_NONE	0x00u
#define AUTH_JWT	0x01u
#define AUTH_KEY	0x02u
/* token kinds: bearer tokens resolved through routes_tokens (below) */
#define AUTH_LINK	0x04u	/* a link access token */
#define AUTH_PAYTOKEN	0x08u	/* a pay token */

/*
 * Route flags: policy the dispatcher carries out, so handlers hold only
 * their own logic (redis's CMD_WRITE habit). The error envelope is chosen
 * by path (errors_iam_path), not by a flag, so an unknown /v1/iam path
 * answers in the /v1/iam envelope too.
 */
#define ROUTE_SANDBOX	0x02u	/* only on the sandbox host; 404 elsewhere */
#define ROUTE_LIVE	0x04u	/* only on the live host; 404 elsewhere */
#define ROUTE_ANY_BODY	0x08u	/* body: any JSON object, unvalidated (the handler
				 * owns its shape); no body is {} */
#define ROUTE_TX	0x10u	/* runs in a transaction: begin, handler, commit when
				 * the status is below 400, else roll back */
#define ROUTE_IDEM	0x20u	/* ROUTE_TX, and an Idempotency-Key is claimed under
				 * the principal's owner scope: a retry with the same
				 * body answers the stored status and body */
#define ROUTE_ONCE	0x40u	/* ROUTE_TX, and an Idempotency-Key is claimed but the
				 * answer (a secret shown once) is not stored: a retry
				 * is 409 IDEMPOTENCY_KEY_NOT_REPLAYABLE */
#define ROUTE_RESIGNIN	0x80u	/* a missing or invalid credential answers 401
				 * NEEDS_RESIGNIN (the spec's "no portal session"
				 * on billers/{id} and links/{id}) */
#define ROUTE_CORS	0x100u	/* browsers of allowed origins may call it: OPTIONS
				 * preflight answered, Access-Control-Allow-Origin
				 * echoed when routes_cors_allow() says so */
#define ROUTE_IDEM_REQUIRED 0x200u /* with ROUTE_IDEM or ROUTE_ONCE: the
				 * Idempotency-Key header must be sent (400
				 * VALIDATION_ERROR naming it, after the declared
				 * input is checked and before the handler runs) */
#define ROUTE_USER_HEADER 0x400u /* the X-Client-User-Id header must be sent
				 * (400 VALIDATION_ERROR naming it, likewise) */
/* Bearers the handler resolves itself (the dispatcher does not): declared
 * so the table says who may call (bds-api --routes, the OpenAPI parity) */
#define ROUTE_LINK_TOKEN 0x800u	/* a link token (lt_...) */
#define ROUTE_SESSION_TOKEN 0x1000u /* a connect session token, or the link token */
#define ROUTE_IDEM_BODY	0x2000u	/* with ROUTE_IDEM: the body member idempotency_key
				 * is the key when no header is sent (a header and
				 * a different member: 400 naming the member) */
#define ROUTE_SECRET_BODY 0x4000u /* the body holds a card: when the request
				 * ends, whatever it answered, its bytes and every
				 * string parsed from it are wiped */
#define ROUTE_READ	0x8000u	/* reads only: the handler may run on the standby
				 * (db.read_url) once it has caught up with the
				 * primary (dispatch.c); a write it must make goes
				 * to r->db_primary */

typedef int (*route_handler)(struct req *, struct json_object *out);

struct route {
	enum http_method	 method;
	const char		*pattern;
	unsigned		 auth;
	const struct vfield	*body;		/* body spec, or NULL: no body accepted */
	const struct vfield	*query;		/* query spec, or NULL: no query accepted */
	route_handler		 handler;
	unsigned		 flags;
};

#define ROUTER_MAX_CAPS 8

struct route_match {
	const struct route	*route;
	size_t			 ncaps;
	const char		*cap_names[ROUTER_MAX_CAPS];
	const char		*caps[ROUTER_MAX_CAPS];	/* arena strings */
	char			 allow[64];	/* "GET, POST" on 405 */
};

/* 0 matched, 404 no such path, 405 wrong method (m->allow filled). */
int	 router_match(const struct route *table, size_t n, enum http_method,
	    const char *path, struct arena *, struct route_match *m);
/* The capture named name (without braces), or NULL. */
const char *router_cap(const struct route_match *, const char *name);
/*
 * The table for operators and for the document's parity check. Text: one
 * line per route, tab-separated: method, pattern, the schemes it takes
 * (developerJwt, apiKey, linkAccessToken, payToken, linkToken,
 * sessionToken, or none) joined by commas, its flags by name (or -).
 * json: an array of {method, pattern, auth[], flags[], body, query}, body
 * and query the JSON Schemas of the declared input (validate_schema) or
 * null when none is accepted; a body's client_id that the dispatcher takes
 * (router_body_client_id) is in its schema, marked "x-dispatcher": true.
 */
void	 router_print(FILE *, const struct route *table, size_t n, int json);
/*
 * Authentication rule 2: a KEY route that takes a body (POST, PUT, PATCH)
 * accepts a body member client_id, router_client_id_field: the credential's
 * client is ignored, another is 403 CLIENT_ID_MISMATCH. The dispatcher
 * applies it to every such route, so the routes' own tables never declare
 * client_id; the --routes --json body schemas include it.
 */
int	 router_body_client_id(const struct route *rt);
extern const struct vfield *const router_client_id_field;	/* {NULL}-terminated */

/* The header rt requires (ROUTE_IDEM_REQUIRED, ROUTE_USER_HEADER) that h
 * lacks, named as a client sends it; NULL when none is missing. */
const char *router_header_missing(const struct route *rt, const struct http_req *h);

/* The application's table (lib/routes.c). */
extern const struct route routes[];
extern const size_t routes_count;
/* Whether origin may read the answer of a ROUTE_CORS route (lib/routes.c
 * names the module's function); r->client_id is NULL when not yet known. */
extern int (*const routes_cors_allow)(struct req *, const char *origin);
/*
 * The bearer tokens of the token kinds (every auth kind but AUTH_JWT and
 * AUTH_KEY), one row each in lib/routes.c: a token starting with prefix is
 * resolved, on a route taking kind, by resolve (the owning module's
 * function): 0 with the principal set (r->client_id, r->env, and what the
 * kind adds, e.g. r->link_id), else the 401/503 written. A row whose
 * resolve is NULL declares a kind whose module is not there yet: its
 * tokens answer 401 UNAUTHORIZED.
 */
struct route_token {
	const char	*prefix;	/* "bds_lat_" */
	unsigned	 kind;		/* one AUTH_ bit */
	int		(*resolve)(struct req *, const char *token);
};
extern const struct route_token routes_tokens[];
extern const size_t routes_tokens_count;

#endif
