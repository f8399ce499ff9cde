# lib/jobs/: the bds-jobs runner, its job kinds and the connectors.
lib_libbds_a_SOURCES += \
	%reldir%/jobs_connect.c
