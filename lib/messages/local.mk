# lib/messages/: customer messages a client sends its end users, the
# client's suppression list and the end users' consents.
lib_libbds_a_SOURCES += \
	%reldir%/messages.h \
	%reldir%/messages_int.h \
	%reldir%/messages_store.c \
	%reldir%/messages_api.c
# its usage metric (lib/metering): messages_sent
lib_libbds_a_SOURCES += %reldir%/messages_usage.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/messages_module.c
