# lib/mail/: e-mail: the sealed outbox and its SMTP / spool sender.
lib_libbds_a_SOURCES += \
	%reldir%/mail.c \
	%reldir%/mail.h
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/mail_module.c
