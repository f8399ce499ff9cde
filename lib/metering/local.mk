# lib/metering/: usage metering, the read side (the counting is core/meter.c).
lib_libbds_a_SOURCES += \
	%reldir%/metering.h \
	%reldir%/metering_store.c \
	%reldir%/metering_api.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/metering_module.c
