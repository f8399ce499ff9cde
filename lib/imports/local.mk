# lib/imports/: bill imports: the store and its one status write.
lib_libbds_a_SOURCES += \
	%reldir%/imports.h \
	%reldir%/imports_int.h \
	%reldir%/imports_store.c
# the routes: create, complete_upload, GET, DELETE; the upload target and
# the source document
lib_libbds_a_SOURCES += \
	%reldir%/imports_api.h \
	%reldir%/imports_api.c \
	%reldir%/imports_upload.c
# review and commit: the review changes (pure), PATCH review_draft, confirm,
# imports_commit
lib_libbds_a_SOURCES += \
	%reldir%/imports_changes.h \
	%reldir%/imports_changes.c \
	%reldir%/imports_review.h \
	%reldir%/imports_review.c
# the module's descriptor (core/module.h)
lib_libbds_a_SOURCES += %reldir%/imports_module.c
# what bds-jobs runs: the extraction's outcome, the portal's PDF-only
# statements, the sweeps (expiry, document removal)
lib_libbds_a_SOURCES += \
	%reldir%/imports_jobs.h \
	%reldir%/imports_extracted.c \
	%reldir%/imports_portal.c \
	%reldir%/imports_sweep.c
# the usage metric computed from its rows (lib/metering)
lib_libbds_a_SOURCES += %reldir%/imports_usage.c
