# lib/insights/: insights, the engine in bds-jobs and the API.
# the rules: pure functions over a link's bill history (insights_rules.h)
lib_libbds_a_SOURCES += \
	%reldir%/insights_rules.h \
	%reldir%/insights_rules.c
# the rows (the one status write and its events), the engine, the routes
lib_libbds_a_SOURCES += \
	%reldir%/insights.h \
	%reldir%/insights_int.h \
	%reldir%/insights_store.c \
	%reldir%/insights.c \
	%reldir%/insights_api.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/insights_module.c
