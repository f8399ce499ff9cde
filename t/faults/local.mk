# Fault suites: the stack under failover, killed processes, a full disk and
# hostile connections. Each is an end-to-end suite (t/e2e's harness, real
# PostgreSQL, nginx and workers on loopback); the short form of each runs in
# `make check`, the long variants with BDS_FAULTS_LONG=1 (scripts/test --long).
# Shared pieces of these suites go into their own files here, named below.

# -- high availability (pg_auto_failover: monitor, primary, secondary) --

# -- killed processes, a full disk, slow and idle connections, the soak --
