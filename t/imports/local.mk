# t/imports/: the bill imports module's suites (included after TESTS is
# set, so that the script's += appends).
# the field rules of bill extraction (extract_fields*.c)
UNIT_SUITES += %reldir%/check_fields
# bds-extract on hostile documents (t/imports/hostile.py) and good ones.
TESTS += %reldir%/extract.test
EXTRA_DIST += %reldir%/extract.test %reldir%/hostile.py
# the document reader's own checks (sandbox, archives, headers, lines JSON):
# the only unit suite that links the reader's archive
UNIT_SUITES += %reldir%/check_extract_doc
%canon_reldir%_check_extract_doc_LDADD = $(BDS_EXTRACT_LIBS) $(CHECK_LIBS)
# the review changes (lib/imports/imports_changes.c): every key, operation
# and error, and their application to a draft
UNIT_SUITES += %reldir%/check_changes
