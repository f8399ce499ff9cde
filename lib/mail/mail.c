/*
 * E-mail: the outbox row the API writes (mail_enqueue), the RFC 5322 message
 * (mail_format), and the transports bds-deliver sends it by: SMTP through
 * libcurl, or a spool directory of .eml files for development.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <curl/curl.h>
#include <sodium.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "core/queue.h"
#include "core/log.h"
#include "mail/mail.h"
#include "core/req.h"

enum {
	MAIL_INSERT,
	MAIL_CLAIM,
	MAIL_SENT,
	MAIL_RETRY,
	MAIL_FAIL,
	MAIL_RELEASE,
	MAIL__MAX
};

/* The claim's own columns, after the queue's id, attempts, kind. */
#define MAIL_CLAIM_COLS ", to_addr, sealed"
enum { MAIL_COL_TO = QUEUE_COL__MAX, MAIL_COL_SEALED, MAIL_COL__MAX };

/* A row that ends drops its message. */
#define MAIL_END_SET ", sealed = NULL"

static struct db_stmt stmts[MAIL__MAX] = {
	/* $4 is the sealed message as bytea hex text ('\x...'). */
	[MAIL_INSERT] = { "mail_insert",
	    "INSERT INTO outbox_email (id, kind, to_addr, sealed)"
	    " VALUES ($1, $2, $3, $4::bytea)", 0 },
	[MAIL_CLAIM] = { "mail_claim", QUEUE_SQL_CLAIM("outbox_email", MAIL_CLAIM_COLS), 0 },
	[MAIL_SENT] = { "mail_sent",
	    QUEUE_SQL_SENT("outbox_email", MAIL_END_SET ", sent_at = now()"), 0 },
	[MAIL_RETRY] = { "mail_retry", QUEUE_SQL_RETRY("outbox_email"), 0 },
	[MAIL_FAIL] = { "mail_fail", QUEUE_SQL_FAIL("outbox_email", MAIL_END_SET), 0 },
	[MAIL_RELEASE] = { "mail_release", QUEUE_SQL_RELEASE("outbox_email"), 0 },
};
const struct db_stmt_set mail_stmt_set = { "mail", stmts, MAIL__MAX };

/* After attempt 1, 2, ... 6 and every later one; attempt 8 is the last. */
static const int mail_schedule[] = { 30, 120, 600, 1800, 7200, 21600 };
#define MAIL_MAX_ATTEMPTS	8
#define MAIL_BATCH		32
#define MAIL_LEASE_MIN		120	/* seconds */

/* RFC 2047 words of at most this many raw bytes (60 characters encoded). */
#define MAIL_WORD_BYTES		36
/* RFC 5322 allows 998 octets a line; wrap the body well before. */
#define MAIL_LINE_MAX		990

/* ------------------------------------------------------------------ */
/* Formatting                                                          */

static int
is_ascii(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

/* A header value must be one line: no control characters at all. */
static int
header_safe(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

/*
 * s[0..len) as RFC 2047 B-encoded words, folded onto continuation lines.
 * A word never splits a UTF-8 sequence.
 */
static void
put_encoded(FILE *f, const char *s, size_t len)
{
	char b64[sodium_base64_ENCODED_LEN(MAIL_WORD_BYTES,
	    sodium_base64_VARIANT_ORIGINAL)];
	size_t off = 0;

	while (off < len) {
		size_t n = len - off > MAIL_WORD_BYTES ? MAIL_WORD_BYTES : len - off;

		/* back up to a character start when the word would cut one */
		while (off + n < len && n > 1 &&
		    ((unsigned char)s[off + n] & 0xc0) == 0x80)
			n--;
		sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)s + off, n,
		    sodium_base64_VARIANT_ORIGINAL);
		fprintf(f, "%s=?UTF-8?B?%s?=", off > 0 ? "\r\n " : "", b64);
		off += n;
	}
}

/* Subject: as is when ASCII and short enough for one line, else encoded
 * (encoded words fold onto as many lines as they need). */
static void
put_text_header(FILE *f, const char *name, const char *v)
{
	fprintf(f, "%s: ", name);
	if (is_ascii(v) && strlen(v) <= MAIL_LINE_MAX - 100)
		fputs(v, f);
	else
		put_encoded(f, v, strlen(v));
	fputs("\r\n", f);
}

/*
 * From/To: "addr" or "Display Name <addr>". The address must be ASCII
 * (no SMTPUTF8); a non-ASCII display name is encoded. 0 ok, -1 refused.
 */
static int
put_addr_header(FILE *f, const char *name, const char *v)
{
	const char *lt = strrchr(v, '<'), *end = v + strlen(v);
	const char *ns = v, *ne = lt;

	if (is_ascii(v)) {
		fprintf(f, "%s: %s\r\n", name, v);
		return 0;
	}
	if (lt == NULL || end[-1] != '>' || !is_ascii(lt))
		return -1;
	while (ns < ne && *ns == ' ')
		ns++;
	while (ne > ns && ne[-1] == ' ')
		ne--;
	if (ne - ns >= 2 && *ns == '"' && ne[-1] == '"') {
		ns++;
		ne--;
	}
	fprintf(f, "%s: ", name);
	put_encoded(f, ns, (size_t)(ne - ns));
	fprintf(f, " %s\r\n", lt);
	return 0;
}

/* The body with every line ending (CRLF, CR, LF) as CRLF, long lines
 * wrapped at a character boundary, and a final CRLF. */
static void
put_body(FILE *f, const char *s)
{
	size_t col = 0;

	for (; *s != '\0'; s++) {
		if (*s == '\r' || *s == '\n') {
			if (s[0] == '\r' && s[1] == '\n')
				s++;
			fputs("\r\n", f);
			col = 0;
			continue;
		}
		if (col >= MAIL_LINE_MAX && ((unsigned char)*s & 0xc0) != 0x80) {
			fputs("\r\n", f);
			col = 0;
		}
		fputc(*s, f);
		col++;
	}
	if (col > 0)
		fputs("\r\n", f);
}

char *
mail_format(struct arena *a, const char *from, const char *to,
    const char *subject, const char *text, const char *message_id, time_t date)
{
	static const char *const days[] = {
		"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"
	};
	static const char *const months[] = {
		"Jan", "Feb", "Mar", "Apr", "May", "Jun",
		"Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
	};
	char *buf = NULL, *out = NULL;
	size_t len = 0;
	struct tm tm;
	int ok = 0;
	FILE *f;

	if (!header_safe(from) || !header_safe(to) || !header_safe(subject) ||
	    !header_safe(message_id) || !is_ascii(message_id) ||
	    gmtime_r(&date, &tm) == NULL)
		return NULL;
	if ((f = open_memstream(&buf, &len)) == NULL)
		return NULL;
	/* Fixed English names: strftime would follow the locale. */
	fprintf(f, "Date: %s, %02d %s %04d %02d:%02d:%02d +0000\r\n",
	    days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900,
	    tm.tm_hour, tm.tm_min, tm.tm_sec);
	if (put_addr_header(f, "From", from) == 0 &&
	    put_addr_header(f, "To", to) == 0) {
		put_text_header(f, "Subject", subject);
		fprintf(f, "Message-ID: %s\r\n", message_id);
		fputs("MIME-Version: 1.0\r\n"
		    "Content-Type: text/plain; charset=utf-8\r\n"
		    "Content-Transfer-Encoding: 8bit\r\n"
		    /* RFC 3834: no vacation replies to a code */
		    "Auto-Submitted: auto-generated\r\n"
		    "\r\n", f);
		put_body(f, text);
		ok = 1;
	}
	if (fclose(f) == 0 && ok && buf != NULL)
		out = arena_memdup(a, buf, len);
	if (buf != NULL)
		sodium_memzero(buf, len);	/* the body may hold a code */
	free(buf);
	return out;
}

/* The address of "addr" or "Name <addr>", in the arena. */
static char *
addr_spec(struct arena *a, const char *v)
{
	const char *lt = strrchr(v, '<'), *gt;

	if (lt != NULL && (gt = strchr(lt, '>')) != NULL)
		return arena_strndup(a, lt + 1, (size_t)(gt - lt - 1));
	while (*v == ' ')
		v++;
	return arena_strdup(a, v);
}

/* ------------------------------------------------------------------ */
/* The outbox row                                                      */

int
mail_enqueue(struct req *r, const char *kind, const char *to,
    const char *subject, const char *text)
{
	const char *id = crypto_id_new(r->arena, "eml"), *params[4];
	char *msg, *hex;
	unsigned char *sealed;
	size_t len, slen;

	msg = mail_format(r->arena, mail_settings(r->cfg)->mail_from, to, subject, text,
	    arena_printf(r->arena, "<%s@bds>", id), time(NULL));
	if (msg == NULL) {
		log_msg("error", "mail: %s message not queued: a header holds a line"
		    " break or a non-ASCII address", kind);
		return -1;
	}
	len = strlen(msg);
	sealed = crypto_seal(r->arena, r->cfg->secret_key, msg, len, id, &slen);
	sodium_memzero(msg, len);	/* the code lives on only sealed */
	if (sealed == NULL)
		return -1;
	hex = crypto_hex_encode(r->arena, sealed, slen);
	params[0] = id;
	params[1] = kind;
	params[2] = addr_spec(r->arena, to);
	params[3] = arena_printf(r->arena, "\\x%s", hex);
	return db_query(r, &stmts[MAIL_INSERT], 4, params) != NULL ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Transports                                                          */

/*
 * Write <dir>/<id>.eml atomically: a hidden temp file (mode 0600), fsync,
 * rename over the final name, fsync the directory. A message written twice
 * (a deliverer died before recording it) simply replaces the first copy.
 */
static enum queue_outcome
spool_write(struct arena *a, const char *dir, const char *id, const char *msg,
    size_t len, const char **err)
{
	const char *path = arena_printf(a, "%s/%s.eml", dir, id);
	const char *tmp = arena_printf(a, "%s/.%s.%ld.tmp", dir, id, (long)getpid());
	const char *step = "open";
	enum queue_outcome rc = QUEUE_RETRY;
	size_t off = 0;
	int fd, dfd = -1;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd == -1 && errno == ENOENT && mkdir(dir, 0700) == 0)
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd == -1)
		goto out;
	step = "write";
	if (fchmod(fd, 0600) == -1)
		goto out;
	while (off < len) {
		ssize_t n = write(fd, msg + off, len - off);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		off += (size_t)n;
	}
	step = "fsync";
	if (fsync(fd) == -1)
		goto out;
	step = "close";
	if (close(fd) == -1) {
		fd = -1;
		goto out;
	}
	fd = -1;
	step = "rename";
	if (rename(tmp, path) == -1)
		goto out;
	/* the rename itself must survive a crash */
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1)
		(void)fsync(dfd);
	rc = QUEUE_SENT;
out:
	if (rc != QUEUE_SENT) {
		*err = arena_printf(a, "spool: %s: %s", step, strerror(errno));
		unlink(tmp);
	}
	if (fd != -1)
		close(fd);
	if (dfd != -1)
		close(dfd);
	return rc;
}

struct upload {
	const char	*p;
	size_t		 left;
};

static size_t
upload_read(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct upload *u = arg;
	size_t n = size * nmemb;

	if (n > u->left)
		n = u->left;
	memcpy(buf, u->p, n);
	u->p += n;
	u->left -= n;
	return n;
}

/*
 * A reply that says the message itself will never be accepted (RFC 5321
 * 5yz). Authentication and TLS-policy replies are the relay's setup, which
 * an operator fixes: those are retried.
 */
static int
smtp_permanent(long code)
{
	return code >= 500 && code <= 599 &&
	    code != 530 && code != 534 && code != 535 && code != 538;
}

/* The settings every message of a batch shares (one connection, reused). */
static CURL *
smtp_open(struct arena *a, const struct config *cfg)
{
	const struct mail_settings *ms = mail_settings(cfg);
	CURL *c = curl_easy_init();

	if (c == NULL)
		return NULL;
	curl_easy_setopt(c, CURLOPT_URL, ms->smtp_url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_SMTP | CURLPROTO_SMTPS));
#endif
	curl_easy_setopt(c, CURLOPT_MAIL_FROM,
	    arena_printf(a, "<%s>", addr_spec(a, ms->mail_from)));
	/* STARTTLS when the relay offers it; smtps:// is TLS from the start. */
	curl_easy_setopt(c, CURLOPT_USE_SSL, (long)CURLUSESSL_TRY);
	if (ms->smtp_user[0] != '\0') {
		curl_easy_setopt(c, CURLOPT_USERNAME, ms->smtp_user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, ms->smtp_password);
	}
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)ms->smtp_timeout);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT,
	    (long)(ms->smtp_timeout < 10 ? ms->smtp_timeout : 10));
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, upload_read);
	return c;
}

static enum queue_outcome
smtp_send(CURL *c, struct arena *a, const char *to, const char *msg, size_t len,
    const char **err)
{
	char ebuf[CURL_ERROR_SIZE] = "";
	struct upload u = { msg, len };
	struct curl_slist *rcpt;
	enum queue_outcome rc = QUEUE_RETRY;
	CURLcode cc;
	long code = 0;

	if ((rcpt = curl_slist_append(NULL, arena_printf(a, "<%s>", to))) == NULL) {
		*err = "smtp: out of memory";
		return QUEUE_RETRY;
	}
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(c, CURLOPT_READDATA, &u);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (cc == CURLE_OK) {
		rc = QUEUE_SENT;
	} else {
		/* curl's text names the step and the reply code, never the message */
		*err = arena_printf(a, "smtp: %s (reply %ld)",
		    ebuf[0] != '\0' ? ebuf : curl_easy_strerror(cc), code);
		rc = smtp_permanent(code) ? QUEUE_FAILED : QUEUE_RETRY;
	}
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, NULL);
	curl_easy_setopt(c, CURLOPT_READDATA, NULL);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(rcpt);
	return rc;
}

/* ------------------------------------------------------------------ */
/* bds-deliver's e-mail queue                                          */

/* The sealed column (bytea text, whatever bytea_output says) opened with
 * ad = the row id. */
static int
unseal(struct queue_batch *b, const struct config *cfg, const struct queue_job *j,
    unsigned char **msg, size_t *len)
{
	unsigned char *raw, *sealed;
	size_t slen;

	if (PQgetisnull(b->res, j->row, MAIL_COL_SEALED) ||
	    (raw = PQunescapeBytea((const unsigned char *)PQgetvalue(b->res, j->row,
	    MAIL_COL_SEALED), &slen)) == NULL)
		return -1;
	sealed = (unsigned char *)arena_memdup(b->arena, raw, slen);
	PQfreemem(raw);
	return crypto_open(b->arena, cfg->secret_key, sealed, slen, j->id, msg, len);
}

static void
mail_send_batch(void *ctx, struct queue_batch *b)
{
	const struct config *cfg = ctx;
	const struct mail_settings *ms = mail_settings(cfg);
	int smtp = strcmp(ms->mail_transport, "smtp") == 0;
	/* a message must be recorded before its lease ends */
	int need = smtp ? ms->smtp_timeout + 5 : 5;
	CURL *c = NULL;
	size_t i;

	for (i = 0; i < b->n; i++) {
		struct queue_job *j = &b->jobs[i];
		unsigned char *msg;
		size_t len;

		if (!queue_may_start(b, need))
			break;
		if (!crypto_id_valid(j->id, "eml", 0) || unseal(b, cfg, j, &msg, &len) != 0) {
			j->outcome = QUEUE_FAILED;
			j->error = "cannot unseal";
			continue;
		}
		if (!smtp) {
			j->outcome = spool_write(b->arena, ms->mail_spool_dir, j->id,
			    (const char *)msg, len, &j->error);
		} else if (c == NULL && (c = smtp_open(b->arena, cfg)) == NULL) {
			j->outcome = QUEUE_RETRY;
			j->error = "smtp: cannot create a curl handle";
		} else {
			j->outcome = smtp_send(c, b->arena,
			    PQgetvalue(b->res, j->row, MAIL_COL_TO), (const char *)msg,
			    len, &j->error);
		}
		sodium_memzero(msg, len);
	}
	curl_easy_cleanup(c);
}

int
mail_sender_init(struct queue_sender *s, const struct config *cfg, char *err,
    size_t errlen)
{
	const struct mail_settings *ms = mail_settings(cfg);

	memset(s, 0, sizeof(*s));
	s->name = "mail";
	s->claim = &stmts[MAIL_CLAIM];
	s->sent = &stmts[MAIL_SENT];
	s->retry = &stmts[MAIL_RETRY];
	s->fail = &stmts[MAIL_FAIL];
	s->release = &stmts[MAIL_RELEASE];
	s->schedule = mail_schedule;
	s->nschedule = sizeof(mail_schedule) / sizeof(mail_schedule[0]);
	s->max_attempts = MAIL_MAX_ATTEMPTS;
	s->jitter_pct = 0;
	s->batch = MAIL_BATCH;
	/* room for at least a few messages at the slowest the relay may be */
	s->lease = ms->smtp_timeout * 3 > MAIL_LEASE_MIN ?
	    ms->smtp_timeout * 3 : MAIL_LEASE_MIN;
	s->send = mail_send_batch;
	s->ctx = (void *)cfg;
	(void)err;
	(void)errlen;
	return 0;
}
