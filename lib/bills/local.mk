# lib/bills/: bills: the store the connectors' statements land in.
lib_libbds_a_SOURCES += \
	%reldir%/bills.h \
	%reldir%/bills_store.c
# issue 11 H3: the status lifecycle
lib_libbds_a_SOURCES += \
	%reldir%/bills_status.h \
	%reldir%/bills_status.c
