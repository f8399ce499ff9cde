#ifndef BDS_MAIL_H
#define BDS_MAIL_H
/*
 * E-mail through the transactional outbox: the API queues a message in the
 * same transaction as the change that causes it; bds-deliver sends it over
 * SMTP (or writes a .eml file in spool mode) and retries on failure. The
 * message is sealed at rest (crypto_seal under secret_key, ad = row id):
 * codes never sit in plaintext in the database.
 */
#include <stddef.h>
#include <time.h>

#include "core/config.h"

struct arena;
struct config;
struct queue_sender;
struct req;
struct db_stmt_set;

/*
 * Queue one message to `to` inside the caller's transaction (db_begin done
 * by the caller; NOTIFY bds_outbox wakes bds-deliver at commit). kind names
 * the message for the log and metrics ("signup_confirm", "verify_email",
 * "password_reset"). 0 ok, -1 database failure (answer api_db_error), or a
 * message mail_format refuses (logged; validate addresses before).
 */
int	 mail_enqueue(struct req *, const char *kind, const char *to,
	    const char *subject, const char *text);

/*
 * The RFC 5322 message: CRLF lines, From/To/Subject (RFC 2047 encoded when
 * not ASCII)/Date/Message-ID/MIME headers, UTF-8 text body with every line
 * ending made CRLF and lines kept under 998 octets. Dot-stuffing is the
 * SMTP transport's job (libcurl does it); the result is the .eml as a
 * reader sees it. In the arena; NULL when a header value holds a control
 * character (header injection) or an address is not ASCII.
 */
char	*mail_format(struct arena *, const char *from, const char *to,
	    const char *subject, const char *text, const char *message_id,
	    time_t date);

/*
 * bds-deliver's e-mail queue: claims due outbox_email rows, opens each and
 * sends it by cfg's mail_transport: "smtp" with libcurl to smtp_url
 * (STARTTLS when offered, AUTH when smtp_user is set), or "spool", which
 * writes <mail_spool_dir>/<id>.eml (mode 0600, atomically). Retries after
 * 30 s, 2 min, 10 min, 30 min, 2 h, 6 h, 6 h; fails after attempt 8 or at
 * once on a permanent (5xx) reply. cfg must outlive the sender. The
 * queue_kind shape: 0 (it has no setting to refuse).
 */
int	 mail_sender_init(struct queue_sender *, const struct config *cfg,
	    char *err, size_t errlen);

extern const struct db_stmt_set mail_stmt_set;

/* The module's settings (config keys of the same names). */
struct mail_settings {
	char	*mail_transport;	/* spool (write .eml files) | smtp */
	char	*mail_spool_dir;	/* spool: where .eml files go */
	char	*mail_from;		/* From: address */
	char	*smtp_url;		/* smtp://host:port or smtps://host:port */
	char	*smtp_user;		/* "" = no AUTH */
	char	*smtp_password;
	int	 smtp_timeout;		/* seconds per message */
};

/* The module (mail_module.c) and its settings block (core/config.h). */
extern const struct module mail_module;
static inline const struct mail_settings *
mail_settings(const struct config *c)
{
	return config_module(c, &mail_module);
}

#endif
