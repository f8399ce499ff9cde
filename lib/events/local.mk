# lib/events/: events: the outbox (events_emit), the type catalogue and wire envelope, the activity feed.
lib_libbds_a_SOURCES += \
	%reldir%/activity.c \
	%reldir%/activity.h \
	%reldir%/events.c \
	%reldir%/events.h \
	%reldir%/events_sweep.c \
	%reldir%/events_sweep.h \
	%reldir%/events_wire.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/events_module.c
