# lib/rtl/: requests to link, biller discovery, onboarding URL canonical form.
lib_libbds_a_SOURCES += \
	%reldir%/rtl.h \
	%reldir%/rtl_int.h \
	%reldir%/rtl.c \
	%reldir%/rtl_discovery.c \
	%reldir%/rtl_jobs.c \
	%reldir%/rtl_jobs.h \
	%reldir%/rtl_onboard.c \
	%reldir%/rtl_canon.h \
	%reldir%/rtl_canon.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/rtl_module.c
