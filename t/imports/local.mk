# Unit suites of lib/imports/ (one Check program each; sources by name).
# the field rules of bill extraction (extract_fields*.c)
UNIT_SUITES += %reldir%/check_fields
