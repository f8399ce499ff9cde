# lib/iam/: developer accounts, clients and client secrets.
lib_libbds_a_SOURCES += \
	%reldir%/iam.h \
	%reldir%/iam_account.c \
	%reldir%/iam_auth.c \
	%reldir%/iam_clients.c \
	%reldir%/iam_clients.h \
	%reldir%/iam_common.c \
	%reldir%/iam_ops.c \
	%reldir%/iam_ops.h \
	%reldir%/iam_secrets.c \
	%reldir%/iam_throttle.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/iam_module.c
