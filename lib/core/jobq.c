/* Queueing bds-jobs work. See jobq.h. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "core/crypto.h"
#include "core/db.h"
#include "core/jobq.h"
#include "core/req.h"

enum jobq_stmt {
	JOBQ_ADD,
	JOBQ__MAX
};

static struct db_stmt stmts[JOBQ__MAX] = {
	[JOBQ_ADD] = { "jobq_add",
	    "INSERT INTO jobs (id, kind, client_id, environment, subject_id, payload,"
	    "                  next_attempt_at, request_id, idempotency_key)"
	    " VALUES ($1, $2, $3, $4, $5, $6::jsonb,"
	    "         now() + make_interval(secs => $7::int), $8, $9)"
	    " ON CONFLICT (kind, subject_id) WHERE status = 'pending' DO NOTHING", 0 },
};

const struct db_stmt_set jobq_stmt_set = { "jobq", stmts, JOBQ__MAX };

int
jobq_add(struct req *r, const char *kind, const char *client_id,
    const char *environment, const char *subject_id, struct json_object *payload,
    int delay_s)
{
	char delay[16];
	const char *p[9];

	snprintf(delay, sizeof(delay), "%d", delay_s < 0 ? 0 : delay_s);
	p[0] = crypto_id_new(r->arena, "job");
	p[1] = kind;
	p[2] = client_id;
	p[3] = environment;
	p[4] = subject_id != NULL ? subject_id : "";
	p[5] = payload != NULL ? json_object_to_json_string_ext(payload,
	    JSON_C_TO_STRING_PLAIN) : "{}";
	p[6] = delay;
	/* the originating request, which the job's events name; none for a
	 * scheduler's sweep */
	p[7] = r->http.request_id != NULL && strcmp(r->http.request_id, REQ_ID_SWEEP) != 0 ?
	    r->http.request_id : NULL;
	p[8] = r->http.idempotency_key;
	return db_exec(r->db, r->arena, &stmts[JOBQ_ADD], 9, p) == NULL ? -1 : 0;
}
