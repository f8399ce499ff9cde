#ifndef BDS_BILLS_API_H
#define BDS_BILLS_API_H
/*
 * The bill read API (bills_api.c): GET /v1/bills, GET /v1/bills/{id} (API
 * key or the link's access token), GET /v1/bills/{id}/payments and
 * GET /v1/account-links/{link_id}/payments. Every bill shown is the stored
 * entity text (bills.entity, sql/016), sent as it is; every payment is
 * payments_json of its row.
 */
#include "core/validate.h"

struct req;
struct json_object;
struct db_stmt_set;

/* ---- handlers (lib/routes.c) ---- */
int	 bills_list(struct req *, struct json_object *);
int	 bills_get(struct req *, struct json_object *);
int	 bills_payments(struct req *, struct json_object *);
int	 bills_link_payments(struct req *, struct json_object *);

extern const struct vfield bills_list_query[], bills_payments_query[];

extern const struct db_stmt_set bills_api_stmt_set;

#endif
