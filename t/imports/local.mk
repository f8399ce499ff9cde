# Unit suites of lib/imports/ (one Check program each; sources by name).
# the field rules of bill extraction (extract_fields*.c)
UNIT_SUITES += %reldir%/check_fields
# the review changes (lib/imports/imports_changes.c): every key, operation
# and error, and their application to a draft
UNIT_SUITES += %reldir%/check_changes
