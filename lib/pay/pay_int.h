#ifndef BDS_PAY_INT_H
#define BDS_PAY_INT_H
/* Inside lib/pay/: what its files share. */
#include <stddef.h>

struct config;
struct req;
struct vault_ring;
struct json_object;

#define PAY_PT		"pt"	/* id prefixes (DOMAIN "Identifiers") */
#define PAY_PM		"pm"
#define PAY_PAY		"pay"

/*
 * What is still owed on a bill (SQL over the bills row b., b the alias
 * with its dot): 0 once PAID, else what the source or a partial payment
 * left, else the amount due (the total when none is given).
 */
#define PAY_OWED(b) \
	"CASE WHEN " b "status = 'PAID' THEN 0 ELSE coalesce(" b "balance_minor," \
	" CASE WHEN " b "amount_due_minor > 0 THEN " b "amount_due_minor" \
	" ELSE " b "total_minor END) END"

/*
 * Whose the request is: the end user and what the bearer binds. An API
 * key binds nothing (user: the one the request names); a link access
 * token its link (and the link's user); a pay token its user, and its
 * bill, payment method and amount when it names them.
 */
struct pay_bearer {
	const char	*user;		/* NULL: an API key, the request names one */
	const char	*link_id;	/* a link access token's link */
	const char	*bill_id;	/* a pay token's bound bill, or NULL */
	const char	*method_id;	/* a pay token's bound method, or NULL */
	const char	*amount_minor;	/* a pay token's amount, or NULL */
	const char	*currency;
};
/*
 * The credential's bill id (its client and environment, not deleted): 1
 * with *res, one row of the columns below, 0 none (or no bill id at all),
 * -1 database failure.
 */
enum { B_USER, B_CURRENCY, B_STATUS, B_OWED, B_LINK };
struct pg_result;
int	 pay_bill_find(struct req *, const char *id, struct pg_result **res);
/* The end user of the credential's payment method id (not deleted): 1 with
 * *user, 0 none, -1 database failure. */
int	 pay_method_user(struct req *, const char *id, const char **user);

/* Fill b for r's credential: 0, or the status written (a database failure). */
int	 pay_bearer(struct req *, struct pay_bearer *b);

/*
 * The card numbers' key ring of the config (core/vault.h): pay_pan_key
 * under pay_pan_key_id, the old keys of pay_pan_keys_old, and the key
 * derived from secret_key (in derived, which must outlive the ring), the
 * current one while no pay_pan_key is configured.
 */
void	 pay_pan_ring(const struct config *, struct vault_ring *, unsigned char derived[32]);
/* A 32-byte key for purpose derived from secret_key. */
void	 pay_derived_key(const struct config *, const char *purpose, unsigned char out[32]);

/* 1 when execution is enabled (pay.execution = sandbox). */
int	 pay_execution_enabled(const struct config *);

/* The entity a one-row result's first column holds (JSON text), parsed
 * (arena), or NULL: no row, or not JSON. */
struct json_object *pay_row_json(struct req *, struct pg_result *);

#endif
