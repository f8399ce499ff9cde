/* bds-deliver's webhook queue: claim, sign, send concurrently, record. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/json.h"
#include "core/log.h"
#include "core/queue.h"
#include "core/urlsafe.h"
#include "webhooks/webhooks.h"
#include "webhooks/webhooks_deliver.h"
#include "webhooks/webhooks_sign.h"

enum {
	WD_CLAIM,
	WD_RECORD,
	WD_DISABLE,
	WD__MAX
};

/* Columns of the claim, after the queue's id, attempts, kind (= type). */
enum {
	WD_COL_CLIENT = QUEUE_COL__MAX,
	WD_COL_EVENT,
	WD_COL_WEBHOOK,
	WD_COL_URL,
	WD_COL_WH_ENV,
	WD_COL_ENABLED,
	WD_COL_SECRET,
	WD_COL_PREVIOUS,	/* NULL unless inside its grace window */
	WD_COL_MODE,
	WD_COL_DATA,
	WD_COL_REQUEST,
	WD_COL_IDEM,
	WD_COL_CREATED,		/* epoch milliseconds */
	WD_COL_API_VERSION,
	WD_COL_PRODUCER,
	WD_COL_CORRELATION,
	WD_COL__MAX
};
/* Columns of the record: the batch index of each row still ours. */
enum { WD_REC_IDX, WD_REC__MAX };

static struct db_stmt stmts[WD__MAX] = {
	/*
	 * SKIP LOCKED: concurrent deliverers take disjoint rows; the lease
	 * keeps a claimed row from the next claim until it is recorded, and
	 * a killed deliverer's rows come back once it ends. attempts counts
	 * claims: it is the number of the attempt about to be made.
	 */
	[WD_CLAIM] = { "webhooks_deliver_claim",
	    "WITH due AS ("
	    " SELECT client_id, id FROM deliveries"
	    "  WHERE status = 'pending' AND next_attempt_at <= now()"
	    "    AND (lease_until IS NULL OR lease_until < now())"
	    "  ORDER BY next_attempt_at, id LIMIT $1::int"
	    "  FOR UPDATE SKIP LOCKED),"
	    " claimed AS ("
	    " UPDATE deliveries d"
	    "    SET lease_until = now() + make_interval(secs => $2::int),"
	    "        attempts = d.attempts + 1"
	    "   FROM due WHERE d.client_id = due.client_id AND d.id = due.id"
	    " RETURNING d.client_id, d.id, d.attempts, d.event_id, d.webhook_id,"
	    "           d.next_attempt_at)"
	    " SELECT c.id, c.attempts, e.type, c.client_id, c.event_id, c.webhook_id,"
	    "        w.url, w.environment, w.enabled, w.secret,"
	    "        CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END,"
	    "        e.environment, e.data::text, e.request_id, e.idempotency_key,"
	    "        floor(extract(epoch FROM e.created_at) * 1000)::bigint, e.api_version,"
	    "        e.producer_service, e.correlation_id"
	    "   FROM claimed c"
	    "   JOIN events e ON e.client_id = c.client_id AND e.id = c.event_id"
	    "   JOIN webhooks w ON w.client_id = c.client_id AND w.id = c.webhook_id"
	    "  ORDER BY c.next_attempt_at, c.id", 0 },
	/*
	 * A whole batch in one round trip. Each row is recorded only while
	 * the claim is still ours (same attempt, still pending): a deliverer
	 * whose lease ran out records nothing. A row not tried (released,
	 * or failed because its subscription is disabled) gives its attempt
	 * back and writes no attempt log.
	 */
	[WD_RECORD] = { "webhooks_deliver_record",
	    "WITH r AS ("
	    " SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[],"
	    "                      $5::bigint[], $6::int[], $7::bigint[], $8::int[],"
	    "                      $9::int[], $10::text[]) WITH ORDINALITY"
	    "   AS r(client_id, id, attempt, outcome, delay_ms, tried, at_ms,"
	    "        status_code, latency_ms, error, idx)),"
	    " u AS ("
	    " UPDATE deliveries d"
	    "    SET status = CASE r.outcome WHEN 'sent' THEN 'succeeded'"
	    "                 WHEN 'failed' THEN 'failed' ELSE 'pending' END,"
	    "        attempts = d.attempts - (1 - r.tried),"
	    "        next_attempt_at = CASE WHEN r.outcome = 'retry'"
	    "            THEN now() + r.delay_ms * interval '1 millisecond'"
	    "            ELSE d.next_attempt_at END,"
	    "        lease_until = NULL,"
	    "        last_status_code = CASE WHEN r.tried = 1 THEN r.status_code"
	    "            ELSE d.last_status_code END,"
	    "        last_error = CASE WHEN r.outcome = 'released' THEN d.last_error"
	    "            ELSE r.error END,"
	    "        updated_at = now()"
	    "   FROM r"
	    "  WHERE d.client_id = r.client_id AND d.id = r.id"
	    "    AND d.attempts = r.attempt AND d.status = 'pending'"
	    " RETURNING r.*),"
	    " a AS ("
	    " INSERT INTO delivery_attempts (client_id, delivery_id, attempt, attempted_at,"
	    "                                status_code, latency_ms, error)"
	    " SELECT client_id, id, attempt, to_timestamp(at_ms / 1000.0), status_code,"
	    "        latency_ms, error FROM u WHERE tried = 1)"
	    " SELECT idx FROM u", 0 },
	/* 410 Gone: the endpoint says it is gone for good. */
	[WD_DISABLE] = { "webhooks_deliver_disable",
	    "UPDATE webhooks SET enabled = false, disabled_reason = $3, updated_at = now()"
	    " WHERE client_id = $1 AND id = $2 AND enabled", 0 },
};
const struct db_stmt_set webhooks_deliver_stmt_set = { "webhook_deliver", stmts, WD__MAX };

#define WD_JITTER_PCT		10
#define WD_SCHEDULE_MAX		32
#define WD_CONCURRENCY_MAX	1024
#define WD_BATCH_MAX		10000
/* a claim must outlive one request and the margin the engine keeps */
#define WD_LEASE_MIN		(WEBHOOKS_TIMEOUT_MS / 1000 + 5)
/* seconds a request needs before its lease ends to be started */
#define WD_NEED			(WEBHOOKS_TIMEOUT_MS / 1000 + 2)
#define WD_GONE_REASON		"the endpoint answered 410 Gone"
#define WD_DISABLED_ERROR	"the subscription is disabled"

struct wsender {
	const struct config *cfg;
	int		 schedule[WD_SCHEDULE_MAX];
	int		 conc;
	CURLM		*multi;
	CURL		**idle;		/* conc easy handles, reused */
	size_t		 nidle;
};

/* One attempt (queue_job.priv). */
struct wjob {
	struct queue_job *job;
	CURL		*c;
	struct webhooks_result res;
	struct events_wire ev;
	struct urlsafe_target t;
	long long	 at_ms;		/* wall clock when it started */
	int		 tried;		/* an attempt to log (even refused: status 0) */
	int		 gone;		/* 410: disable the subscription */
	const char	*inbox_body;	/* an inbox's: what to keep (webhooks_inbox.c) */
	const char	*inbox_sig;
};

/* A URL checked once per batch (DNS answers once per batch too). */
struct urlcheck {
	const char	*url;
	unsigned	 flags;
	enum urlsafe_err rc;
	const char	*why;
	struct urlsafe_target t;
};

static long long
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
webhooks_schedule_parse(const char *text, int *out, size_t max)
{
	const char *p = text;
	size_t n = 0;

	if (text == NULL || *text == '\0')
		return -1;
	for (;;) {
		char *end;
		long v;

		while (*p == ' ')
			p++;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno != 0 || end == p || v < 1 || v > 86400 || n == max)
			return -1;
		out[n++] = (int)v;
		p = end;
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		if (*p++ != ',')
			return -1;
	}
	return (int)n;
}

/* ------------------------------------------------------------------ */
/* Sending                                                             */

static const char *
col(const struct queue_batch *b, const struct queue_job *j, int c)
{
	return PQgetisnull(b->res, j->row, c) ? NULL : PQgetvalue(b->res, j->row, c);
}

static const struct urlsafe_target *
url_check(struct queue_batch *b, struct urlcheck *cache, size_t *ncache,
    const char *url, unsigned flags, const char **why)
{
	struct urlcheck *u = NULL;

	for (size_t i = 0; i < *ncache; i++)
		if (cache[i].flags == flags && strcmp(cache[i].url, url) == 0)
			u = &cache[i];
	if (u == NULL) {
		u = &cache[(*ncache)++];
		u->url = url;
		u->flags = flags;
		u->why = NULL;
		u->rc = urlsafe_check(b->arena, url, flags, &u->t, &u->why);
	}
	*why = u->why != NULL ? u->why : "the URL is not allowed";
	return u->rc == URLSAFE_OK ? &u->t : NULL;
}

/*
 * Prepare j's attempt; 1 when its request went into the multi handle, 0
 * when the job already has its outcome (disabled, refused, unusable).
 */
static int
start(struct wsender *w, struct queue_batch *b, struct queue_job *j,
    struct urlcheck *cache, size_t *ncache)
{
	const struct config *cfg = w->cfg;
	const char *secrets[WEBHOOKS_MAX_SECRETS], *why, *body, *sig, *data, *wh;
	const struct urlsafe_target *t;
	struct wjob *x = arena_alloc(b->arena, sizeof(*x));
	unsigned flags = 0;
	size_t len, nsec = 0;

	memset(x, 0, sizeof(*x));
	x->job = j;
	j->priv = x;
	x->at_ms = wall_ms();
	wh = col(b, j, WD_COL_WEBHOOK);
	if (strcmp(PQgetvalue(b->res, j->row, WD_COL_ENABLED), "t") != 0) {
		/* not an attempt: nothing is sent to a disabled subscription */
		j->outcome = QUEUE_FAILED;
		j->error = WD_DISABLED_ERROR;
		return 0;
	}
	x->tried = 1;
	j->outcome = QUEUE_RETRY;
	for (int c = WD_COL_SECRET; c <= WD_COL_PREVIOUS; c++) {
		const char *s;

		if (PQgetisnull(b->res, j->row, c))
			continue;
		if ((s = webhooks_secret_open(b->arena, cfg->secret_key, wh,
		    PQgetvalue(b->res, j->row, c))) == NULL) {
			/* secret_key changed? an operator can fix it: retry */
			log_msg("error", "deliver queue=webhook id=%s: a signing secret of"
			    " webhook %s does not open", j->id, wh);
			j->error = "the signing secret is unavailable";
			goto wipe;
		}
		secrets[nsec++] = s;
	}
	data = col(b, j, WD_COL_DATA);
	memset(&x->ev, 0, sizeof(x->ev));
	x->ev.id = col(b, j, WD_COL_EVENT);
	x->ev.type = j->kind;
	x->ev.created_ms = strtoll(PQgetvalue(b->res, j->row, WD_COL_CREATED), NULL, 10);
	x->ev.client_id = col(b, j, WD_COL_CLIENT);
	x->ev.mode = col(b, j, WD_COL_MODE);
	x->ev.api_version = col(b, j, WD_COL_API_VERSION) != NULL ?
	    col(b, j, WD_COL_API_VERSION) : cfg->api_version;
	x->ev.producer_service = col(b, j, WD_COL_PRODUCER);
	x->ev.correlation_id = col(b, j, WD_COL_CORRELATION);
	x->ev.request_id = col(b, j, WD_COL_REQUEST);
	x->ev.idempotency_key = col(b, j, WD_COL_IDEM);
	if (nsec == 0 || data == NULL ||
	    (x->ev.data = json_parse(b->arena, data, strlen(data), &why)) == NULL) {
		j->error = "the event cannot be built";
		goto wipe;
	}
	body = json_dump(b->arena, events_envelope(b->arena, &x->ev), &len);
	sig = webhooks_signature(b->arena, (int64_t)(x->at_ms / 1000), body, len,
	    secrets, nsec);
	for (size_t i = 0; i < nsec; i++)
		sodium_memzero((void *)secrets[i], strlen(secrets[i]));
	nsec = 0;

	if (webhooks_inbox_url(col(b, j, WD_COL_URL))) {
		/* kept with the batch (keep_inbox), not posted */
		x->inbox_body = body;
		x->inbox_sig = sig;
		return 0;
	}
	/* checked at every delivery: DNS may answer otherwise than before */
	if (strcmp(PQgetvalue(b->res, j->row, WD_COL_WH_ENV), "sandbox") == 0)
		flags |= URLSAFE_ALLOW_HTTP;
	if (cfg->allow_private_targets)
		flags |= URLSAFE_ALLOW_PRIVATE;
	if ((t = url_check(b, cache, ncache, col(b, j, WD_COL_URL), flags, &why)) == NULL) {
		j->error = why;
		return 0;
	}
	x->t = *t;
	x->c = w->idle[--w->nidle];
	if (webhooks_request(x->c, b->arena, &x->t, &x->ev, body, len, sig, &x->res) != 0 ||
	    curl_easy_setopt(x->c, CURLOPT_PRIVATE, x) != CURLE_OK ||
	    curl_multi_add_handle(w->multi, x->c) != CURLM_OK) {
		curl_easy_reset(x->c);
		w->idle[w->nidle++] = x->c;
		x->c = NULL;
		j->error = "the request could not be prepared";
		return 0;
	}
	return 1;
wipe:
	for (size_t i = 0; i < nsec; i++)
		sodium_memzero((void *)secrets[i], strlen(secrets[i]));
	return 0;
}

/* The transfer of x ended with cc: its outcome. */
static void
finish(struct wsender *w, struct queue_batch *b, struct wjob *x, CURLcode cc)
{
	struct queue_job *j = x->job;
	long st;

	webhooks_result_finish(x->c, (int)cc, &x->res);
	st = x->res.status;
	if (st >= 200 && st <= 299) {
		j->outcome = QUEUE_SENT;
		j->error = NULL;
	} else if (st == 410) {
		j->outcome = QUEUE_FAILED;
		j->error = WD_GONE_REASON;
		x->gone = 1;
	} else {
		j->outcome = QUEUE_RETRY;
		if (st == 0) {
			j->error = x->res.error;
			log_msg("info", "deliver queue=webhook id=%s attempt=%d: %s",
			    j->id, j->attempt, x->res.errbuf);
		} else {
			j->error = arena_printf(b->arena, "the endpoint answered %ld", st);
		}
		if (st == 429 || st == 503) {
			curl_off_t ra = 0;

			if (curl_easy_getinfo(x->c, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK &&
			    ra > 0)
				j->retry_after = ra > WEBHOOKS_RETRY_AFTER_MAX ?
				    WEBHOOKS_RETRY_AFTER_MAX : (int)ra;
		}
	}
	curl_multi_remove_handle(w->multi, x->c);
	curl_easy_reset(x->c);
	w->idle[w->nidle++] = x->c;
	x->c = NULL;
}

/* The inbox deliveries of the batch into webhook_inbox: each kept is
 * acknowledged, as a 2xx would be; one the database refuses is retried. */
static void
keep_inbox(struct queue_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		struct queue_job *j = &b->jobs[i];
		struct wjob *x = j->priv;

		if (x == NULL || x->inbox_body == NULL)
			continue;
		if (webhooks_inbox_store(b->db, b->arena, &x->ev, j->id,
		    col(b, j, WD_COL_WEBHOOK), x->inbox_body, x->inbox_sig) != 0) {
			log_msg("error", "deliver queue=webhook id=%s: the inbox did not keep it: %s",
			    j->id, db_errmsg(b->db));
			j->error = "the inbox could not keep the delivery";
			continue;
		}
		x->res.status = 200;
		j->outcome = QUEUE_SENT;
		j->error = NULL;
	}
}

static void
webhooks_send_batch(void *ctx, struct queue_batch *b)
{
	struct wsender *w = ctx;
	struct urlcheck *cache = arena_alloc(b->arena, b->n * sizeof(*cache));
	size_t next = 0, inflight = 0, ncache = 0;

	while (next < b->n || inflight > 0) {
		CURLMsg *m;
		int running, left;

		while (inflight < (size_t)w->conc && next < b->n) {
			/* a request must end well before the lease does */
			if (!queue_may_start(b, WD_NEED)) {
				next = b->n;	/* the rest stays released */
				break;
			}
			inflight += (size_t)start(w, b, &b->jobs[next++], cache, &ncache);
		}
		if (inflight == 0)
			continue;
		curl_multi_perform(w->multi, &running);
		while ((m = curl_multi_info_read(w->multi, &left)) != NULL) {
			char *priv = NULL;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
			finish(w, b, (struct wjob *)(void *)priv, m->data.result);
			inflight--;
		}
		if (inflight > 0)
			curl_multi_poll(w->multi, NULL, 0, 100, NULL);
	}
	keep_inbox(b);
	/* 410: the subscription goes, with the reason the developer sees */
	for (size_t i = 0; i < b->n; i++) {
		struct wjob *x = b->jobs[i].priv;
		const char *p[3];

		if (x == NULL || !x->gone)
			continue;
		p[0] = col(b, &b->jobs[i], WD_COL_CLIENT);
		p[1] = col(b, &b->jobs[i], WD_COL_WEBHOOK);
		p[2] = WD_GONE_REASON;
		if (db_exec(b->db, b->arena, &stmts[WD_DISABLE], 3, p) == NULL)
			log_msg("error", "deliver queue=webhook: cannot disable webhook %s: %s",
			    p[1], db_errmsg(b->db));
		else
			log_msg("warn", "deliver queue=webhook: webhook %s disabled: %s",
			    p[1], WD_GONE_REASON);
	}
}

/* ------------------------------------------------------------------ */
/* Recording                                                           */

/* A growing PostgreSQL array literal. */
struct arr {
	FILE	*f;
	char	*buf;
	size_t	 len;
	int	 n;
};

static void
arr_open(struct arr *a)
{
	memset(a, 0, sizeof(*a));
	a->f = open_memstream(&a->buf, &a->len);
	if (a->f != NULL)
		fputc('{', a->f);
}

static void
arr_sep(struct arr *a)
{
	if (a->f != NULL && a->n++ > 0)
		fputc(',', a->f);
}

static void
arr_text(struct arr *a, const char *s)
{
	arr_sep(a);
	if (a->f == NULL)
		return;
	if (s == NULL) {
		fputs("NULL", a->f);
		return;
	}
	fputc('"', a->f);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', a->f);
		fputc(*s, a->f);
	}
	fputc('"', a->f);
}

static void
arr_int(struct arr *a, long long v, int null)
{
	arr_sep(a);
	if (a->f == NULL)
		return;
	if (null)
		fputs("NULL", a->f);
	else
		fprintf(a->f, "%lld", v);
}

/* The literal in the arena, NULL when memory ran out. */
static const char *
arr_close(struct arena *ar, struct arr *a)
{
	const char *out = NULL;

	if (a->f == NULL)
		return NULL;
	fputc('}', a->f);
	if (fclose(a->f) == 0 && a->buf != NULL)
		out = arena_memdup(ar, a->buf, a->len);
	free(a->buf);
	return out;
}

static int
webhooks_record_batch(void *ctx, struct queue_batch *b)
{
	static const char *const outcomes[QUEUE__MAX] = {
		[QUEUE_RELEASED] = "released",
		[QUEUE_SENT] = "sent",
		[QUEUE_RETRY] = "retry",
		[QUEUE_FAILED] = "failed",
	};
	enum { A_CLIENT, A_ID, A_ATTEMPT, A_OUTCOME, A_DELAY, A_TRIED, A_AT, A_STATUS,
		A_LATENCY, A_ERROR, A__MAX };
	struct arr arrs[A__MAX];
	const char *p[A__MAX];
	PGresult *res;
	int ok = 1;

	(void)ctx;
	for (int i = 0; i < A__MAX; i++)
		arr_open(&arrs[i]);
	for (size_t i = 0; i < b->n; i++) {
		struct queue_job *j = &b->jobs[i];
		struct wjob *x = j->priv;
		int tried = x != NULL && x->tried && j->outcome != QUEUE_RELEASED;

		arr_text(&arrs[A_CLIENT], col(b, j, WD_COL_CLIENT));
		arr_text(&arrs[A_ID], j->id);
		arr_int(&arrs[A_ATTEMPT], j->attempt, 0);
		arr_text(&arrs[A_OUTCOME], outcomes[j->outcome]);
		arr_int(&arrs[A_DELAY], j->delay_ms, 0);
		arr_int(&arrs[A_TRIED], tried, 0);
		arr_int(&arrs[A_AT], x != NULL ? x->at_ms : 0, !tried);
		arr_int(&arrs[A_STATUS], tried ? x->res.status : 0, 0);
		/* no request left (refused URL): no latency */
		arr_int(&arrs[A_LATENCY], tried ? x->res.latency_ms : 0,
		    !tried || (x->res.status == 0 && x->res.curl_code == 0));
		arr_text(&arrs[A_ERROR], j->outcome == QUEUE_SENT ? NULL :
		    j->error != NULL ? j->error : "unknown error");
	}
	for (int i = 0; i < A__MAX; i++)
		if ((p[i] = arr_close(b->arena, &arrs[i])) == NULL)
			ok = 0;
	if (!ok)
		return -1;
	if ((res = db_exec(b->db, b->arena, &stmts[WD_RECORD], A__MAX, p)) == NULL)
		return -1;
	for (int r = 0; r < PQntuples(res); r++) {
		long idx = strtol(PQgetvalue(res, r, WD_REC_IDX), NULL, 10);

		if (idx >= 1 && (size_t)idx <= b->n)
			b->jobs[idx - 1].recorded = 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */

int
webhooks_sender_init(struct queue_sender *s, const struct config *cfg, char *err,
    size_t errlen)
{
	const struct webhooks_settings *ws = webhooks_settings(cfg);
	struct wsender *w;
	int n;

	memset(s, 0, sizeof(*s));
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->ctx = w;
	w->cfg = cfg;
	if ((n = webhooks_schedule_parse(ws->webhook_retry_schedule, w->schedule,
	    WD_SCHEDULE_MAX)) < 0) {
		snprintf(err, errlen, "webhook_retry_schedule: 1 to %d comma-separated"
		    " delays of 1 to 86400 seconds", WD_SCHEDULE_MAX);
		return -1;
	}
	if (ws->webhook_concurrency < 1 || ws->webhook_concurrency > WD_CONCURRENCY_MAX ||
	    ws->webhook_batch < 1 || ws->webhook_batch > WD_BATCH_MAX ||
	    ws->webhook_lease < WD_LEASE_MIN) {
		snprintf(err, errlen, "webhook_concurrency must be 1..%d, webhook_batch"
		    " 1..%d and webhook_lease at least %d", WD_CONCURRENCY_MAX,
		    WD_BATCH_MAX, WD_LEASE_MIN);
		return -1;
	}
	w->conc = ws->webhook_concurrency;
	if ((w->multi = curl_multi_init()) == NULL ||
	    (w->idle = calloc((size_t)w->conc, sizeof(*w->idle))) == NULL) {
		snprintf(err, errlen, "libcurl: cannot create the handles");
		return -1;
	}
	/* keep-alive connections to endpoints survive from batch to batch */
	curl_multi_setopt(w->multi, CURLMOPT_MAXCONNECTS, (long)w->conc);
	for (int i = 0; i < w->conc; i++) {
		if ((w->idle[i] = curl_easy_init()) == NULL) {
			snprintf(err, errlen, "libcurl: cannot create the handles");
			return -1;
		}
		w->nidle++;
	}
	s->name = "webhook";
	s->claim = &stmts[WD_CLAIM];
	s->schedule = w->schedule;
	s->nschedule = (size_t)n;
	s->max_attempts = n + 1;	/* the first, then one per step */
	s->jitter_pct = WD_JITTER_PCT;
	s->batch = ws->webhook_batch;
	s->lease = ws->webhook_lease;
	s->send = webhooks_send_batch;
	s->record_batch = webhooks_record_batch;
	return 0;
}

void
webhooks_sender_free(struct queue_sender *s)
{
	struct wsender *w = s != NULL ? s->ctx : NULL;

	if (w == NULL)
		return;
	for (size_t i = 0; i < w->nidle; i++)
		curl_easy_cleanup(w->idle[i]);
	free(w->idle);
	curl_multi_cleanup(w->multi);
	free(w);
	s->ctx = NULL;
}
