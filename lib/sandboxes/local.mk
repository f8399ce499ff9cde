# lib/sandboxes/: anonymous sandboxes (POST /v1/sandboxes), their inbox, the
# claim, the evaluation proof and the expiry sweeps.
lib_libbds_a_SOURCES += \
	%reldir%/sandboxes.h \
	%reldir%/sandboxes_api.c \
	%reldir%/sandboxes.c \
	%reldir%/sandboxes_store.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/sandboxes_module.c
