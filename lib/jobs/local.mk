# lib/jobs/: what bds-jobs runs: the kinds table on the leased queue, the connectors.
lib_libbds_a_SOURCES += \
	%reldir%/jobs.c \
	%reldir%/jobs.h \
	%reldir%/jobs_conv.c \
	%reldir%/jobs_conv.h \
	%reldir%/jobs_loop.c \
	%reldir%/connectors/connector.c \
	%reldir%/connectors/connector.h \
	%reldir%/connectors/sandbox.c \
	%reldir%/connectors/sandbox_pdf.c \
	%reldir%/jobs_connect.c \
	%reldir%/jobs_reconcile.c \
	%reldir%/jobs_retrieval.c
# the portal connector and what the jobs keep for connectors
lib_libbds_a_SOURCES += \
	%reldir%/connectors/connector_db.c \
	%reldir%/connectors/portal.c \
	%reldir%/connectors/portal.h \
	%reldir%/connectors/portal_parse.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/jobs_module.c
# the biller logo fetch (lib/billers stores it)
lib_libbds_a_SOURCES += %reldir%/jobs_logos.c
# a bill import's extraction: bds-extract run in a sandboxed child
lib_libbds_a_SOURCES += %reldir%/jobs_extract.c
