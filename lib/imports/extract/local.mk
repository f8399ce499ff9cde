# lib/imports/extract/: bill extraction. The field rules are pure code
# (json-c and core/money only) and go into libbds.a: bds-api re-checks a
# reviewed draft with them.
lib_libbds_a_SOURCES += \
	%reldir%/extract.h \
	%reldir%/extract_fields.h \
	%reldir%/extract_fields.c \
	%reldir%/extract_fields_check.c \
	%reldir%/extract_fields_text.c
