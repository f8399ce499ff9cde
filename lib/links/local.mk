# lib/links/: links (rows, the entity, the API-key routes), sandbox account
# links; the connect flow appends its files.
lib_libbds_a_SOURCES += \
	%reldir%/links.h \
	%reldir%/links_entity.h \
	%reldir%/links.c \
	%reldir%/links_api.c \
	%reldir%/links_sandbox.c \
	%reldir%/links_connect.h %reldir%/links_tokens.c %reldir%/links_sessions.c \
	%reldir%/links_exchange.c \
	%reldir%/links_attempts.h %reldir%/links_attempts.c
# link access tokens (AUTH_LINK) for the bill read API
lib_libbds_a_SOURCES += \
	%reldir%/links_auth.h \
	%reldir%/links_auth.c
# the credential vault; scheduled refresh, limits, operators
lib_libbds_a_SOURCES += \
	%reldir%/links_vault.c \
	%reldir%/links_refresh.c
# the connect page's frame policy and session extras
lib_libbds_a_SOURCES += \
	%reldir%/links_page.h \
	%reldir%/links_page.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/links_module.c
# the same biller login linked again
lib_libbds_a_SOURCES += %reldir%/links_same.h
# the usage metric computed from its rows (lib/metering)
lib_libbds_a_SOURCES += %reldir%/links_usage.c
