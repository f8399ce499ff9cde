# Unit suites of lib/jobs/ (one Check program each; sources by name).
UNIT_SUITES += %reldir%/check_sandbox
# issue 12 portal: the portal connector's answer validation
UNIT_SUITES += %reldir%/check_portal
