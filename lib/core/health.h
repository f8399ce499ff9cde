#ifndef BDS_HEALTH_H
#define BDS_HEALTH_H
/* Process and database state for load balancers and operators. */
struct req;
struct json_object;
struct db_stmt_set;

/* GET /v1/health: 200 when the worker reaches the database, else 503. */
int	 health_get(struct req *, struct json_object *out);
/* GET /v1/health/live: 200 while the process serves, no database. */
int	 health_live(struct req *, struct json_object *out);

extern const struct db_stmt_set health_stmt_set;

#endif
