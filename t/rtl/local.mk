# Unit suites of lib/rtl/ (one Check program each; sources by name).
UNIT_SUITES += %reldir%/check_canon
