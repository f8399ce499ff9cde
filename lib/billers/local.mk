# lib/billers/: the biller catalog: its CSV import, the list/search/get API, lookups for links and jobs.
lib_libbds_a_SOURCES += \
	%reldir%/billers.c \
	%reldir%/billers.h \
	%reldir%/billers_admin.c \
	%reldir%/billers_cache.c \
	%reldir%/billers_cache.h \
	%reldir%/billers_csv.c \
	%reldir%/billers_csv.h \
	%reldir%/billers_logos.c \
	%reldir%/billers_logos.h
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/billers_module.c
