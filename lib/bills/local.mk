# lib/bills/: bills: the store the connectors' statements land in.
lib_libbds_a_SOURCES += \
	%reldir%/bills.h \
	%reldir%/bills_store.c \
	%reldir%/bills_sync.h %reldir%/bills_sync.c \
	%reldir%/bills_statement.h \
	%reldir%/bills_statement.c \
	%reldir%/bills_docs.c
# the bill read API (GET /v1/bills, the payments lists)
lib_libbds_a_SOURCES += \
	%reldir%/bills_api.h \
	%reldir%/bills_api.c
# the bill status lifecycle
lib_libbds_a_SOURCES += \
	%reldir%/bills_status.h \
	%reldir%/bills_status.c \
	%reldir%/bills_status_api.c \
	%reldir%/bills_status_store.c
# bills from bill imports
lib_libbds_a_SOURCES += %reldir%/bills_import.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/bills_module.c
# the bills an import may duplicate (asked by lib/imports)
lib_libbds_a_SOURCES += %reldir%/bills_dupes.c
# the usage metric computed from its rows (lib/metering)
lib_libbds_a_SOURCES += %reldir%/bills_usage.c
