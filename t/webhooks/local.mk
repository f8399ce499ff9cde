# Unit suites of lib/webhooks/ (one Check program each; sources by name).
UNIT_SUITES += %reldir%/check_webhooks_sign
