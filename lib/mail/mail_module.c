/* The mail module: the mail queue and how bds-deliver sends it. */
#include <stddef.h>

#include "core/config.h"
#include "core/db.h"
#include "core/module.h"
#include "mail/mail.h"

static const char *const transports[] = { "spool", "smtp", NULL };

#define S struct mail_settings
const struct module mail_module = {
	.name = "mail",
	.stmt_sets = MODULE_SETS(&mail_stmt_set),
	.settings = (const struct config_key[]){
		CONFIG_ONEOF_KEY(S, mail_transport, "spool", transports),
		CONFIG_STR_KEY(S, mail_spool_dir, "var/mail"),
		CONFIG_STR_KEY(S, mail_from, "Bill Data Service <no-reply@bds.example>"),
		CONFIG_STR_KEY(S, smtp_url, "smtp://127.0.0.1:25"),
		CONFIG_STR_KEY(S, smtp_user, ""),
		CONFIG_STR_KEY(S, smtp_password, ""),
		CONFIG_INT_KEY(S, smtp_timeout, "30", 0, 0),
		{ NULL }
	},
	.settings_size = sizeof(S),
};
#undef S
