/*
 * The logo job (kind BILLERS_JOB_LOGO, subject a biller id, no client):
 * fetches the catalog's logo_url in bds-jobs, where hostile input is
 * handled, never in an API worker. The URL gets the outbound safety every
 * call of the service gets (core/urlsafe.h: https, every address public,
 * the connection pinned to the checked address, no redirects, no proxy;
 * plain http and private addresses only with allow_private_targets, the
 * dev and test allowance), the answer must be a 200 of at most
 * BILLERS_LOGO_MAX bytes, and lib/billers decides from the bytes alone
 * whether it is a logo and stores it (billers_logos.h). An answer that is
 * not a logo fails the job at once; a transport failure is retried.
 */
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "billers/billers_logos.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/req.h"
#include "core/urlsafe.h"
#include "jobs/jobs.h"
#include "jobs/jobs_conv.h"

#define LOGO_TIMEOUT_MS		10000
#define LOGO_CONNECT_MS		5000
#define LOGO_USER_AGENT		"bds-logos/1"

struct logo_buf {
	unsigned char	*p;
	size_t		 n, cap;
	int		 over;
};

static size_t
sink(char *data, size_t size, size_t nmemb, void *arg)
{
	struct logo_buf *b = arg;
	size_t len = size * nmemb;

	if (b->n + len > BILLERS_LOGO_MAX) {
		b->over = 1;
		return 0;	/* stops the transfer */
	}
	if (b->n + len > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16384;
		unsigned char *p;

		while (cap < b->n + len)
			cap *= 2;
		if ((p = realloc(b->p, cap)) == NULL)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
	return len;
}

struct logo_run {
	const char	*url;		/* NULL: the biller has no logo_url any more */
	unsigned char	*bytes;		/* the job's arena */
	size_t		 len;
};

static enum jobs_outcome
outcome(struct jobs_job *job, enum jobs_outcome o, const char *why)
{
	job->error = why;
	return o;
}

/* GET url into b, pinned to its checked address. NULL ok, else why. */
static const char *
get(struct arena *a, const struct config *cfg, const char *url, struct logo_buf *b,
    int *transient)
{
	struct urlsafe_target t;
	unsigned flags = cfg->allow_private_targets ?
	    URLSAFE_ALLOW_HTTP | URLSAFE_ALLOW_PRIVATE : 0;
	const char *why = NULL;
	long status = 0;
	CURLcode cc;
	CURL *c;

	*transient = 0;
	switch (urlsafe_check(a, url, flags, &t, &why)) {
	case URLSAFE_OK:
		break;
	case URLSAFE_RESOLVE:
		*transient = 1;
		return arena_printf(a, "logo_url refused: %s", why);
	default:
		return arena_printf(a, "logo_url refused: %s", why);
	}
	if ((c = curl_easy_init()) == NULL) {
		*transient = 1;
		return "out of memory";
	}
	if (urlsafe_curl_pin(c, a, &t) != 0 ||
	    curl_easy_setopt(c, CURLOPT_USERAGENT, LOGO_USER_AGENT) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)LOGO_CONNECT_MS) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)LOGO_TIMEOUT_MS) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)BILLERS_LOGO_MAX) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEDATA, b) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L) != CURLE_OK) {
		curl_easy_cleanup(c);
		*transient = 1;
		return "libcurl refused an option";
	}
	cc = conv_perform(c);	/* yields to the runner's loop meanwhile */
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	if (b->over || cc == CURLE_FILESIZE_EXCEEDED)
		return "the logo is larger than the logo size cap";
	if (cc != CURLE_OK) {
		*transient = 1;
		return arena_printf(a, "logo_url: %s", curl_easy_strerror(cc));
	}
	if (status != 200) {
		*transient = status >= 500 || status == 429;
		return arena_printf(a, "logo_url answered %ld", status);
	}
	return NULL;
}

enum jobs_outcome
jobs_logo_fetch(struct req *r, struct jobs_job *job)
{
	struct logo_run *u = arena_alloc(r->arena, sizeof(*u));
	struct logo_buf b = { NULL, 0, 0, 0 };
	const char *why, *kind;
	int err, transient;

	memset(u, 0, sizeof(*u));
	job->state = u;
	if ((u->url = billers_logo_source(r, job->subject_id, &err)) == NULL)
		return err ? outcome(job, JOBS_RETRY, "cannot read the biller") : JOBS_DONE;
	why = get(r->arena, r->cfg, u->url, &b, &transient);
	if (why == NULL && (kind = billers_logo_type(b.p, b.n, &why)) != NULL && *kind) {
		u->bytes = arena_alloc(r->arena, b.n);
		memcpy(u->bytes, b.p, b.n);
		u->len = b.n;
	}
	free(b.p);
	if (u->bytes == NULL)
		return outcome(job, transient ? JOBS_RETRY : JOBS_FAILED, why);
	return JOBS_DONE;
}

enum jobs_outcome
jobs_logo_apply(struct req *r, struct jobs_job *job)
{
	struct logo_run *u = job->state;
	const char *why;

	if (u == NULL || u->bytes == NULL)
		return JOBS_DONE;	/* no logo_url any more: nothing to store */
	if (billers_logo_store(r->cfg, r->db, r->arena, job->subject_id, u->bytes, u->len,
	    u->url, &why) != 0)
		return outcome(job, JOBS_RETRY, why);
	return JOBS_DONE;
}
