#ifndef BDS_MESSAGES_INT_H
#define BDS_MESSAGES_INT_H
/*
 * Inside lib/messages/: the rows (messages_store.c, the module's only SQL)
 * as the handlers (messages_api.c) call them. Every call is the
 * credential's: r->client_id and r->env. The lookups answer 1 found, 0
 * none, -1 a database failure; a JSON out is arena-owned.
 */
struct json_object;
struct pg_result;
struct req;

/* A message to store: the declared body's fields (metadata: JSON text or NULL). */
struct msg_new {
	const char	*id, *user, *biller, *category, *subject, *body, *metadata;
};

/*
 * Store m, accepted or suppressed as the suppression list and the user's
 * consents say, and emit customer.message.created when accepted: 1
 * accepted, 0 suppressed, -1 failure; *entity the message as the API shows
 * it.
 */
int	 msg_insert(struct req *, const struct msg_new *m, struct json_object **entity);
int	 msg_get(struct req *, const char *id, struct json_object **entity);
/*
 * A page of messages: p[0..5] the filters (user, biller, category,
 * delivery status, created after, created before; NULL: any), p[6] p[7]
 * the position to start below, p[8] the page size + 1. Rows: id, position,
 * entity. NULL on failure.
 */
struct pg_result *msg_page(struct req *, const char *const p[9]);

/* A complaint about message id (reason when it is the first). */
struct msg_complaint {
	const char	*user, *reason, *created_at;
};
/*
 * The first complaint of a message suppresses its user (an entry already
 * there is kept), revokes the user's marketing consent and emits
 * customer.message.complaint: 1. A later one changes nothing: 2 with the
 * first's c. 0 no such message, -1 failure.
 */
int	 msg_complain(struct req *, const char *id, const char *reason,
	    struct msg_complaint *c);

/* Suppressions: add (1 added, 2 there already: *entity the one kept). */
int	 msg_suppression_add(struct req *, const char *user, const char *reason,
	    struct json_object **entity);
int	 msg_suppression_get(struct req *, const char *user, struct json_object **entity);
int	 msg_suppression_delete(struct req *, const char *user);
/* p[0] p[1] the position to start below, p[2] the page size + 1. Rows:
 * user, position, entity. */
struct pg_result *msg_suppression_page(struct req *, const char *const p[3]);

/* Consents: the user's (the defaults without a row); set: marketing and
 * account_update "true", "false" or NULL (kept). */
int	 msg_consents_get(struct req *, const char *user, struct json_object **entity);
int	 msg_consents_set(struct req *, const char *user, const char *marketing,
	    const char *account_update, struct json_object **entity);

#endif
