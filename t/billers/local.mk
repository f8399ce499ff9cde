# Unit suites of lib/billers/ (one Check program each; sources by name).
UNIT_SUITES += %reldir%/check_billers_csv
UNIT_SUITES += %reldir%/check_billers_logos
