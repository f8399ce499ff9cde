# lib/pay/: pay tokens, payment methods (cards, sealed), payment attempts
# and the sandbox processor of bds-jobs.
# the cards: pure (pay_card.h)
lib_libbds_a_SOURCES += \
	%reldir%/pay_card.h \
	%reldir%/pay_card.c
# the routes and their rows, the processor
lib_libbds_a_SOURCES += \
	%reldir%/pay.h \
	%reldir%/pay_int.h \
	%reldir%/pay_tokens.c \
	%reldir%/pay_methods.c \
	%reldir%/pay_payments.c \
	%reldir%/pay_process.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/pay_module.c
