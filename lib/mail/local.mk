# lib/mail/: e-mail: the sealed outbox and its SMTP / spool sender.
lib_libbds_a_SOURCES += \
	%reldir%/mail.c \
	%reldir%/mail.h
