#ifndef BDS_MESSAGES_H
#define BDS_MESSAGES_H
/*
 * Customer messages (SPEC "Customer message"): a client sends its end user
 * (customer_user_aid) a message on behalf of a biller of the catalog. A
 * message is accepted (customer.message.created) unless the end user is on
 * the client's suppression list, or has not consented to the message's
 * category (marketing is opt-in, account updates opt-out): then it is
 * stored as suppressed, with its reason, and no event. A complaint about a
 * message suppresses its end user and revokes marketing consent
 * (customer.message.complaint, once per message). Every row is the
 * client's and the key's environment's; docs/messages.md has the rules.
 */
#include "core/module.h"
#include "core/validate.h"

struct db_stmt_set;
struct json_object;
struct req;

#define MESSAGES_SUBJECT_MAX	140	/* code points (SPEC "Limits") */
#define MESSAGES_BODY_MAX	2048
#define MESSAGES_METADATA_MAX	4096	/* bytes of metadata as JSON text */
#define MESSAGES_AID_MAX	255
#define MESSAGES_REASON_MAX	255
#define MESSAGES_LIMIT_DEFAULT	25	/* items per page */
#define MESSAGES_LIMIT_MAX	100

/* ---- handlers (lib/routes.c) ---- */
int	 messages_create(struct req *, struct json_object *);
int	 messages_list(struct req *, struct json_object *);
int	 messages_get(struct req *, struct json_object *);
int	 messages_complaint(struct req *, struct json_object *);
int	 messages_suppressions_list(struct req *, struct json_object *);
int	 messages_suppressions_create(struct req *, struct json_object *);
int	 messages_suppressions_get(struct req *, struct json_object *);
int	 messages_suppressions_delete(struct req *, struct json_object *);
int	 messages_consents_get(struct req *, struct json_object *);
int	 messages_consents_put(struct req *, struct json_object *);

extern const struct vfield messages_create_fields[], messages_list_query[],
    messages_complaint_fields[], messages_suppressions_list_query[],
    messages_suppressions_create_fields[], messages_consents_fields[];

/*
 * Metering's messages_sent is read from the rows, not counted
 * (messages_usage.c): the SQL function customer_messages_sent(client,
 * environment or NULL, from day, to day) (sql/130_messages.sql) answers
 * (day, environment, value) for every UTC day with accepted messages.
 */
extern const struct module_usage messages_usage[];

extern const struct db_stmt_set messages_stmt_set, messages_usage_stmt_set;

/* The module (messages_module.c). */
extern const struct module messages_module;

#endif
