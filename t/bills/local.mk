# Unit suites of lib/bills/ (one Check program each; sources by name).
UNIT_SUITES += %reldir%/check_docs
