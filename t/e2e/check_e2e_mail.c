/*
 * E-mail end to end: mail_enqueue() writes a sealed outbox row inside the
 * caller's transaction; bds-deliver claims it and sends it over SMTP to a
 * local sink (t/e2e/smtp_sink), or writes it into the spool, and records
 * the outcome in the row. Three tcases:
 *   format  mail_format() alone (no stack);
 *   smtp    one stack with mail_transport = smtp; each test starts its own
 *           sink on harness_smtp_port() and an empty outbox;
 *   spool   one stack with mail_transport = spool.
 * Messages are queued the way a handler does it: a struct req on the
 * stack's database, db_begin, mail_enqueue, db_commit.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include <check.h>
#include <libpq-fe.h>

#include "core/arena.h"
#include "core/config.h"
#include "core/crypto.h"
#include "core/db.h"
#include "devacct.h"
#include "harness.h"
#include "mail/mail.h"
#include "core/req.h"
#include "smtp_sink.h"

#define SMTP_USER	"bds-mailer"
#define SMTP_PASSWORD	"relay-pass-4821"
#define FROM_HEADER	"BDS Tests <no-reply@bds.test>"
#define FROM_ADDR	"no-reply@bds.test"
#define WAIT_MS		5000

/* ------------------------------------------------------------------ */
/* A handler's view: config, database handle, arena, request           */

static struct config cfg;
static struct arena arena;
static struct db *db;
static struct req req;

static void
client_open(void)
{
	char err[512];

	ck_assert_msg(config_load(&cfg, harness_config_path(), err, sizeof(err)) == 0,
	    "config: %s", err);
	ck_assert_int_eq(crypto_setup(), 0);
	arena_init(&arena);
	ck_assert_ptr_nonnull(db = db_new(harness_database_url()));
	req_init(&req, &cfg, db, &arena, NULL);
}

static void
client_close(void)
{
	arena_free(&arena);
	db_free(db);
	db = NULL;
	config_free(&cfg);
}

/* Queue messages as a handler does: one transaction, committed. */
static void
enqueue(const char *to, const char *subject, const char *text)
{
	ck_assert_msg(db_begin(db) == 0, "begin: %s", db_errmsg(db));
	ck_assert_msg(mail_enqueue(&req, "test", to, subject, text) == 0,
	    "mail_enqueue: %s", db_errmsg(db));
	ck_assert_msg(db_commit(db) == 0, "commit: %s", db_errmsg(db));
	arena_reset(&arena);
}

/* The test's checks run on devacct's connection (devacct_sql_*). */
#define sql_value devacct_sql_value
#define sql_exec devacct_sql_exec

/* The id of the only row queued to `to`. */
static char *
row_id(const char *to)
{
	char *n = sql_value("SELECT count(*) FROM outbox_email WHERE to_addr = $1", to, NULL);

	ck_assert_msg(strcmp(n, "1") == 0, "%s rows queued to %s, want 1", n, to);
	free(n);
	return sql_value("SELECT id FROM outbox_email WHERE to_addr = $1", to, NULL);
}

/* Queue one message to `to` (subject "s") and return its row id. */
static char *
queued(const char *to, const char *text)
{
	enqueue(to, "s", text);
	return row_id(to);
}

/* The row's last_error, malloc'ed (NULL when none). */
static char *
last_error(const char *id)
{
	return sql_value("SELECT last_error FROM outbox_email WHERE id = $1", id, NULL);
}

/* Assert on the row's state: status, attempts, and whether sealed is NULL. */
static void
assert_row(const char *id, const char *status, const char *attempts, int sealed_null)
{
	char *st = sql_value("SELECT status || ' ' || attempts || ' ' ||"
	    " (sealed IS NULL)::text FROM outbox_email WHERE id = $1", id, NULL);
	char want[128];

	snprintf(want, sizeof(want), "%s %s %s", status, attempts,
	    sealed_null ? "true" : "false");
	ck_assert_msg(strcmp(st, want) == 0, "row %s is \"%s\", want \"%s\"", id, st, want);
	free(st);
}

static struct smtp_sink *
sink_start(struct smtp_sink_opts *o)
{
	struct smtp_sink *s;

	o->port = harness_smtp_port();
	s = smtp_sink_start(o);
	ck_assert_msg(s != NULL, "%s", smtp_sink_error());
	return s;
}

static void
deliver_once_ok(void)
{
	int rc = harness_deliver_once();

	if (rc != 0)
		harness_dump_logs();
	ck_assert_msg(rc == 0, "bds-deliver --once: %d %s", rc, rc < 0 ? harness_error() : "");
}

/* Every test: a healthy stack, no deliverer left running, an empty outbox. */
static void
test_setup(void)
{
	harness_fixture_recover();
	harness_deliver_stop();
	client_open();
	sql_exec("DELETE FROM outbox_email", NULL, NULL);
}

static void
test_teardown(void)
{
	harness_deliver_stop();
	client_close();
}

/* ------------------------------------------------------------------ */
/* format: mail_format() alone                                         */

#define T0 ((time_t)1767225600)		/* Thu, 01 Jan 2026 00:00:00 UTC */
#define HEADERS(subject_line) \
	"Date: Thu, 01 Jan 2026 00:00:00 +0000\r\n" \
	"From: BDS <no-reply@bds.test>\r\n" \
	"To: ann@example.test\r\n" \
	subject_line \
	"Message-ID: <eml_1@bds>\r\n" \
	"MIME-Version: 1.0\r\n" \
	"Content-Type: text/plain; charset=utf-8\r\n" \
	"Content-Transfer-Encoding: 8bit\r\n" \
	"Auto-Submitted: auto-generated\r\n" \
	"\r\n"

static const struct {
	const char	*name;
	const char	*subject;
	const char	*text;
	const char	*want;
} fmt_valid[] = {
	{ "ascii", "Your code", "Your code is 123456.\n",
	    HEADERS("Subject: Your code\r\n") "Your code is 123456.\r\n" },
	{ "utf8 subject", "V\xc3\xa9rifiez votre adresse", "x",
	    HEADERS("Subject: =?UTF-8?B?VsOpcmlmaWV6IHZvdHJlIGFkcmVzc2U=?=\r\n") "x\r\n" },
	{ "line endings", "s", "a\nb\r\nc\rd\r\n\r\ne",
	    HEADERS("Subject: s\r\n") "a\r\nb\r\nc\r\nd\r\n\r\ne\r\n" },
	{ "dots unchanged", "s", ".\n..x\n.hidden",
	    HEADERS("Subject: s\r\n") ".\r\n..x\r\n.hidden\r\n" },
	{ "empty body", "s", "", HEADERS("Subject: s\r\n") },
	{ "utf8 body", "s", "Gr\xc3\xbc\xc3\x9f" "e 654321",
	    HEADERS("Subject: s\r\n") "Gr\xc3\xbc\xc3\x9f" "e 654321\r\n" },
};

START_TEST(format_valid)
{
	struct arena a;
	char *m;

	arena_init(&a);
	m = mail_format(&a, "BDS <no-reply@bds.test>", "ann@example.test",
	    fmt_valid[_i].subject, fmt_valid[_i].text, "<eml_1@bds>", T0);
	ck_assert_msg(m != NULL, "%s: refused", fmt_valid[_i].name);
	ck_assert_msg(strcmp(m, fmt_valid[_i].want) == 0, "%s:\n%s\nwant:\n%s",
	    fmt_valid[_i].name, m, fmt_valid[_i].want);
	arena_free(&a);
}
END_TEST

/* A line break or other control character in a header is an injected
 * header; a non-ASCII address needs SMTPUTF8, which we do not speak. */
static const struct {
	const char	*from;
	const char	*to;
	const char	*subject;
} fmt_refused[] = {
	{ "a@bds.test", "ann@example.test", "hi\r\nBcc: eve@example.test" },
	{ "a@bds.test", "ann@example.test", "hi\nthere" },
	{ "a@bds.test", "ann@example.test\r\nBcc: eve@example.test", "hi" },
	{ "a@bds.test\n", "ann@example.test", "hi" },
	{ "a@bds.test", "ann@example.test", "tab\there" },
	{ "a@bds.test", "j\xc3\xb6rg@example.test", "hi" },
	{ "a@bds.test", "J\xc3\xb6rg <j\xc3\xb6rg@example.test>", "hi" },
};

START_TEST(format_refused)
{
	struct arena a;

	arena_init(&a);
	ck_assert_msg(mail_format(&a, fmt_refused[_i].from, fmt_refused[_i].to,
	    fmt_refused[_i].subject, "x", "<eml_1@bds>", T0) == NULL,
	    "case %d was formatted", _i);
	arena_free(&a);
}
END_TEST

START_TEST(format_encoded_names)
{
	struct arena a;
	char *m;

	arena_init(&a);
	m = mail_format(&a, "\"S\xc3\xa9rvice\" <no-reply@bds.test>",
	    "Zo\xc3\xab <zoe@example.test>", "s", "x", "<eml_1@bds>", T0);
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(strstr(m, "\r\nFrom: =?UTF-8?B?U8OpcnZpY2U=?= <no-reply@bds.test>\r\n"),
	    "%s", m);
	ck_assert_msg(strstr(m, "\r\nTo: =?UTF-8?B?Wm/Dqw==?= <zoe@example.test>\r\n"), "%s", m);
	arena_free(&a);
}
END_TEST

/* Every header line of m is at most 78 characters, and its Subject
 * decodes to subject. */
static void
assert_folded(char *m, const char *subject)
{
	struct smtp_msg msg = { 0 };
	const char *line;
	char *got;

	for (line = m; strncmp(line, "\r\n", 2) != 0; line = strstr(line, "\r\n") + 2)
		ck_assert_msg(strstr(line, "\r\n") - line <= 78, "long header line: %.100s", line);
	msg.data = m;
	msg.len = strlen(m);
	got = smtp_msg_header(&msg, "Subject");
	ck_assert_msg(got != NULL && strcmp(got, subject) == 0, "subject decodes to %s", got);
	free(got);
}

/* Header lines stay short and words never split a character; body lines
 * stay under 998 octets and rejoin to the original text. */
START_TEST(format_long_lines)
{
	struct smtp_msg msg = { 0 };
	char subject[400], text[6001], *m, *body, *p, *q;
	struct arena a;
	size_t i;

	for (i = 0; i + 2 < sizeof(subject); i += 2)
		memcpy(subject + i, "\xc3\xa9", 2);		/* é */
	subject[i] = '\0';
	for (i = 0; i + 2 < sizeof(text); i += 2)
		memcpy(text + i, i % 40 == 0 ? "\xc3\xa9" : "xy", 2);
	text[i] = '\0';
	arena_init(&a);
	ck_assert_ptr_nonnull(m = mail_format(&a, FROM_ADDR, "ann@example.test", subject,
	    text, "<eml_1@bds>", T0));
	assert_folded(m, subject);
	msg.data = m;
	msg.len = strlen(m);
	/* body: lines < 998, and without the CRLFs it is the text again */
	body = strdup(smtp_msg_body(&msg));
	for (p = body; *p != '\0'; p = q + 2) {
		ck_assert_ptr_nonnull(q = strstr(p, "\r\n"));
		ck_assert_msg(q - p < 998, "body line of %td octets", q - p);
		ck_assert_msg(((unsigned char)*p & 0xc0) != 0x80, "a line starts mid-character");
	}
	for (p = q = body; *p != '\0'; p++)
		if (*p != '\r' && *p != '\n')
			*q++ = *p;
	*q = '\0';
	ck_assert_msg(strcmp(body, text) == 0, "wrapped body differs from the text");
	free(body);
	arena_free(&a);
}
END_TEST

/* An ASCII subject too long for one line is encoded (and so folded) too. */
START_TEST(format_long_ascii_subject)
{
	char subject[1201], *m;
	struct arena a;

	memset(subject, 'a', sizeof(subject) - 1);
	subject[sizeof(subject) - 1] = '\0';
	arena_init(&a);
	ck_assert_ptr_nonnull(m = mail_format(&a, FROM_ADDR, "ann@example.test", subject,
	    "x", "<eml_1@bds>", T0));
	assert_folded(m, subject);
	arena_free(&a);
}
END_TEST

START_TEST(find_code)
{
	static const struct {
		const char	*text;
		const char	*code;	/* NULL: none */
	} cases[] = {
		{ "Your code is 123456.", "123456" },
		{ "123456", "123456" },
		{ "code:654321\r\n", "654321" },
		{ "id 1234567 then 222333", "222333" },
		{ "x123456 123456_ a123456b", NULL },
		{ "12345 1234", NULL },
		{ "\xc3\xa9" "987654", "987654" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[7];
		int rc = smtp_find_code(cases[i].text, out);

		if (cases[i].code == NULL)
			ck_assert_msg(rc == -1, "found %s in \"%s\"", out, cases[i].text);
		else
			ck_assert_msg(rc == 0 && strcmp(out, cases[i].code) == 0,
			    "\"%s\": got %s", cases[i].text, rc == 0 ? out : "none");
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* smtp                                                                */

static void
smtp_stack(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.mail = "smtp";
	/* curl authenticates only when the sink offers AUTH */
	o.smtp_user = SMTP_USER;
	o.smtp_password = SMTP_PASSWORD;
	harness_fixture_start(&o);
}

#define CODE		"482913"
#define SUBJECT		"Votre code de v\xc3\xa9rification"
#define TEXT		"Hello,\n\nYour code is " CODE ".\n.hidden line\n.\nBye"
#define TEXT_CRLF	"Hello,\r\n\r\nYour code is " CODE ".\r\n.hidden line\r\n.\r\nBye\r\n"

START_TEST(smtp_delivers_sealed_message)
{
	struct smtp_sink_opts so = { 0 };
	struct smtp_sink *sink = sink_start(&so);
	const char *to = "ann@example.test";
	const struct smtp_msg *m;
	const char *pv[1];
	char *id, *v, mid[128], code[7], *log;
	PGresult *res;

	enqueue(to, SUBJECT, TEXT);
	id = row_id(to);
	assert_row(id, "pending", "0", 0);

	/* at rest the message is sealed: no code, no text, no subject */
	pv[0] = id;
	res = PQexecParams(devacct_pg(), "SELECT sealed FROM outbox_email WHERE id = $1", 1, NULL,
	    pv, NULL, NULL, 1);
	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	ck_assert_int_eq(PQntuples(res), 1);
	ck_assert_msg(memmem(PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0),
	    CODE, 6) == NULL, "the code is in the sealed bytes");
	ck_assert_msg(memmem(PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0),
	    "Hello", 5) == NULL, "the text is in the sealed bytes");
	ck_assert_msg(memmem(PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0),
	    "Subject", 7) == NULL, "the headers are in the sealed bytes");
	PQclear(res);

	deliver_once_ok();
	m = smtp_sink_wait(sink, 0, WAIT_MS);
	ck_assert_msg(m != NULL, "no message arrived");
	ck_assert_str_eq(m->from, FROM_ADDR);
	ck_assert_uint_eq(m->nrcpts, 1);
	ck_assert_str_eq(m->rcpts[0], to);
	ck_assert_int_eq(m->authed, 0);

	snprintf(mid, sizeof(mid), "<%s@bds>", id);
	{
		static const char *const want[][2] = {
			{ "From", FROM_HEADER },
			{ "To", "ann@example.test" },
			{ "Subject", SUBJECT },
			{ "MIME-Version", "1.0" },
			{ "Content-Type", "text/plain; charset=utf-8" },
			{ "Content-Transfer-Encoding", "8bit" },
		};
		size_t i;

		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			v = smtp_msg_header(m, want[i][0]);
			ck_assert_msg(v != NULL && strcmp(v, want[i][1]) == 0,
			    "%s is \"%s\", want \"%s\"", want[i][0], v ? v : "(none)", want[i][1]);
			free(v);
		}
	}
	v = smtp_msg_header(m, "Message-ID");
	ck_assert_msg(v != NULL && strcmp(v, mid) == 0, "Message-ID %s, want %s", v, mid);
	free(v);
	v = smtp_msg_header(m, "Date");
	ck_assert_msg(v != NULL && strlen(v) == 31 && strcmp(v + 25, " +0000") == 0,
	    "Date: %s", v);
	free(v);
	/* the body as written, lines CRLF, leading dots intact through SMTP */
	ck_assert_str_eq(smtp_msg_body(m), TEXT_CRLF);
	ck_assert_int_eq(smtp_msg_code(m, code), 0);
	ck_assert_str_eq(code, CODE);

	/* sent, and the sealed copy is gone */
	assert_row(id, "sent", "1", 1);
	v = sql_value("SELECT (sent_at IS NOT NULL AND lease_until IS NULL AND"
	    " last_error IS NULL)::text FROM outbox_email WHERE id = $1", id, NULL);
	ck_assert_str_eq(v, "true");
	free(v);

	/* the log names the message, never its content */
	ck_assert_ptr_nonnull(log = harness_slurp(harness_deliver_log_path()));
	ck_assert_msg(strstr(log, id) != NULL, "the log does not name %s", id);
	ck_assert_msg(strstr(log, CODE) == NULL && strstr(log, "Hello") == NULL &&
	    strstr(log, "Votre") == NULL, "the deliver log holds message content");
	free(log);

	/* nothing more to send: a second run sends nothing twice */
	deliver_once_ok();
	ck_assert_uint_eq(smtp_sink_count(sink), 1);
	free(id);
	smtp_sink_stop(sink);
}
END_TEST

START_TEST(smtp_rolled_back_sends_nothing)
{
	struct smtp_sink_opts so = { 0 };
	struct smtp_sink *sink = sink_start(&so);
	char *n;

	ck_assert_int_eq(db_begin(db), 0);
	ck_assert_int_eq(mail_enqueue(&req, "test", "rb@example.test", "s", "code 111222"), 0);
	db_rollback(db);
	arena_reset(&arena);
	deliver_once_ok();
	ck_assert_uint_eq(smtp_sink_count(sink), 0);
	n = sql_value("SELECT count(*) FROM outbox_email", NULL, NULL);
	ck_assert_str_eq(n, "0");
	free(n);
	smtp_sink_stop(sink);
}
END_TEST

/* 451 to DATA: the row waits (attempt 1, next attempt later, error kept);
 * once due again and the relay well, it goes. */
START_TEST(smtp_451_retries_later)
{
	struct smtp_sink_opts so = { .fail_data = 1 };
	struct smtp_sink *sink = sink_start(&so);
	const char *to = "retry@example.test";
	char *id, *v;

	id = queued(to, "code 333444");
	deliver_once_ok();
	ck_assert_uint_ge(smtp_sink_rejected(sink), 1);
	ck_assert_uint_eq(smtp_sink_count(sink), 0);
	assert_row(id, "pending", "1", 0);
	v = sql_value("SELECT (next_attempt_at > now() + interval '20 seconds' AND"
	    " next_attempt_at < now() + interval '40 seconds' AND lease_until IS NULL)::text"
	    " FROM outbox_email WHERE id = $1", id, NULL);
	ck_assert_msg(strcmp(v, "true") == 0, "next attempt not in ~30 s");
	free(v);
	v = last_error(id);
	ck_assert_msg(v != NULL && strstr(v, "451") != NULL && strstr(v, "333444") == NULL,
	    "last_error: %s", v ? v : "(null)");
	free(v);

	/* not due yet: a run leaves it alone */
	smtp_sink_set_fail_data(sink, 0);
	deliver_once_ok();
	ck_assert_uint_eq(smtp_sink_count(sink), 0);
	assert_row(id, "pending", "1", 0);

	sql_exec("UPDATE outbox_email SET next_attempt_at = now() WHERE id = $1", id, NULL);
	deliver_once_ok();
	ck_assert_ptr_nonnull(smtp_sink_wait(sink, 0, WAIT_MS));
	assert_row(id, "sent", "2", 1);
	free(id);
	smtp_sink_stop(sink);
}
END_TEST

/* The relay requires AUTH and offers one mechanism; the configured
 * credentials get the message through. */
static const char *const auth_mechs[] = { "PLAIN", "LOGIN" };

START_TEST(smtp_auth_delivers)
{
	struct smtp_sink_opts so = { .user = SMTP_USER, .password = SMTP_PASSWORD,
	    .auth_mechs = auth_mechs[_i] };
	struct smtp_sink *sink = sink_start(&so);
	const struct smtp_msg *m;
	char code[7];

	enqueue("auth@example.test", "s", "code 555666");
	deliver_once_ok();
	ck_assert_msg((m = smtp_sink_wait(sink, 0, WAIT_MS)) != NULL, "AUTH %s: nothing arrived",
	    auth_mechs[_i]);
	ck_assert_int_eq(m->authed, 1);
	ck_assert_uint_eq(smtp_sink_auths(sink), 1);
	ck_assert_int_eq(smtp_msg_code(m, code), 0);
	ck_assert_str_eq(code, "555666");
	smtp_sink_stop(sink);
}
END_TEST

/* Wrong credentials (535) are the relay's setup, not the message's fault:
 * retried, never failed at once, and the password is not in last_error. */
START_TEST(smtp_auth_refused_retries)
{
	struct smtp_sink_opts so = { .user = SMTP_USER, .password = "another-password" };
	struct smtp_sink *sink = sink_start(&so);
	const char *to = "authfail@example.test";
	char *id, *v;

	id = queued(to, "code 777888");
	deliver_once_ok();
	ck_assert_uint_eq(smtp_sink_count(sink), 0);
	assert_row(id, "pending", "1", 0);
	v = last_error(id);
	ck_assert_msg(v != NULL && strstr(v, SMTP_PASSWORD) == NULL, "last_error: %s", v);
	free(v);
	free(id);
	smtp_sink_stop(sink);
}
END_TEST

/* 550 to RCPT is permanent: failed at the first attempt, sealed copy gone. */
START_TEST(smtp_550_fails_at_once)
{
	struct smtp_sink_opts so = { .reject_rcpt = "nobody" };
	struct smtp_sink *sink = sink_start(&so);
	const char *to = "nobody@example.test";
	char *id, *v;

	id = queued(to, "code 121212");
	deliver_once_ok();
	ck_assert_uint_eq(smtp_sink_count(sink), 0);
	assert_row(id, "failed", "1", 1);
	v = last_error(id);
	ck_assert_msg(v != NULL && strstr(v, "550") != NULL, "last_error: %s", v);
	free(v);
	free(id);
	smtp_sink_stop(sink);
}
END_TEST

/* One connection serves the batch; a message the relay refuses does not
 * spoil the transaction of the next one. */
START_TEST(smtp_refused_message_spoils_nothing)
{
	struct smtp_sink_opts so = { .reject_rcpt = "nobody" };
	struct smtp_sink *sink = sink_start(&so);
	const struct smtp_msg *m;
	char *bad, *good;

	enqueue("nobody@example.test", "s", "code 161616");
	enqueue("somebody@example.test", "s", "code 171717");
	bad = row_id("nobody@example.test");
	good = row_id("somebody@example.test");
	deliver_once_ok();
	assert_row(bad, "failed", "1", 1);
	assert_row(good, "sent", "1", 1);
	ck_assert_ptr_nonnull(m = smtp_sink_wait(sink, 0, WAIT_MS));
	ck_assert_str_eq(m->rcpts[0], "somebody@example.test");
	free(bad);
	free(good);
	smtp_sink_stop(sink);
}
END_TEST

/* A transient failure of attempt 8 is final. */
START_TEST(smtp_last_attempt_fails)
{
	struct smtp_sink_opts so = { .fail_data = 1 };
	struct smtp_sink *sink = sink_start(&so);
	const char *to = "last@example.test";
	char *id;

	id = queued(to, "code 343434");
	sql_exec("UPDATE outbox_email SET attempts = 7 WHERE id = $1", id, NULL);
	deliver_once_ok();
	assert_row(id, "failed", "8", 1);
	free(id);
	smtp_sink_stop(sink);
}
END_TEST

/* A sealed message bound to another row does not open there: that row
 * fails ("cannot unseal") and is never sent; its neighbour goes. */
START_TEST(smtp_unsealable_row_fails)
{
	struct smtp_sink_opts so = { 0 };
	struct smtp_sink *sink = sink_start(&so);
	const struct smtp_msg *m;
	char *a, *b, *v;

	enqueue("a@example.test", "s", "code 101010");
	enqueue("b@example.test", "s", "code 202020");
	a = row_id("a@example.test");
	b = row_id("b@example.test");
	sql_exec("UPDATE outbox_email SET sealed = (SELECT sealed FROM outbox_email"
	    " WHERE id = $2) WHERE id = $1", a, b);
	deliver_once_ok();
	assert_row(a, "failed", "1", 1);
	v = last_error(a);
	ck_assert_str_eq(v, "cannot unseal");
	free(v);
	assert_row(b, "sent", "1", 1);
	ck_assert_ptr_nonnull(m = smtp_sink_wait(sink, 0, WAIT_MS));
	ck_assert_str_eq(m->rcpts[0], "b@example.test");
	ck_assert_uint_eq(smtp_sink_count(sink), 1);
	free(a);
	free(b);
	smtp_sink_stop(sink);
}
END_TEST

/* A row another deliverer holds is left alone until its lease ends (the
 * holder died): then it is claimed again and sent. */
START_TEST(smtp_lease_is_respected)
{
	struct smtp_sink_opts so = { 0 };
	struct smtp_sink *sink = sink_start(&so);
	const char *to = "lease@example.test";
	char *id;

	id = queued(to, "code 565656");
	sql_exec("UPDATE outbox_email SET attempts = 1,"
	    " lease_until = now() + interval '1 hour' WHERE id = $1", id, NULL);
	deliver_once_ok();
	ck_assert_uint_eq(smtp_sink_count(sink), 0);
	assert_row(id, "pending", "1", 0);

	sql_exec("UPDATE outbox_email SET lease_until = now() - interval '1 second'"
	    " WHERE id = $1", id, NULL);
	deliver_once_ok();
	ck_assert_ptr_nonnull(smtp_sink_wait(sink, 0, WAIT_MS));
	assert_row(id, "sent", "2", 1);
	free(id);
	smtp_sink_stop(sink);
}
END_TEST

/*
 * A long-running bds-deliver polls only every 60 s here, so the second
 * message can only arrive in time through NOTIFY. The first one proves it
 * is up (it LISTENs before its first claim). SIGTERM then ends it with 0.
 */
START_TEST(smtp_long_running_wakes_on_notify)
{
	static const char *const args[] = { "--poll-ms", "60000", NULL };
	struct smtp_sink_opts so = { 0 };
	struct smtp_sink *sink = sink_start(&so);
	const struct smtp_msg *m;
	char code[7];

	ck_assert_msg(harness_deliver_start(args) == 0, "%s", harness_error());
	enqueue("first@example.test", "s", "code 131313");
	ck_assert_msg(smtp_sink_wait(sink, 0, 10000) != NULL, "the first message did not come");
	harness_sleep_ms(300);		/* it is waiting now */
	enqueue("second@example.test", "s", "code 242424");
	ck_assert_msg((m = smtp_sink_wait(sink, 1, 3000)) != NULL,
	    "the second message did not come within 3 s: no wake-up on NOTIFY");
	ck_assert_int_eq(smtp_msg_code(m, code), 0);
	ck_assert_str_eq(code, "242424");
	ck_assert_msg(harness_deliver_stop() == 0, "%s", harness_error());
	ck_assert_int_eq(harness_deliver_pid(), 0);
	smtp_sink_stop(sink);
}
END_TEST

/* Two deliverers at once share the queue and never send a message twice. */
#define MANY 50

static void *
once_thread(void *arg)
{
	*(int *)arg = harness_deliver_once();
	return NULL;
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(smtp_two_deliverers_never_double_send)
{
	struct smtp_sink_opts so = { 0 };
	struct smtp_sink *sink = sink_start(&so);
	char *ids[MANY], *v;
	pthread_t t[2];
	int rc[2] = { -1, -1 };
	size_t i;

	ck_assert_int_eq(db_begin(db), 0);
	for (i = 0; i < MANY; i++) {
		char to[64], text[64];

		snprintf(to, sizeof(to), "many%zu@example.test", i);
		snprintf(text, sizeof(text), "code %06zu", 900000 + i);
		ck_assert_int_eq(mail_enqueue(&req, "test", to, "s", text), 0);
	}
	ck_assert_int_eq(db_commit(db), 0);
	arena_reset(&arena);

	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, once_thread, &rc[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ck_assert_msg(rc[0] == 0 && rc[1] == 0, "exit statuses %d %d", rc[0], rc[1]);
	/* both have exited: everything either sent has arrived */
	ck_assert_uint_eq(smtp_sink_count(sink), MANY);
	for (i = 0; i < MANY; i++) {
		const struct smtp_msg *m = smtp_sink_wait(sink, i, 0);

		ck_assert_ptr_nonnull(m);
		ck_assert_ptr_nonnull(ids[i] = smtp_msg_header(m, "Message-ID"));
	}
	qsort(ids, MANY, sizeof(ids[0]), str_cmp);
	for (i = 1; i < MANY; i++)
		ck_assert_msg(strcmp(ids[i - 1], ids[i]) != 0, "%s sent twice", ids[i]);
	for (i = 0; i < MANY; i++)
		free(ids[i]);
	v = sql_value("SELECT count(*) FILTER (WHERE status = 'sent' AND attempts = 1)"
	    " || '/' || count(*) FROM outbox_email", NULL, NULL);
	ck_assert_str_eq(v, "50/50");
	free(v);
	smtp_sink_stop(sink);
}
END_TEST

/* ------------------------------------------------------------------ */
/* spool                                                               */

static void
spool_stack(void)
{
	struct harness_opts o;

	harness_opts_defaults(&o);
	o.mail = "spool";
	harness_fixture_start(&o);
}

START_TEST(spool_writes_eml_0600)
{
	const char *to = "spool@example.test";
	struct smtp_msg msg = { 0 };
	struct dirent *de;
	struct stat st;
	char *id, path[1024], *data, code[7];
	size_t files = 0;
	DIR *d;

	enqueue(to, "Spool test", "Your code is 868686.\n");
	id = row_id(to);
	deliver_once_ok();
	snprintf(path, sizeof(path), "%s/%s.eml", harness_mail_dir(), id);
	ck_assert_msg(stat(path, &st) == 0, "%s: missing", path);
	ck_assert_msg((st.st_mode & 0777) == 0600, "%s has mode %o", path,
	    (unsigned)(st.st_mode & 0777));
	ck_assert_ptr_nonnull(data = harness_slurp(path));
	msg.data = data;
	msg.len = strlen(data);
	ck_assert_int_eq(smtp_msg_code(&msg, code), 0);
	ck_assert_str_eq(code, "868686");
	ck_assert_str_eq(smtp_msg_body(&msg), "Your code is 868686.\r\n");
	free(data);
	assert_row(id, "sent", "1", 1);
	/* only the message: no temp file left behind */
	ck_assert_ptr_nonnull(d = opendir(harness_mail_dir()));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		ck_assert_msg(strcmp(de->d_name, strrchr(path, '/') + 1) == 0,
		    "unexpected file %s in the spool", de->d_name);
		files++;
	}
	closedir(d);
	ck_assert_uint_eq(files, 1);
	free(id);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *
mail_suite(void)
{
	Suite *s = suite_create("e2e_mail");
	TCase *tc;

	tc = tcase_create("format");
	tcase_add_loop_test(tc, format_valid, 0, sizeof(fmt_valid) / sizeof(fmt_valid[0]));
	tcase_add_loop_test(tc, format_refused, 0, sizeof(fmt_refused) / sizeof(fmt_refused[0]));
	tcase_add_test(tc, format_encoded_names);
	tcase_add_test(tc, format_long_lines);
	tcase_add_test(tc, format_long_ascii_subject);
	tcase_add_test(tc, find_code);
	suite_add_tcase(s, tc);

	tc = tcase_create("smtp");
	tcase_add_unchecked_fixture(tc, smtp_stack, harness_fixture_stop);
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, smtp_delivers_sealed_message);
	tcase_add_test(tc, smtp_rolled_back_sends_nothing);
	tcase_add_test(tc, smtp_451_retries_later);
	tcase_add_loop_test(tc, smtp_auth_delivers, 0, sizeof(auth_mechs) / sizeof(auth_mechs[0]));
	tcase_add_test(tc, smtp_auth_refused_retries);
	tcase_add_test(tc, smtp_550_fails_at_once);
	tcase_add_test(tc, smtp_refused_message_spoils_nothing);
	tcase_add_test(tc, smtp_last_attempt_fails);
	tcase_add_test(tc, smtp_unsealable_row_fails);
	tcase_add_test(tc, smtp_lease_is_respected);
	tcase_add_test(tc, smtp_long_running_wakes_on_notify);
	tcase_add_test(tc, smtp_two_deliverers_never_double_send);
	suite_add_tcase(s, tc);

	tc = tcase_create("spool");
	tcase_add_unchecked_fixture(tc, spool_stack, harness_fixture_stop);
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, spool_writes_eml_0600);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return harness_run_suite(mail_suite());
}
