# lib/webhooks/: webhook subscriptions (both APIs), signing and the webhook sender.
lib_libbds_a_SOURCES += \
	%reldir%/webhooks.h \
	%reldir%/webhooks_core.c \
	%reldir%/webhooks_deliver.c \
	%reldir%/webhooks_deliver.h \
	%reldir%/webhooks_endpoints.c \
	%reldir%/webhooks_iam.c \
	%reldir%/webhooks_inbox.c \
	%reldir%/webhooks_sign.c \
	%reldir%/webhooks_sign.h
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/webhooks_module.c
# the usage metric computed from its rows (lib/metering)
lib_libbds_a_SOURCES += %reldir%/webhooks_usage.c
