# The module list: every folder of lib/, each once, lower layers first.
# A line includes the module's local.mk; the words after its '#' are the
# modules it may include besides core/ and events/events.h (the arrows
# scripts/check-deps enforces). The build writes lib/modules.c, the
# modules[] array of core/module.h, from these lines (scripts/modules-c):
# a module's descriptor, <name>_module in its <name>_module.c, is listed
# here and nowhere else.
include %reldir%/core/local.mk		# core:
include %reldir%/events/local.mk	# events:
include %reldir%/mail/local.mk		# mail:
include %reldir%/iam/local.mk		# iam: mail
include %reldir%/webhooks/local.mk	# webhooks: events iam
include %reldir%/billers/local.mk	# billers:
include %reldir%/links/local.mk		# links: billers
include %reldir%/bills/local.mk		# bills: links
include %reldir%/imports/local.mk	# imports: bills billers
include %reldir%/rtl/local.mk		# rtl: links billers
include %reldir%/insights/local.mk	# insights: bills links
include %reldir%/pay/local.mk		# pay: bills links
include %reldir%/messages/local.mk	# messages: billers
include %reldir%/metering/local.mk	# metering: iam
include %reldir%/jobs/local.mk		# jobs: links bills billers imports
include %reldir%/sandboxes/local.mk	# sandboxes: iam webhooks links bills
